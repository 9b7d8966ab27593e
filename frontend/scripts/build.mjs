// Builds every widget (src/widgets/<name>.tsx) into one self-contained HTML file, ../assets/<name>.html,
// and prints each file's size. vite-plugin-singlefile inlines everything, so each page is its own build.
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
for (const name of names) {
  const page = resolve(entries, `${name}.html`);
  writeFileSync(
    page,
    `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n` +
      `<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>ForgeMCP ${name}</title>\n` +
      `</head>\n<body>\n<div id="root"></div>\n<script type="module" src="../src/widgets/${name}.tsx"></script>\n</body>\n</html>\n`,
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
  sizes.push([name, statSync(resolve(assets, `${name}.html`)).size]);
}
rmSync(entries, { recursive: true, force: true });

let over = false;
for (const [name, size] of sizes) {
  const flag = size > BUDGET ? "  OVER BUDGET" : "";
  over ||= size > BUDGET;
  console.log(`assets/${name}.html  ${(size / 1024).toFixed(1)} KiB (${size} bytes)${flag}`);
}
console.log(`${sizes.length} widgets built; budget ${BUDGET / 1024} KiB each.`);
if (over) process.exitCode = 1;
