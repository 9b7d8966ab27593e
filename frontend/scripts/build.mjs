// Builds every widget (src/widgets/<name>.tsx) into one self-contained HTML file, ../assets/<name>.html,
// then the admin panel (admin.html) and its widget sandbox (sandbox.html), and prints each file's size.
// vite-plugin-singlefile inlines everything, so each page is its own build.
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { build } from "vite";
import { viteSingleFile } from "vite-plugin-singlefile";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "..");
const entries = resolve(root, ".entries");
const assets = resolve(root, "../assets");
const BUDGET = 60 * 1024;
// Browsers with native light-dark(): an older CSS target makes the minifier replace it by a
// prefers-color-scheme polyfill that ignores the host's theme.
const browsers = ["chrome123", "firefox120", "safari17.5"];

const only = process.argv.slice(2);
const names = readdirSync(resolve(root, "src/widgets"))
  .filter((f) => f.endsWith(".tsx"))
  .map((f) => f.slice(0, -4))
  .filter((name) => only.length === 0 || only.includes(name))
  .sort();

rmSync(entries, { recursive: true, force: true });
mkdirSync(entries, { recursive: true });
mkdirSync(assets, { recursive: true });

const sizes = [];
async function buildPage(name, head, body, budget) {
  const page = resolve(entries, `${name}.html`);
  writeFileSync(
    page,
    `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n` +
      `<meta name="viewport" content="width=device-width, initial-scale=1">\n${head}</head>\n<body>\n${body}</body>\n</html>\n`,
  );
  await build({
    configFile: false,
    logLevel: "warn",
    root: entries,
    base: "./",
    plugins: [viteSingleFile({ removeViteModuleLoader: true })],
    oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
    build: {
      outDir: assets,
      emptyOutDir: false,
      modulePreload: false,
      target: ["es2023", ...browsers],
      cssTarget: browsers,
      reportCompressedSize: false,
      rollupOptions: { input: page },
    },
  });
  sizes.push([name, statSync(resolve(assets, `${name}.html`)).size, budget]);
}

for (const name of names) {
  await buildPage(
    name,
    `<title>ForgeMCP ${name}</title>\n`,
    `<div id="root"></div>\n<script type="module" src="../src/widgets/${name}.tsx"></script>\n`,
    BUDGET,
  );
}

// The admin panel and its widget sandbox proxy, served by the admin Hub (not MCP widgets). The Hub
// fills the placeholders when it serves them: the session's CSRF value and the sandbox origin in
// admin.html, the admin origin in sandbox.html.
const PAGES = [
  {
    name: "admin",
    head:
      `<title>ForgeMCP admin</title>\n<meta name="forgemcp-csrf" content="__FORGEMCP_CSRF__">\n` +
      `<meta name="forgemcp-sandbox" content="__FORGEMCP_SANDBOX_ORIGIN__">\n`,
    body: `<div id="root"></div>\n<script type="module" src="../src/admin/main.tsx"></script>\n`,
    budget: 160 * 1024,
  },
  {
    name: "sandbox",
    head:
      `<title>ForgeMCP widget sandbox</title>\n` +
      `<style>html, body { margin: 0; height: 100%; overflow: hidden } iframe { border: 0; width: 100%; height: 100%; display: block }</style>\n`,
    body: `<script type="module" src="../src/sandbox/proxy.ts"></script>\n`,
    budget: 8 * 1024,
  },
];
for (const { name, head, body, budget } of PAGES) {
  if (only.length === 0 || only.includes(name)) await buildPage(name, head, body, budget);
}
rmSync(entries, { recursive: true, force: true });

let over = false;
for (const [name, size, budget] of sizes) {
  const flag = size > budget ? "  OVER BUDGET" : "";
  over ||= size > budget;
  console.log(`assets/${name}.html  ${(size / 1024).toFixed(1)} KiB (${size} bytes)${flag}`);
}
console.log(`${sizes.length} pages built; widget budget ${BUDGET / 1024} KiB each.`);
if (over) process.exitCode = 1;
