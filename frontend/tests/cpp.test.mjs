// Lexical C/C++ coloring as a pure function (no browser): src/shared/cpp.tsx loaded through Vite's
// module runner, checked for bracket depth across lines, unmatched closers, and brackets inside
// comments, strings, characters and header names staying uncolored as brackets.
import assert from "node:assert/strict";
import { join } from "node:path";
import { before, test } from "node:test";

import { runnerImport } from "vite";

import { frontend } from "./harness/server.mjs";

let cppDecos;
before(async () => {
  const { module } = await runnerImport(join(frontend, "src/shared/cpp.tsx"), {
    configFile: false,
    root: frontend,
    logLevel: "warn",
    oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  });
  cppDecos = module.cppDecos;
});

/** Every decorated piece of `lines` as `line:character text class`. */
const pieces = (lines) =>
  cppDecos(lines).flatMap((decos, row) =>
    decos.map((d) => `${row}:${d.start} ${Array.from(lines[row]).slice(d.start, d.end).join("")} ${d.cls}`),
  );
/** Only the bracket pieces. */
const brackets = (lines) => pieces(lines).filter((p) => / t-b[0-9x]$/.test(p));

test("brackets are colored by nesting depth in a cycle of three, across lines", () => {
  assert.deepEqual(brackets(["f(a[b{c(d)}]);"]), [
    "0:1 ( t-b0",
    "0:3 [ t-b1",
    "0:5 { t-b2",
    "0:7 ( t-b0",
    "0:9 ) t-b0",
    "0:10 } t-b2",
    "0:11 ] t-b1",
    "0:12 ) t-b0",
  ]);
  assert.deepEqual(brackets(["int main() {", "  g(1);", "}"]), [
    "0:8 ( t-b0",
    "0:9 ) t-b0",
    "0:11 { t-b0",
    "1:3 ( t-b1",
    "1:5 ) t-b1",
    "2:0 } t-b0",
  ]);
});

test("closers without their opener are marked unmatched and leave the depth alone", () => {
  assert.deepEqual(brackets([") (]x)"]), ["0:0 ) t-bx", "0:2 ( t-b0", "0:3 ] t-bx", "0:5 ) t-b0"]);
});

test("brackets inside comments, strings, characters and header names are not brackets", () => {
  const lines = [
    "#include <weird(name).h>",
    "/* ( [ */ x = \"(]\"; // {",
    "c = '(';",
    "y(1);",
  ];
  assert.deepEqual(brackets(lines), ["3:1 ( t-b0", "3:3 ) t-b0"]);
  const all = pieces(lines);
  assert.ok(all.includes("0:9 <weird(name).h> t-s"), all.join("\n"));
  assert.ok(all.includes("1:0 /* ( [ */ t-c"), all.join("\n"));
  assert.ok(all.includes("1:14 \"(]\" t-s"), all.join("\n"));
  assert.ok(all.includes("2:4 '(' t-s"), all.join("\n"));
});

test("code points, not UTF-16 units, locate brackets after wide characters", () => {
  assert.deepEqual(brackets(["s = \"𝄞\"; f(x);"]), ["0:10 ( t-b0", "0:12 ) t-b0"]);
});
