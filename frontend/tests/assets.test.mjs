// The built widgets (no browser): one per widget source, self-contained, within budget, and free of
// things the MCP Apps sandbox forbids (network references, eval, web fonts).
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { assets, frontend } from "./harness/server.mjs";

const widgets = readdirSync(join(frontend, "src/widgets"))
  .filter((f) => f.endsWith(".tsx"))
  .map((f) => f.slice(0, -4));
const BUDGET = 60 * 1024;

// admin.html and sandbox.html are the admin Hub's pages (tests/admin.test.mjs checks them).
const HUB_PAGES = ["admin", "sandbox"];

test("there is one built asset per widget and nothing else", () => {
  const built = readdirSync(assets)
    .filter((f) => f.endsWith(".html"))
    .map((f) => f.slice(0, -5))
    .filter((name) => !HUB_PAGES.includes(name));
  assert.deepEqual(built.sort(), [...widgets].sort());
  assert.equal(widgets.length, 19);
});

for (const name of widgets) {
  test(`${name}.html is a small self-contained document`, () => {
    const html = readFileSync(join(assets, `${name}.html`), "utf8");
    assert.ok(html.startsWith("<!doctype html>"), "doctype");
    assert.ok(html.length <= BUDGET, `${html.length} bytes is over the ${BUDGET} byte budget`);
    assert.doesNotMatch(html, /<script[^>]+src=|<link[^>]+href=/i, "no external scripts or styles");
    assert.doesNotMatch(html, /(src|href)\s*=\s*["']?https?:/i, "no network references");
    assert.doesNotMatch(html, /\beval\(|new Function\b/, "no eval");
    assert.doesNotMatch(html, /@font-face|@import/i, "no web fonts or imports");
    assert.doesNotMatch(html, /--lightningcss-light/, "light-dark() kept native, not polyfilled");
    assert.match(html, /ui\/initialize/, "carries the view glue");
    assert.match(html, /light-dark\(/, "themed with light-dark()");
  });
}
