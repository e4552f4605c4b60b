// The snapshot viewer, one implementation for the HTML report and the
// dashboard (package report inlines it into both pages): a failed
// snapshot's baseline, current and diff side by side, a slider, an onion
// skin, the diff alone, the changed regions outlined with the element
// named, 1:1 pixels, and the keys n and p between failures. It shows the
// image URLs it is given: the report's paths relative to its page, the
// dashboard's blob: URLs (an <img> cannot send the bearer token, so the
// dashboard fetches each image itself). Its style is viewer.css.
const viewer = (function () {
  "use strict";

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") e.className = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : v);
    }
    for (const k of kids) if (k !== undefined && k !== null) e.append(k);
    return e;
  }

  // An image with its caption: its natural size once loaded, or that it
  // is missing.
  function figure(label, src, regions, ignored) {
    const cap = el("figcaption", {}, label + " …");
    if (!src) {
      cap.textContent = label + ": no image";
      return el("figure", {}, cap);
    }
    const img = el("img", { src, alt: label });
    img.addEventListener("load", () => { cap.textContent = label + " " + img.naturalWidth + "×" + img.naturalHeight; });
    img.addEventListener("error", () => { cap.textContent = label + ": image missing (" + src + ")"; cap.classList.add("bad"); });
    const stage = el("div", { class: "stage" }, img);
    if (regions) outline(stage, img, regions);
    if (ignored) outline(stage, img, ignored, "ignored");
    return el("figure", {}, stage, cap);
  }

  // outline draws the changed regions over an image, in percent of its
  // natural size so they follow it when it is scaled; kind "ignored"
  // draws the regions the comparison left out instead, dashed and
  // unlabelled.
  function outline(stage, img, regions, kind) {
    const draw = () => {
      const w = img.naturalWidth, h = img.naturalHeight;
      if (!w || !h) return;
      const named = new Set();
      for (const r of regions) {
        const box = el("div", { class: kind === "ignored" ? "region ignored" : "region", title: kind === "ignored" ? "left out of the comparison" : null, style: "left:" + (100 * r.x / w) + "%;top:" + (100 * r.y / h) + "%;width:" + (100 * r.width / w) + "%;height:" + (100 * r.height / h) + "%" });
        // A label above the box, or inside it when the box touches the
        // top of the image.
        if (r.element && !named.has(r.element)) box.append(el("span", { class: r.y < 20 ? "inside" : "" }, r.element));
        named.add(r.element);
        stage.append(box);
      }
    };
    if (img.complete) draw(); else img.addEventListener("load", draw);
  }

  // compare is the slider (drag to reveal the baseline over the current
  // image) or the onion skin (the baseline over it at an opacity).
  function compare(kind, images, regions, ignored) {
    const cur = el("img", { src: images.current, alt: "Current" });
    const base = el("img", { src: images.baseline, alt: "Baseline", class: "over" });
    const stage = el("div", { class: "stage" }, cur, base);
    const edge = el("div", { class: "edge" });
    if (kind === "slider") stage.append(edge);
    outline(stage, cur, regions);
    outline(stage, cur, ignored, "ignored");
    const range = el("input", { type: "range", min: "0", max: "100", value: "50", "aria-label": kind === "slider" ? "Reveal the baseline" : "Baseline opacity" });
    const apply = () => {
      const v = Number(range.value);
      if (kind === "slider") { base.style.clipPath = "inset(0 " + (100 - v) + "% 0 0)"; edge.style.left = v + "%"; }
      else base.style.opacity = String(v / 100);
    };
    range.addEventListener("input", apply);
    apply();
    const label = kind === "slider" ? "Slider: the baseline left of the line, the current image right of it" : "Onion skin: the baseline over the current image";
    return el("div", { class: kind }, el("div", {}, range, " ", el("span", { class: "dur" }, label)), stage);
  }

  // fill appends a snapshot's images to its panel, below the head the
  // page made: a thumbnail of the baseline when it passed, of the new
  // image when it has no baseline or adopted one, and for a failure the
  // modes with their tabs and the zoom, each mode's id the panel's id
  // and the mode ("snap-0-slider"). status is passed, failed, missing,
  // new or updated; images holds the URLs of baseline, current and diff;
  // regions are the mismatch's changed regions, ignored the rectangles
  // the comparison left out (outlined dashed on every image).
  function fill(panel, status, images, regions, ignored) {
    ignored = ignored || [];
    if (status === "passed") {
      panel.append(el("div", { class: "thumb" }, figure("Baseline", images.baseline, null, ignored)));
      return;
    }
    if (status !== "failed") {
      panel.append(el("div", { class: "thumb" }, figure(status === "missing" ? "Current" : "New", images.current, null, ignored)));
      return;
    }
    regions = regions || [];
    const views = el("div", { class: "views fit" });
    const modes = {
      side: el("div", { class: "side" }, figure("Baseline", images.baseline, null, ignored), figure("Current", images.current, regions, ignored), figure("Diff", images.diff, regions, ignored)),
      slider: compare("slider", images, regions, ignored),
      onion: compare("onion", images, regions, ignored),
      diff: el("div", {}, figure("Diff", images.diff, regions, ignored)),
    };
    for (const [k, v] of Object.entries(modes)) { v.id = panel.id + "-" + k; v.classList.add("mode"); if (k !== "side") v.classList.add("hidden"); views.append(v); }
    const tools = el("div", { class: "tools", role: "tablist" });
    const buttons = {};
    const show = (k) => {
      for (const [m, v] of Object.entries(modes)) v.classList.toggle("hidden", m !== k);
      for (const [m, b] of Object.entries(buttons)) b.setAttribute("aria-selected", String(m === k));
    };
    for (const [k, label] of [["side", "Side by side"], ["slider", "Slider"], ["onion", "Onion skin"], ["diff", "Diff only"]]) {
      buttons[k] = el("button", { role: "tab", "aria-selected": String(k === "side"), onclick: () => show(k) }, label);
      tools.append(buttons[k]);
    }
    const zoom = el("button", { "aria-pressed": "false", onclick: () => {
      const actual = views.classList.toggle("actual");
      views.classList.toggle("fit", !actual);
      zoom.setAttribute("aria-pressed", String(actual));
    } }, "1:1 pixels");
    tools.append(zoom);
    panel.append(tools, views);
  }

  // navigator moves between the panels of failures with the keys n and
  // p, and says where it is in nav. register adds a panel; failures are
  // the panels in order; reset forgets them (the dashboard shows another
  // run).
  function navigator(nav) {
    const failures = [];
    let at = -1;
    const visibleFailures = () => failures.filter(p => p.offsetParent !== null);
    function go(delta) {
      const list = visibleFailures();
      if (!list.length) return;
      const cur = list.indexOf(failures[at]);
      const next = cur < 0 ? (delta > 0 ? 0 : list.length - 1) : (cur + delta + list.length) % list.length;
      if (failures[at]) failures[at].classList.remove("current");
      at = failures.indexOf(list[next]);
      list[next].classList.add("current");
      list[next].scrollIntoView({ block: "center" });
      nav.textContent = "Failure " + (next + 1) + " of " + list.length + " · n/p to move";
    }
    function summary() {
      nav.textContent = failures.length ? failures.length + (failures.length === 1 ? " failure" : " failures") + " to review · n/p to move" : "nothing to review";
    }
    document.addEventListener("keydown", (e) => {
      if (e.ctrlKey || e.metaKey || e.altKey || /INPUT|TEXTAREA|SELECT/.test(e.target.tagName)) return;
      if (e.key === "n") go(1);
      else if (e.key === "p") go(-1);
    });
    return {
      failures,
      register(panel) { failures.push(panel); },
      go,
      summary,
      reset() { failures.length = 0; at = -1; },
    };
  }

  return { el, figure, outline, compare, fill, navigator };
})();
