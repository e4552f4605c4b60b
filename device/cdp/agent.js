// The in-page half of the device: installed in every document before its
// scripts run (Page.addScriptToEvaluateOnNewDocument), so each query, wait and
// describe costs one Runtime.evaluate round trip instead of one per poll.
(() => {
  if (window.__toolserver) return;

  const IMPLIED_ROLES = {
    a: (e) => (e.hasAttribute("href") ? "link" : ""),
    article: () => "article",
    aside: () => "complementary",
    button: () => "button",
    dialog: () => "dialog",
    form: () => "form",
    footer: () => "contentinfo",
    h1: () => "heading", h2: () => "heading", h3: () => "heading",
    h4: () => "heading", h5: () => "heading", h6: () => "heading",
    header: () => "banner",
    hr: () => "separator",
    img: (e) => (e.getAttribute("alt") === "" ? "presentation" : "img"),
    input: (e) => {
      const t = (e.getAttribute("type") || "text").toLowerCase();
      if (["button", "submit", "reset", "image"].includes(t)) return "button";
      if (t === "checkbox") return "checkbox";
      if (t === "radio") return "radio";
      if (t === "range") return "slider";
      if (t === "number") return "spinbutton";
      if (t === "search") return "searchbox";
      if (t === "hidden") return "";
      return "textbox";
    },
    li: () => "listitem",
    main: () => "main",
    nav: () => "navigation",
    ol: () => "list",
    option: () => "option",
    p: () => "paragraph",
    progress: () => "progressbar",
    section: () => "region",
    select: () => "combobox",
    table: () => "table",
    td: () => "cell",
    textarea: () => "textbox",
    th: () => "columnheader",
    tr: () => "row",
    ul: () => "list",
  };

  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "META", "LINK", "TITLE"]);

  function role(e) {
    const r = e.getAttribute("role");
    if (r) return r.trim().split(/\s+/)[0].toLowerCase();
    const f = IMPLIED_ROLES[e.tagName.toLowerCase()];
    return f ? f(e) : "";
  }

  // ids lists every name an { id } selector matches: DOM id, data-testid,
  // aria-label and name.
  function ids(e) {
    const out = [];
    for (const a of ["id", "data-testid", "aria-label", "name"]) {
      const v = e.getAttribute(a);
      if (v) out.push(v);
    }
    return out;
  }

  function ownText(e) {
    const tag = e.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA") {
      return (e.value || e.getAttribute("placeholder") || "").trim();
    }
    if (tag === "SELECT") {
      const o = e.options[e.selectedIndex];
      return o ? o.text.trim() : "";
    }
    if (tag === "IMG") return (e.getAttribute("alt") || "").trim();
    const t = e.innerText;
    return t ? t.replace(/\s+/g, " ").trim() : "";
  }

  function box(e) {
    const r = e.getBoundingClientRect();
    return { x: r.left, y: r.top, w: r.width, h: r.height };
  }

  function isVisible(e, b) {
    if (b.w <= 0 || b.h <= 0) return false;
    const s = getComputedStyle(e);
    if (s.visibility === "hidden" || s.display === "none" || Number(s.opacity) === 0) return false;
    const vw = innerWidth, vh = innerHeight;
    return b.x < vw && b.y < vh && b.x + b.w > 0 && b.y + b.h > 0;
  }

  function all() {
    const out = [];
    const walk = (root) => {
      for (const e of root.querySelectorAll("*")) {
        if (SKIP.has(e.tagName)) continue;
        out.push(e);
        if (e.shadowRoot) walk(e.shadowRoot);
      }
    };
    if (document.body) walk(document.body);
    return out;
  }

  function readingOrder(a, b) {
    // Rows within 4 CSS pixels read left to right.
    if (Math.abs(a.b.y - b.b.y) > 4) return a.b.y - b.b.y;
    return a.b.x - b.b.x;
  }

  // matchOne tells how element e matches the selector's own criteria:
  // 0 no match, 1 match, 2 exact match (text equal, not only contained),
  // 3 a loose selector matching as an id.
  function matchOne(e, sel) {
    let exact = true;
    if (sel.loose) {
      // A bare string tries id first, then text.
      const want = String(sel.text).toLowerCase();
      if (ids(e).some((v) => v.toLowerCase() === want)) return 3;
      const have = ownText(e).toLowerCase();
      if (!have.includes(want)) return 0;
      return have === want ? 2 : 1;
    }
    if (sel.id != null) {
      const want = String(sel.id).toLowerCase();
      if (!ids(e).some((v) => v.toLowerCase() === want)) return 0;
    }
    if (sel.role != null) {
      if (role(e) !== String(sel.role).toLowerCase()) return 0;
    }
    if (sel.text != null || sel.matches != null) {
      const t = ownText(e);
      if (sel.text != null) {
        const want = String(sel.text).toLowerCase();
        const have = t.toLowerCase();
        if (!have.includes(want)) return 0;
        if (have !== want) exact = false;
      }
      if (sel.matches != null && !regex(sel.matches).test(t)) return 0;
    }
    return exact ? 2 : 1;
  }

  const regexCache = new Map();
  function regex(src) {
    let re = regexCache.get(src);
    if (!re) {
      try { re = new RegExp(src); } catch (err) { throw new Error("bad regex /" + src + "/: " + err.message); }
      regexCache.set(src, re);
    }
    return re;
  }

  const MAX_SCOPE = 6;
  const SLOP = 1; // CSS px of rounding a frame may be off by

  function inside(b, a) {
    return b.x >= a.x - SLOP && b.y >= a.y - SLOP && b.x + b.w <= a.x + a.w + SLOP && b.y + b.h <= a.y + a.h + SLOP;
  }

  // follows tells whether b comes after a in reading order.
  function follows(b, a) {
    if (b.y > a.y + 4) return true;
    return Math.abs(b.y - a.y) <= 4 && b.x > a.x;
  }

  // candidates returns the elements matching sel (with its scopes), each
  // with its box, visibility and score, most specific first.
  function candidates(sel, depth) {
    if (depth > MAX_SCOPE) throw new Error("selector scopes nest deeper than " + MAX_SCOPE);
    let els = all();
    let anchors = [];
    for (const key of ["within", "after", "next"]) {
      if (!sel[key]) continue;
      const a = best(candidates(sel[key], depth + 1));
      if (!a) return [];
      anchors.push([key, a]);
    }
    const hasCriteria = sel.id != null || sel.role != null || sel.text != null || sel.matches != null;
    const out = [];
    for (const e of els) {
      const score = hasCriteria ? matchOne(e, sel) : (sel.any ? 1 : 0);
      if (!score) continue;
      const b = box(e);
      let ok = true;
      for (const [key, a] of anchors) {
        if (a.e === e) { ok = false; break; }
        if (key === "within" && !inside(b, a.b)) { ok = false; break; }
        if ((key === "after" || key === "next") && !follows(b, a.b)) { ok = false; break; }
      }
      if (!ok) continue;
      out.push({ e, b, score, visible: isVisible(e, b) });
    }
    // The most specific: visible first, then exact (id) matches, then the
    // smallest frame (the innermost element carrying the text), then reading
    // order. "next" keeps only the nearest follower of its anchor.
    out.sort((a, c) => (c.visible - a.visible) || (c.score - a.score) ||
      (a.b.w * a.b.h - c.b.w * c.b.h) || readingOrder(a, c));
    if (sel.next && out.length) {
      const vis = out.filter((c) => c.visible);
      const pool = vis.length ? vis : out;
      // Drop matches that contain another match: the innermost carries it.
      const inner = pool.filter((c) => !pool.some((o) => o !== c && c.e.contains(o.e)));
      inner.sort(readingOrder);
      return [inner[0]];
    }
    return out;
  }

  function best(list) { return list.length ? list[0] : null; }

  function norm(b) {
    return {
      x: b.x / innerWidth, y: b.y / innerHeight,
      width: b.w / innerWidth, height: b.h / innerHeight,
    };
  }

  function describeEl(c) {
    const idv = ids(c.e);
    return {
      id: idv.length ? idv[0] : "",
      ids: idv,
      text: ownText(c.e).slice(0, 200),
      role: role(c.e),
      tag: c.e.tagName.toLowerCase(),
      frame: norm(c.b),
      visible: c.visible,
      center: { x: c.b.x + c.b.w / 2, y: c.b.y + c.b.h / 2 },
    };
  }

  function find(sel) {
    const c = best(candidates(sel, 0));
    return c ? describeEl(c) : null;
  }

  // check evaluates one await/assert condition now.
  function check(cond) {
    const list = candidates(cond.selector, 0);
    const vis = list.filter((c) => c.visible);
    switch (cond.state) {
      case "exists":
        return { ok: list.length > 0, el: list.length ? describeEl(list[0]) : null };
      case "visible":
        return { ok: vis.length > 0, el: vis.length ? describeEl(vis[0]) : (list.length ? describeEl(list[0]) : null) };
      case "hidden":
        return { ok: vis.length === 0, el: vis.length ? describeEl(vis[0]) : null };
      case "text": {
        const c = vis.length ? vis[0] : list[0];
        if (!c) return { ok: false, el: null };
        const have = ownText(c.e);
        const want = String(cond.expected == null ? cond.text : cond.expected);
        // contains and equals ignore case (Argent's meaning) unless the
        // condition asks to match it (a strict run).
        const fold = cond.matchCase ? (s) => s : (s) => s.toLowerCase();
        let ok;
        switch (cond.match || "contains") {
          case "equals": ok = fold(have) === fold(want); break;
          case "matches": ok = regex(want).test(have); break;
          default: ok = fold(have).includes(fold(want));
        }
        return { ok, el: describeEl(c) };
      }
      default:
        throw new Error("unknown condition " + cond.state);
    }
  }

  function frame() {
    return new Promise((r) => {
      let done = false;
      const fin = () => { if (!done) { done = true; r(); } };
      requestAnimationFrame(fin);
      setTimeout(fin, 50); // rAF can stall in a background page
    });
  }

  // The waits below look again on every frame for their first eagerMs,
  // when most conditions come true, and after that on the next change of
  // the DOM or every slowMs: a long wait (a timeout waited out, a slow
  // backend) then no longer keeps the page rendering a frame every 16 ms
  // only to be looked at, which on a busy machine took CPU from the pages
  // that had work to do.
  const eagerMs = 1000, slowMs = 100;
  const onChange = new Set(); // the pauses that end at the next DOM change

  // pause waits until the next look of a wait that has lasted elapsed ms
  // of its timeoutMs.
  function pause(elapsed, timeoutMs) {
    if (elapsed < eagerMs) return frame();
    return new Promise((r) => {
      const fin = () => { if (onChange.delete(fin)) { clearTimeout(timer); r(); } };
      const timer = setTimeout(fin, Math.max(0, Math.min(slowMs, timeoutMs - elapsed)));
      onChange.add(fin);
    });
  }

  // wakeOnChange ends the pauses that wait for a DOM change on the frame
  // after it: a page that changes every few ms is still looked at no more
  // than once a frame.
  let wakeQueued = false;
  function wakeOnChange() {
    if (wakeQueued || onChange.size === 0) return;
    wakeQueued = true;
    frame().then(() => {
      wakeQueued = false;
      for (const fin of onChange) fin();
    });
  }

  // waitFor resolves when the condition holds, checking now, then as
  // pause says, until timeoutMs.
  async function waitFor(cond, timeoutMs) {
    const start = performance.now();
    for (;;) {
      const r = check(cond);
      r.elapsed = performance.now() - start;
      if (r.ok || r.elapsed >= timeoutMs) return r;
      await pause(r.elapsed, timeoutMs);
    }
  }

  let lastMutation = performance.now();
  const observer = new MutationObserver(() => {
    lastMutation = performance.now();
    wakeOnChange();
  });
  const observe = () => observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  observe();

  function busy() {
    if (document.readyState !== "complete") return true;
    if (document.fonts && document.fonts.status !== "loaded") return true;
    return false;
  }

  // idle resolves when the DOM has not changed for stableForMs and the
  // document and its fonts are loaded; {idle:false} after timeoutMs.
  async function idle(stableForMs, timeoutMs) {
    const start = performance.now();
    for (;;) {
      const now = performance.now();
      if (!busy() && now - lastMutation >= stableForMs) {
        // A renderer starved of CPU (a loaded machine) runs a frame before
        // the timers that fell due meanwhile: let those run, then look again.
        await new Promise((r) => setTimeout(r, 0));
        const after = performance.now();
        if (!busy() && after - lastMutation >= stableForMs) return { idle: true, elapsed: after - start };
        continue;
      }
      if (now - start >= timeoutMs) return { idle: false, elapsed: now - start };
      await pause(now - start, timeoutMs);
    }
  }

  // What dress changed in the page for a capture, so undress can put it
  // back; null when the page is not dressed. The agent's own nodes and the
  // hidden elements are remembered so that the mutation observer does not
  // count dressing and undressing as the page changing.
  let dressed = null;
  const own = new WeakSet();

  // SETTLE_CSS stops what makes two captures of one screen differ:
  // transitions, new animations and the caret.
  const SETTLE_CSS = "*,*::before,*::after{transition:none!important;animation-play-state:paused!important;caret-color:transparent!important;scroll-behavior:auto!important}";
  // 2^31-1, the largest z-index there is: a mask paints over every
  // element of the page (not over the top layer: modal dialogs, popovers).
  const MASK_CSS = "display:block!important;position:%POS%!important;margin:0!important;padding:0!important;border:0!important;" +
    "box-sizing:border-box!important;z-index:2147483647!important;pointer-events:none!important;opacity:1!important;" +
    "visibility:visible!important;transform:none!important;filter:none!important;";

  function addStyle(id, css) {
    const s = document.createElement("style");
    s.id = id;
    s.textContent = css;
    own.add(s);
    (document.head || document.documentElement).appendChild(s);
    return s;
  }

  // quiet drops the observer's records of the agent's own changes, so a
  // dressed capture is not a page that changed (await idle); any record
  // of the page's own still counts.
  function quiet() {
    for (const r of observer.takeRecords()) {
      const mine = r.type === "childList"
        ? [...r.addedNodes, ...r.removedNodes].every((n) => own.has(n))
        : r.type === "attributes" && r.attributeName === "style" && own.has(r.target);
      if (!mine) lastMutation = performance.now();
    }
  }

  // everyMatch returns every element matching sel, not only the best. An
  // element's text includes its descendants', so a selector by text also
  // matches each ancestor of the element that carries the text: of those,
  // only the innermost are kept.
  function everyMatch(sel) {
    const list = candidates(sel, 0).map((c) => c.e);
    if (!(sel.loose || sel.text != null || sel.matches != null)) return list;
    return list.filter((e) => !list.some((o) => o !== e && e.contains(o)));
  }

  // resolve matches each selector of one option (mask or hide); a
  // selector the matcher refuses is returned as the error of that option
  // and index, for the caller to name it.
  function resolve(option, sels) {
    const out = [];
    for (let i = 0; i < (sels || []).length; i++) {
      try {
        out.push(...everyMatch(sels[i]));
      } catch (err) {
        return { error: { option, index: i, reason: String(err && err.message || err) } };
      }
    }
    return { els: out };
  }

  function contentSize() {
    const de = document.documentElement, b = document.body;
    return {
      width: Math.max(de.scrollWidth, b ? b.scrollWidth : 0, innerWidth),
      height: Math.max(de.scrollHeight, b ? b.scrollHeight : 0, innerHeight),
    };
  }

  // dress settles the page for a capture and dresses it as the options
  // say. Settling: finite animations jump to their end, infinite ones are
  // cancelled (undress plays them again), transitions and the caret are
  // switched off, and web fonts are awaited. Dressing: opts.hide elements
  // get visibility: hidden, opts.style is added as a style sheet, and each
  // opts.mask element's box is painted opts.maskColor. It returns the page
  // offset of the viewport (a clip is in page coordinates) and, with
  // opts.full, the size of the whole page. A selector or colour it refuses
  // is answered {error} with nothing changed.
  async function dress(opts) {
    undress(); // a capture cut short may have left its dress on
    opts = opts || {};
    const hide = resolve("hide", opts.hide);
    if (hide.error) return hide;
    const mask = resolve("mask", opts.mask);
    if (mask.error) return mask;
    const ignore = resolve("ignore", opts.ignore);
    if (ignore.error) return ignore;
    const color = opts.maskColor || "#FF00FF";
    if (mask.els.length && !CSS.supports("background-color", color)) {
      return { error: { option: "maskColor", index: -1, reason: JSON.stringify(color) + " is not a CSS colour" } };
    }
    const d = dressed = { styles: [], hidden: [], masks: [], cancelled: [] };
    try {
      // How the page's own animations stood, read before the settle
      // style pauses them all.
      const before = new Map();
      for (const a of document.getAnimations()) before.set(a, { paused: a.playState === "paused", time: a.currentTime });
      d.styles.push(addStyle("__toolserver_settle", SETTLE_CSS));
      if (opts.style) d.styles.push(addStyle("__toolserver_style", opts.style));
      for (const e of new Set(hide.els)) {
        const was = e.getAttribute("style");
        own.add(e);
        e.style.setProperty("visibility", "hidden", "important");
        d.hidden.push({ e, was, set: e.getAttribute("style") });
      }
      quiet();
      for (const a of document.getAnimations()) {
        try {
          const t = a.effect && a.effect.getComputedTiming();
          if (t && t.endTime !== Infinity) { a.finish(); continue; }
        } catch (err) { /* cancelled below */ }
        // Only the page's own animations play again: one the dress
        // started ends with the dress.
        const b = before.get(a);
        if (b && a.playState !== "idle") d.cancelled.push({ a, paused: b.paused, time: b.time });
        a.cancel();
      }
      if (document.fonts) await document.fonts.ready;
      const size = opts.full ? contentSize() : null;
      const x = window.visualViewport ? visualViewport.pageLeft : scrollX;
      const y = window.visualViewport ? visualViewport.pageTop : scrollY;
      if (mask.els.length) {
        addMasks(d, mask.els, color, opts.full ? { x, y, size } : null);
        quiet();
      }
      const ignored = boxes(ignore.els, opts.full ? { x, y, size } : null);
      await frame();
      return { x, y, width: size ? size.width : 0, height: size ? size.height : 0, ignored };
    } catch (err) {
      undress();
      throw err;
    }
  }

  // boxes are the boxes of els, each covering every pixel its element
  // touches, in viewport pixels, or with full in page pixels inside the
  // page: where masks paint, and what ignore: leaves out of a comparison.
  function boxes(els, full) {
    const out = [];
    for (const e of new Set(els)) {
      const r = e.getBoundingClientRect();
      if (r.width <= 0 || r.height <= 0) continue;
      let left = Math.floor(r.left), top = Math.floor(r.top);
      let right = Math.ceil(r.right), bottom = Math.ceil(r.bottom);
      if (full) {
        left = Math.max(0, Math.floor(left + full.x));
        top = Math.max(0, Math.floor(top + full.y));
        right = Math.min(full.size.width, Math.ceil(right + full.x));
        bottom = Math.min(full.size.height, Math.ceil(bottom + full.y));
        if (right <= left || bottom <= top) continue;
      }
      out.push({ x: left, y: top, width: right - left, height: bottom - top });
    }
    return out;
  }

  // addMasks paints the box of each element with color. Each mask covers
  // every pixel its element touches. A viewport capture's masks are fixed
  // to the viewport; a full page, painted beyond the viewport, has them in
  // page coordinates (full gives the page offset and size), kept inside
  // the page so that no mask makes the page bigger.
  function addMasks(d, els, color, full) {
    const css = MASK_CSS.replace("%POS%", full ? "absolute" : "fixed") + "background:" + color + "!important;";
    for (const b of boxes(els, full)) {
      const m = document.createElement("toolserver-mask");
      m.style.cssText = css + "left:" + b.x + "px!important;top:" + b.y + "px!important;width:" +
        b.width + "px!important;height:" + b.height + "px!important;";
      own.add(m);
      document.documentElement.appendChild(m);
      d.masks.push(m);
    }
  }

  // undress puts back what dress changed: its style sheets and masks go,
  // each hidden element's style attribute is as it was (when the page
  // rewrote it meanwhile, only the visibility is dropped), and the page's
  // infinite animations that dress cancelled play again from where they
  // stood, paused if they were.
  function undress() {
    const d = dressed;
    if (!d) return true;
    dressed = null;
    for (const s of d.styles) s.remove();
    for (const m of d.masks) m.remove();
    for (const h of d.hidden) {
      if (h.e.getAttribute("style") !== h.set) h.e.style.removeProperty("visibility");
      else if (h.was === null) h.e.removeAttribute("style");
      else h.e.setAttribute("style", h.was);
    }
    quiet();
    for (const h of d.hidden) own.delete(h.e);
    for (const c of d.cancelled) {
      try {
        c.a.play();
        if (c.time != null) c.a.currentTime = c.time;
        if (c.paused) c.a.pause();
      } catch (err) { /* its element left the page */ }
    }
    return true;
  }

  function describe() {
    const out = [];
    for (const e of all()) {
      const b = box(e);
      const c = { e, b, visible: isVisible(e, b) };
      if (b.w <= 0 || b.h <= 0) continue;
      const idv = ids(e), r = role(e);
      // Keep what a selector can reach by name: an id, a role, or text of its
      // own (a direct text node), so wrappers don't repeat their children.
      let own = false;
      for (const n of e.childNodes) if (n.nodeType === 3 && n.textContent.trim()) { own = true; break; }
      if (!idv.length && !r && !own && e.tagName !== "INPUT" && e.tagName !== "TEXTAREA") continue;
      out.push(c);
    }
    out.sort(readingOrder);
    return out.map(describeEl);
  }

  // focusSelect focuses an editable element and selects its content so the
  // next inserted text replaces it.
  function focusSelect(sel) {
    const c = best(candidates(sel, 0));
    if (!c) return null;
    c.e.scrollIntoView({ block: "center", inline: "center" });
    c.e.focus();
    if (typeof c.e.select === "function") c.e.select();
    c.b = box(c.e);
    return describeEl(c);
  }

  // matchCount counts the elements a selector matched as well as its best
  // match (the same score: all exact, or all by id), rendered whether
  // on-screen or not, and holding no other such match: the card and the
  // grid around a matching button are not matches of their own.
  function matchCount(list) {
    if (!list.length) return 0;
    const top = list[0].score;
    const same = list.filter((c) => c.score === top && c.b.w > 0 && c.b.h > 0 && rendered(c.e));
    return same.filter((c) => !same.some((o) => o !== c && c.e.contains(o.e))).length;
  }

  function rendered(e) {
    const s = getComputedStyle(e);
    return s.visibility !== "hidden" && s.display !== "none" && Number(s.opacity) !== 0;
  }

  // locate scrolls the best match into view when needed and returns it,
  // with the count of matches as good (matchCount).
  function locate(sel) {
    const list = candidates(sel, 0);
    const c = best(list);
    if (!c) return null;
    const matches = matchCount(list);
    if (!c.visible || c.b.y < 0 || c.b.y + c.b.h > innerHeight) {
      c.e.scrollIntoView({ block: "center", inline: "center" });
      c.b = box(c.e);
      c.visible = isVisible(c.e, c.b);
    }
    const out = describeEl(c);
    out.matches = matches;
    // What a tap at the centre would land on, when it is not the element
    // or inside it (a toast, a cookie banner, a modal's backdrop).
    const root = c.e.getRootNode();
    const top = (root.elementFromPoint ? root : document).elementFromPoint(out.center.x, out.center.y);
    if (top && top !== c.e && !c.e.contains(top)) {
      out.coveredBy = describeEl({ e: top, b: box(top), visible: true });
    }
    return out;
  }

  // waitLocate waits for the best match to be on screen, or rendered
  // off screen (below the fold, in a scrolled container): that one is
  // scrolled into view at once, as Playwright's actionability does, rather
  // than after the whole timeout.
  async function waitLocate(sel, timeoutMs) {
    const start = performance.now();
    for (;;) {
      const c = best(candidates(sel, 0));
      if (c && (c.visible || (c.b.w > 0 && c.b.h > 0 && rendered(c.e)))) return locate(sel);
      const elapsed = performance.now() - start;
      if (elapsed >= timeoutMs) return c ? locate(sel) : null;
      await pause(elapsed, timeoutMs);
    }
  }

  Object.defineProperty(window, "__toolserver", {
    value: { find, check, waitFor, idle, dress, undress, describe, focusSelect, locate, waitLocate },
    enumerable: false,
  });
})();
