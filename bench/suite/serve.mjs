// The one static server both sides of the suite load the shop from: the
// files of a directory on loopback. Prints the base URL on its first line.
//   node serve.mjs <site dir> [port]      (port 0, the default, picks a free one)
import http from "node:http";
import fs from "node:fs";
import path from "node:path";

const [dir, portArg] = process.argv.slice(2);
const root = path.resolve(dir);
const types = { ".html": "text/html; charset=utf-8", ".css": "text/css", ".js": "text/javascript", ".svg": "image/svg+xml", ".png": "image/png" };

const server = http.createServer((req, res) => {
  const rel = decodeURIComponent(new URL(req.url, "http://x").pathname);
  const file = path.join(root, rel === "/" ? "index.html" : rel);
  if (!file.startsWith(root + path.sep)) { res.writeHead(403); res.end(); return; }
  fs.readFile(file, (err, data) => {
    if (err) { res.writeHead(404); res.end("not found"); return; }
    res.writeHead(200, { "content-type": types[path.extname(file)] || "application/octet-stream" });
    res.end(data);
  });
});
server.listen(Number(portArg || 0), "127.0.0.1", () => {
  console.log(`http://127.0.0.1:${server.address().port}`);
});
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => server.close(() => process.exit(0)));
