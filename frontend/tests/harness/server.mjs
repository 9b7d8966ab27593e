// Two loopback HTTP servers for the browser tests: the host origin (test host pages, built widgets,
// fixtures) and a separate sandbox origin that serves only the sandbox proxy, with a strict CSP.
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { build } from "vite";
import { viteSingleFile } from "vite-plugin-singlefile";

const here = dirname(fileURLToPath(import.meta.url));
export const frontend = resolve(here, "../..");
export const assets = resolve(frontend, "../assets");
export const fixtures = resolve(frontend, "tests/fixtures");

/** Bundles the official SDK host page once (a test-only page; the SDK is a devDependency). */
async function buildSdkHost() {
  const out = mkdtempSync(join(tmpdir(), "forgemcp-sdk-host-"));
  await build({
    configFile: false,
    logLevel: "warn",
    root: here,
    plugins: [viteSingleFile({ removeViteModuleLoader: true })],
    build: { outDir: out, emptyOutDir: true, target: "es2023", rollupOptions: { input: join(here, "sdk-host.html") } },
  });
  const html = await readFile(join(out, "sdk-host.html"), "utf8");
  rmSync(out, { recursive: true, force: true });
  return html;
}

const listen = (server) =>
  new Promise((ok) => server.listen(0, "127.0.0.1", () => ok(`http://127.0.0.1:${server.address().port}`)));

const safe = (path) => /^[a-z0-9-]+(\/[a-z0-9-]+)?$/.test(path);

export async function startServers() {
  const sdkHost = await buildSdkHost();
  let hostOrigin = "";
  const sandbox = createServer(async (req, res) => {
    if (new URL(req.url, "http://x").pathname !== "/sandbox.html") return void res.writeHead(404).end();
    const html = (await readFile(join(here, "sandbox.html"), "utf8")).replace("__HOST_ORIGIN__", hostOrigin);
    res.writeHead(200, {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      // The spec's restrictive default plus framing only by the host origin.
      "content-security-policy":
        "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
        "img-src 'self' data:; media-src 'self' data:; connect-src 'none'; object-src 'none'; " +
        `base-uri 'none'; frame-ancestors ${hostOrigin}`,
    });
    res.end(html);
  });
  const host = createServer(async (req, res) => {
    const path = new URL(req.url, "http://x").pathname;
    const send = (type, body) => res.writeHead(200, { "content-type": type, "cache-control": "no-store" }).end(body);
    try {
      if (path === "/host.html") return send("text/html; charset=utf-8", await readFile(join(here, "host.html")));
      if (path === "/host.js") return send("text/javascript", await readFile(join(here, "host.js")));
      if (path === "/sdk-host.html") return send("text/html; charset=utf-8", sdkHost);
      let m = /^\/assets\/(.+)\.html$/.exec(path);
      if (m && safe(m[1])) return send("text/html; charset=utf-8", await readFile(join(assets, `${m[1]}.html`)));
      m = /^\/fixtures\/(.+)\.json$/.exec(path);
      if (m && safe(m[1])) return send("application/json", await readFile(join(fixtures, `${m[1]}.json`)));
      res.writeHead(path === "/favicon.ico" ? 204 : 404).end();
    } catch {
      res.writeHead(404).end();
    }
  });
  hostOrigin = await listen(host);
  const sandboxOrigin = await listen(sandbox);
  return {
    hostOrigin,
    sandboxOrigin,
    close: () => Promise.all([host, sandbox].map((s) => new Promise((ok) => s.close(ok)))),
  };
}
