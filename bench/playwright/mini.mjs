// The Playwright side of the flow benchmarks: the same actions as
// flow/bench_test.go (BenchmarkMiniFlow, BenchmarkStepOverhead) on the same
// Chromium and the same page, timed with medians.
//   node mini.mjs <chromium path> <pages dir> [repetitions]
import { chromium } from "playwright-core";
import http from "node:http";
import fs from "node:fs";
import path from "node:path";

const [exe, pagesDir, repsArg] = process.argv.slice(2);
const reps = Number(repsArg || 20);
const server = http.createServer((req, res) => {
  const p = path.join(pagesDir, path.basename(req.url.split("?")[0]));
  fs.readFile(p, (err, data) => {
    if (err) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { "content-type": "text/html" });
    res.end(data);
  });
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const url = `http://127.0.0.1:${server.address().port}/app.html`;

const browser = await chromium.launch({ executablePath: exe, args: ["--no-sandbox", "--hide-scrollbars", "--force-device-scale-factor=1"] });
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const time = async (fn) => { const t = performance.now(); await fn(); return performance.now() - t; };

const mini = [], launch = [], steps = [];
for (let i = 0; i < reps + 2; i++) {
  let ctx, page;
  const tl = await time(async () => {
    ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
    page = await ctx.newPage();
    await page.goto(url);
  });
  const tm = tl + await time(async () => {
    await page.getByText("Go now").click();
    await page.locator("#name").fill("Ada");
    const t = await page.locator("#echo").textContent();
    if (t !== "hello Ada") throw new Error("assert failed: " + t);
    await page.screenshot();
  });
  // Step overhead on the open page: 2 taps, a fill, 2 assertions.
  const ts = await time(async () => {
    await page.getByText("Go now").click();
    await page.locator("#name").fill("Ada");
    if (!(await page.locator("#echo").textContent()).includes("hello Ada")) throw new Error("assert");
    await page.locator("#top").click();
    await page.getByText("clicked").first().waitFor({ state: "visible" });
  });
  await ctx.close();
  if (i >= 2) { mini.push(tm); launch.push(tl); steps.push(ts); }
}
await browser.close();
server.close();
console.log(JSON.stringify({
  reps,
  miniFlowMs: +median(mini).toFixed(1),
  launchMs: +median(launch).toFixed(1),
  stepOverheadMs: +median(steps).toFixed(1),
  perStepMs: +(median(steps) / 5).toFixed(2),
}));
