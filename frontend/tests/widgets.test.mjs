// Every widget with every fixture in both hosts (our sandbox host and the official SDK AppBridge),
// plus the handshake, views, filters, copy, wrap toggles, skipped files, diff highlighting, bracket
// colors, diagnostic hover panels and themes. A screenshot per fixture (and a dark one per widget)
// lands in test-artifacts/. Expectations about clangd data are read from the recorded fixtures.
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";

import { screenshot } from "./harness/page.mjs";
import { fixtures } from "./harness/server.mjs";
import { widgetSession } from "./harness/session.mjs";

const { skip, env, withWidget } = widgetSession();

async function waitUntil(check, what) {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((ok) => setTimeout(ok, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const bodyBackground = (frame) => frame.locator("body").evaluate((b) => getComputedStyle(b).backgroundColor);
const luminance = (rgb) => rgb.match(/\d+/g).slice(0, 3).reduce((a, b) => a + Number(b), 0) / 3;

const readFixture = (name) => JSON.parse(readFileSync(join(fixtures, `${name}.json`), "utf8"));
/** The text of the resource a recorded result links as `resources.<name>`. */
const linked = (fixture, name) => fixture.resources[fixture.result.structuredContent.resources[name].uri].contents[0];

/** A recording's clangd document, its configurations in the widget's order, and their diagnostics. */
function clangdOf(fixture) {
  const doc = JSON.parse(linked(fixture, "clangd").text);
  const file = doc.files.find((f) => f.path === fixture.result.structuredContent.path) ?? doc.files[0];
  const configurations = [...new Set([...file.highlighting, ...file.diagnostics].flatMap((g) => g.configurations))];
  const diagnostics = (configuration) =>
    file.diagnostics.filter((g) => g.configurations.includes(configuration)).flatMap((g) => g.diagnostics);
  const spans = (configuration) =>
    file.highlighting.filter((g) => g.configurations.includes(configuration)).flatMap(decoded);
  return { doc, configurations, diagnostics, spans };
}
/** The spans of a highlighting entry's compact tokens (five integers each, relative as in LSP). */
function decoded(group) {
  const out = [];
  let [line, start] = [1, 0];
  for (let i = 0; i < group.tokens.length; i += 5) {
    const [dl, ds, length, type, bits] = group.tokens.slice(i, i + 5);
    [line, start] = dl > 0 ? [line + dl, ds] : [line, start + ds];
    const modifiers = group.legend.modifiers.filter((_, bit) => (bits >>> bit) & 1);
    out.push({ range: { start: { line, character: start }, end: { line, character: start + length } }, kind: group.legend.types[type], modifiers });
  }
  return out;
}
/** The diagnostic a hover test shows: the first with related locations, else the first. */
const pick = (diagnostics) => diagnostics.find((d) => d.related.length > 0) ?? diagnostics[0];
const counted = (n) => new RegExp(`\\b${n} diagnostic${n === 1 ? "" : "s"}\\b`);

const at = (p) => `line ${p.line}, character ${p.character}`;
/** Waits for the hover panel and checks it shows `d` as the data carries it, inside the viewport. */
async function panelShows(frame, d) {
  const panel = frame.locator("#diagnostic-panel");
  await panel.waitFor({ state: "visible" });
  const text = await panel.innerText();
  const origin = [d.source, d.code].filter((x) => x !== null && x !== "").join(" ");
  const related = d.related.map((r) => `${r.location.path}, ${at(r.location.range.start)}: ${r.message}`);
  for (const part of [d.severity ?? "diagnostic", d.message, origin, `${at(d.range.start)} to ${at(d.range.end)}`, ...related]) {
    assert.ok(text.includes(part), `the panel shows ${JSON.stringify(part)}; it shows:\n${text}`);
  }
  const inside = await panel.evaluate((p) => {
    const r = p.getBoundingClientRect();
    return r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth;
  });
  assert.ok(inside, "the panel is inside the viewport");
  return panel;
}

/** The underline covering code point `character` of the `index`-th source line. */
async function underlineAt(frame, index, character) {
  const line = frame.locator(".code .tx").nth(index);
  const nth = await line.evaluate(
    (tx, character) =>
      [...tx.querySelectorAll(".dg")].findIndex((dg) => {
        const before = document.createRange();
        before.setStart(tx, 0);
        before.setEndBefore(dg);
        const from = Array.from(before.toString()).length;
        return from <= character && character < from + Array.from(dg.textContent).length;
      }),
    character,
  );
  assert.ok(nth >= 0, `an underline covers character ${character} of source line ${index + 1}`);
  return line.locator(".dg").nth(nth);
}

/** Screenshots at a wide and a narrow width (for review), then back to the default viewport. */
async function shootWidths(page, name) {
  const viewport = page.viewportSize();
  for (const width of [1280, 420]) {
    await page.setViewportSize({ width, height: 600 });
    await screenshot(page, `${name}-${width}`);
  }
  await page.setViewportSize(viewport);
}

const widgets = readdirSync(fixtures).sort();
describe("every widget renders every fixture in both hosts", { skip }, () => {
  for (const widget of widgets) {
    const cases = readdirSync(join(fixtures, widget)).filter((f) => f.endsWith(".json")).map((f) => f.slice(0, -5)).sort();
    for (const fixture of cases) {
      test(`${widget}/${fixture} in our host`, () =>
        withWidget({ widget, fixture }, async ({ page, frame }) => {
          await frame.getByRole("tab", { name: "JSON" }).waitFor();
          assert.notEqual((await frame.locator("header h1").innerText()).trim(), "");
          assert.equal(await page.locator("#outer").evaluate((f) => f.style.height), "420px");
          await screenshot(page, `${widget}-${fixture}`);
          await frame.getByRole("tab", { name: "JSON" }).click();
          assert.match(await frame.locator("pre.json").innerText(), /"content"/);
          assert.ok((await frame.locator("pre.json .j-k").count()) > 0, "JSON keys are colored");
        }));
      test(`${widget}/${fixture} in the SDK AppBridge host`, () =>
        withWidget({ widget, fixture, host: "sdk" }, async ({ page, frame }) => {
          await frame.getByRole("tab", { name: "JSON" }).waitFor();
          const events = await page.evaluate(() => window.__events);
          assert.ok(events.includes("initialized"), events.join());
          await page.waitForFunction(() => window.__events.includes("size:420"));
          if (fixture === "list" || fixture === "literal" || fixture === "edit") {
            assert.deepEqual(await page.evaluate(() => window.__teardown()), {});
          }
        }));
    }
    test(`${widget} follows the host theme (dark, then light)`, () =>
      withWidget({ widget, fixture: readdirSync(join(fixtures, widget))[0].slice(0, -5), theme: "dark" }, async ({ page, frame }) => {
        assert.ok(luminance(await bodyBackground(frame)) < 60, "dark background");
        await screenshot(page, `${widget}-dark`);
        await shootWidths(page, `${widget}-dark`);
        await page.evaluate(() => window.__setTheme("light"));
        await frame.locator("html[data-theme=light]").waitFor({ state: "attached" });
        assert.ok(luminance(await bodyBackground(frame)) > 200, "light background");
        await shootWidths(page, `${widget}-light`);
      }));
  }
});

describe("protocol with our host", { skip }, () => {
  test("handshake order, size, ping, teardown and unknown requests", () =>
    withWidget({ widget: "workspace-tree", fixture: "list" }, async ({ page }) => {
      await page.waitForFunction(() => window.__log.some((m) => m.method === "ui/notifications/size-changed"));
      const order = await page.evaluate(() => window.__log.map((m) => `${m.dir} ${m.method ?? "response"}`));
      assert.deepEqual(order.slice(0, 7), [
        "in ui/notifications/sandbox-proxy-ready",
        "out ui/notifications/sandbox-resource-ready",
        "in ui/initialize",
        "out response",
        "in ui/notifications/initialized",
        "out ui/notifications/tool-input",
        "out ui/notifications/tool-result",
      ]);
      const size = await page.evaluate(() => window.__log.find((m) => m.method === "ui/notifications/size-changed").params);
      assert.equal(size.height, 420);
      const init = await page.evaluate(() => window.__log.find((m) => m.method === "ui/initialize").params);
      assert.equal(init.protocolVersion, "2026-01-26");
      assert.equal(init.appInfo.name, "forgemcp-workspace-tree");
      assert.deepEqual((await page.evaluate(() => window.__request("ping"))).result, {});
      assert.equal((await page.evaluate(() => window.__request("tools/call", { name: "x" }))).error.code, -32601);
      assert.deepEqual((await page.evaluate(() => window.__request("ui/resource-teardown", {}))).result, {});
    }));
});

describe("widget behaviour", { skip }, () => {
  test("tree: local filter keeps matching names and their directories; copy icon copies", () =>
    withWidget({ widget: "workspace-tree", fixture: "list" }, async ({ frame }) => {
      await frame.getByPlaceholder("Filter names").fill("vector");
      await frame.getByText("vector_test.cpp").waitFor();
      assert.equal(await frame.getByText("CMakeLists.txt").count(), 0);
      assert.equal(await frame.locator("mark.find").count(), 1);
      const copy = frame.locator("li .copy").first();
      const opacity = () => copy.evaluate((c) => getComputedStyle(c).opacity);
      await frame.locator("header h1").hover();
      assert.equal(await opacity(), "0", "copy icons show on hover only");
      await copy.locator("xpath=..").hover();
      await waitUntil(async () => (await opacity()) === "1", "the hovered row's copy icon");
      await copy.click();
      await frame.locator("li .copy[data-copied]").first().waitFor();
    }));

  test("tree: the file list's copy icons show on hover only too", () =>
    withWidget({ widget: "workspace-tree", fixture: "find-files" }, async ({ frame }) => {
      const copy = frame.locator("li.item .copy").first();
      const opacity = () => copy.evaluate((c) => getComputedStyle(c).opacity);
      await frame.locator("header h1").hover();
      assert.equal(await opacity(), "0");
      await frame.locator("li.item").first().hover();
      await waitUntil(async () => (await opacity()) === "1", "the hovered file's copy icon");
    }));

  test("file: separate line numbers, horizontal scrolling, wrap toggle, find", () =>
    withWidget({ widget: "workspace-file", fixture: "read" }, async ({ frame }) => {
      assert.equal(await frame.locator(".code .ln").first().innerText(), "1");
      assert.equal(await frame.locator(".code .ln").first().evaluate((e) => getComputedStyle(e).userSelect), "none");
      const scrolls = () => frame.locator("main").evaluate((m) => m.scrollWidth > m.clientWidth);
      assert.ok(await scrolls(), "long lines scroll horizontally");
      await frame.getByRole("button", { name: "Wrap lines" }).click();
      await frame.locator(".code.wrap").waitFor();
      assert.ok(!(await scrolls()), "wrapped lines do not scroll");
      await frame.getByPlaceholder("Find in file").fill("normalized");
      assert.equal(await frame.locator("mark.find").count(), 2);
      assert.ok((await frame.locator(".t-k").count()) > 0, "C++ keywords are colored");
    }));

  test("file: brackets are colored by depth, not inside strings", () =>
    withWidget({ widget: "workspace-file", fixture: "read" }, async ({ frame }) => {
      await frame.locator(".t-b0").first().waitFor();
      const colored = await frame.locator(".code [class*='t-b']").allInnerTexts();
      assert.ok(colored.every((t) => /^[()[\]{}]$/.test(t)), `only single brackets: ${colored}`);
      const strings = await frame.locator(".code .t-s").evaluateAll((all) => all.filter((s) => s.querySelector("[class*='t-b']")).length);
      assert.equal(strings, 0, "no bracket colors inside string literals");
    }));

  test("file: clangd configuration selector, semantic colors and diagnostic hover panels", async () => {
    const fixture = readFixture("workspace-file/read-clangd");
    const { configurations, diagnostics, spans } = clangdOf(fixture);
    const first = diagnostics(configurations[0]);
    const target = pick(first);
    assert.ok(target, "the recording has a diagnostic in its first configuration");
    const start = fixture.result.structuredContent.start_line;
    await withWidget({ widget: "workspace-file", fixture: "read-clangd" }, async ({ page, frame }) => {
      await frame.locator(".dg").first().waitFor();
      assert.ok((await frame.locator("[class*='sem-']").count()) > 0, "semantic colors");
      assert.match(await frame.locator(".bar").innerText(), counted(first.length));
      const underline = await underlineAt(frame, target.range.start.line - start, target.range.start.character);
      assert.equal(await underline.getAttribute("tabindex"), "0");
      assert.equal(await underline.getAttribute("aria-describedby"), "diagnostic-panel");
      assert.equal(await underline.getAttribute("title"), null, "no native tooltip");

      await underline.hover();
      const panel = await panelShows(frame, target);
      await screenshot(page, "workspace-file-diagnostic-panel");
      await panel.hover();
      await page.waitForTimeout(500);
      assert.ok(await panel.isVisible(), "the panel stays open while the pointer is inside it");
      await env.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: env.servers.hostOrigin });
      await panel.locator(".copy").click();
      await panel.locator(".copy[data-copied]").waitFor();
      const copied = await page.evaluate(() => navigator.clipboard.readText());
      assert.ok(copied.includes(target.message), copied);
      await page.keyboard.press("Escape");
      await panel.waitFor({ state: "hidden" });

      await underline.focus();
      await panelShows(frame, target);
      await frame.locator("main").evaluate((m) => m.dispatchEvent(new Event("scroll")));
      await panel.waitFor({ state: "hidden" });
      await underline.hover();
      await panel.waitFor({ state: "visible" });
      await frame.locator("header h1").hover();
      await panel.waitFor({ state: "hidden" });

      // Another configuration: one without diagnostics if the recording has one, else the last.
      const empty = configurations.find((c) => diagnostics(c).length === 0);
      const other = empty ?? configurations.at(-1);
      await frame.getByLabel("Configuration").selectOption(other);
      await frame.locator(".bar").getByText(counted(diagnostics(other).length)).waitFor();
      if (empty !== undefined) assert.equal(await frame.locator(".dg").count(), 0);
      if (spans(other).length) assert.ok((await frame.locator("[class*='sem-']").count()) > 0, `${other} has semantic colors`);
    });
  });

  test("result: diff lines show clangd diagnostics with the same hover panel", async () => {
    const fixture = readFixture("workspace-result/edit-clangd");
    const { configurations, diagnostics } = clangdOf(fixture);
    const shown = new Set(JSON.parse(linked(fixture, "diff").text).hunks.flatMap((h) => h.lines.map((l) => l.after_line)));
    const target = pick(diagnostics(configurations[0]).filter((d) => shown.has(d.range.start.line)));
    assert.ok(target?.related.length, "the recording has a diagnostic with notes on a diff line");
    await withWidget({ widget: "workspace-result", fixture: "edit-clangd" }, async ({ frame }) => {
      const underline = frame.locator(".code .dg").first();
      await underline.hover();
      const panel = await panelShows(frame, target);
      await underline.press("Escape");
      await panel.waitFor({ state: "hidden" });
    });
  });

  test("search: groups collapse, clipped lines expand, skipped files load in their tab", () =>
    withWidget({ widget: "workspace-search", fixture: "literal" }, async ({ frame }) => {
      assert.equal(await frame.locator("details.group").count(), 5);
      assert.equal(await frame.locator(".code mark:not(.find)").count(), 18);
      const first = frame.locator("details.group").first();
      await first.locator("summary").click();
      assert.equal(await first.evaluate((d) => d.open), false);
      await first.locator("summary").click();
      const clipped = frame.locator(".clip").first();
      assert.match(await clipped.innerText(), /^…/);
      await clipped.click();
      await frame.getByText("Design note: every operation", { exact: false }).waitFor();
      await frame.getByRole("tab", { name: "Skipped files (2)" }).click();
      await frame.locator(".skipped li").nth(1).waitFor();
      assert.deepEqual((await frame.locator(".skipped li").allInnerTexts()).map((t) => t.trim()), ["project/assets/latin1.txt", "project/assets/logo.bin"]);
    }));

  test("search: a host without resource reads only affects the skipped-files tab", () =>
    withWidget({ widget: "workspace-search", fixture: "literal", resources: false }, async ({ frame }) => {
      await frame.getByRole("tab", { name: "Skipped files (2)" }).click();
      await frame.locator(".err").waitFor();
      assert.match(await frame.locator(".err").innerText(), /not available/);
      await frame.getByRole("tab", { name: "Matches" }).click();
      assert.equal(await frame.locator("details.group").count(), 5);
    }));

  test("result: diff with Highlight changes next to Wrap lines, and a separate find color", () =>
    withWidget({ widget: "workspace-result", fixture: "write-overwritten" }, async ({ page, frame }) => {
      await frame.locator(".code .add").first().waitFor();
      const buttons = await frame.locator(".bar button").allInnerTexts();
      assert.deepEqual(buttons.slice(-2), ["Highlight changes", "Wrap lines"]);
      assert.ok((await frame.locator(".chg").count()) >= 4, "changed substrings are highlighted");
      await frame.getByRole("button", { name: "Highlight changes" }).click();
      assert.equal(await frame.locator(".chg").count(), 0);
      await frame.getByRole("button", { name: "Wrap lines" }).click();
      await frame.locator(".code.wrap").waitFor();
      await frame.getByPlaceholder("Find in diff").fill("radians");
      assert.equal(await frame.locator("mark.find").count(), 1);
      assert.match(await frame.locator(".bar").innerText(), /5 lines removed, 6 lines added/);
      await screenshot(page, "workspace-result-diff-wrapped");
    }));

  test("result: a failed diff read keeps the successful outcome", () =>
    withWidget({ widget: "workspace-result", fixture: "edit", resources: false }, async ({ frame }) => {
      await frame.locator(".err").waitFor();
      assert.equal(await frame.locator("header .pill").innerText(), "Edited");
    }));

  test("result: the move confirmation is two rows, source and destination", () =>
    withWidget({ widget: "workspace-result", fixture: "move" }, async ({ frame }) => {
      assert.deepEqual(await frame.locator(".fields th").allInnerTexts(), ["Source", "Destination"]);
    }));

  test("result: a tool error shows its message", () =>
    withWidget({ widget: "workspace-result", fixture: "error" }, async ({ frame }) => {
      assert.match(await frame.locator(".err").innerText(), /does not occur/);
      assert.equal(await frame.locator("header .pill").innerText(), "Error");
    }));

  test("process details: times readable to seconds, exact values in titles and JSON", () =>
    withWidget({ widget: "process-details", fixture: "default" }, async ({ frame }) => {
      const time = frame.locator(".entry .sub span[title]").first();
      assert.equal(await time.innerText(), "7 Sept 2026, 12:45:13 UTC");
      assert.equal(await time.getAttribute("title"), "2026-09-07T12:45:13.623456Z");
      // stdout, stderr, stdout: three runs; without stderr the two stdout fragments share a header.
      assert.equal(await frame.locator(".entry").count(), 3);
      await frame.getByRole("button", { name: "stderr" }).click();
      assert.equal(await frame.locator(".entry").count(), 1);
      assert.equal(await frame.locator(".entry .sub .stream-stdout").count(), 1);
      assert.match(await frame.locator(".entry pre").innerText(), /compiler identification[\s\S]*Configuring done/);
      await frame.getByRole("button", { name: "stderr" }).click();
      await frame.getByPlaceholder("Filter transcript").fill("warning");
      assert.equal(await frame.locator(".entry").count(), 1);
      await frame.getByRole("tab", { name: "Process" }).click();
      assert.match(await frame.locator(".fields").innerText(), /Work time\s+1\.235 s/);
      await frame.getByRole("tab", { name: "JSON" }).click();
      assert.match(await frame.locator("pre.json").innerText(), /"work_time": 1\.234567/);
    }));

  test("process details: error lines stand out", () =>
    withWidget({ widget: "process-details", fixture: "failed-last-lines" }, async ({ frame }) => {
      assert.equal(await frame.locator(".error-line").first().innerText(), "FAILED: demo");
    }));

  test("process overview: running-only filter", () =>
    withWidget({ widget: "process-overview", fixture: "all" }, async ({ frame }) => {
      assert.equal(await frame.locator(".card.process").count(), 3);
      await frame.getByRole("button", { name: "Running only" }).click();
      assert.equal(await frame.locator(".card.process").count(), 1);
    }));

  test("cmake test: per-test results with filters", () =>
    withWidget({ widget: "cmake-test", fixture: "mixed" }, async ({ frame }) => {
      assert.equal(await frame.locator("li.test").count(), 5);
      await frame.getByPlaceholder("Filter tests").fill("timeout");
      assert.equal(await frame.locator("li.test").count(), 1);
      await frame.getByText("sleeping for 5 seconds", { exact: false }).waitFor();
      await frame.getByPlaceholder("Filter tests").fill("");
      await frame.getByRole("button", { name: "Failed and not run only" }).click();
      assert.equal(await frame.locator("li.test").count(), 2);
    }));

  test("debug: a crash shows the signal, the stack, the marked source line and the locals", () =>
    withWidget({ widget: "debug", fixture: "crash" }, async ({ frame }) => {
      await frame.getByText("Stopped by signal SIGSEGV", { exact: false }).waitFor();
      assert.equal((await frame.locator("header .pill").innerText()).trim(), "SIGSEGV");
      await frame.getByText("read_through", { exact: false }).first().waitFor();
      assert.match(await frame.locator(".code .tx.add").innerText(), /return \*ptr;/);
      await frame.locator(".tree").getByText("ptr", { exact: false }).first().waitFor();
    }));

  test("debug: a breakpoint stop shows nested locals, its output tab and bound breakpoints", () =>
    withWidget({ widget: "debug", fixture: "breakpoint" }, async ({ frame }) => {
      await frame.getByText("Stopped at a breakpoint", { exact: false }).waitFor();
      await frame.locator(".tree details summary").getByText("origin", { exact: false }).waitFor();
      await frame.getByRole("tab", { name: "Breakpoints" }).click();
      await frame.getByText("Not bound").waitFor();
      await frame.getByText("nowhere_at_all").waitFor();
    }));

  test("debug: sessions and an evaluated value", async () => {
    await withWidget({ widget: "debug", fixture: "sessions" }, async ({ frame }) => {
      await frame.getByText("Session 2").waitFor();
      await frame.getByText("project/build/probe").first().waitFor();
    });
    await withWidget({ widget: "debug", fixture: "evaluate" }, async ({ frame }) => {
      await frame.locator(".tree").getByText("y (int) = 4").waitFor();
    });
  });

  test("clangd: locations grouped by file, the selected one shows its saved excerpt", () =>
    withWidget({ widget: "clangd-result", fixture: "references" }, async ({ frame }) => {
      assert.deepEqual(
        (await frame.locator("details summary").allInnerTexts()).map((t) => t.trim()),
        ["project/include/geometry/vector.hpp (2)", "project/src/geometry/vector.cpp (2)", "project/src/main.cpp (2)"],
      );
      await frame.locator("button.location").nth(2).click();
      await frame.getByText("double Vector::length() const { return", { exact: false }).waitFor();
      assert.equal(await frame.locator(".code .tx.sel").count(), 1, "the location's own line is marked");
    }));

  test("clangd: external locations have no source preview, per configuration", () =>
    withWidget({ widget: "clangd-result", fixture: "definition-external" }, async ({ frame }) => {
      assert.deepEqual(await frame.locator(".answer > .sub").allInnerTexts(), ["Configurations: Debug", "Configurations: Release"]);
      assert.equal(await frame.locator("summary", { hasText: "root/usr/include/assert.h" }).count(), 2);
      assert.equal(await frame.getByText("Source preview unavailable.").count(), 2);
    }));

  test("clangd: severity cards with notes, errors-only filter", () =>
    withWidget({ widget: "clangd-result", fixture: "diagnostics" }, async ({ frame }) => {
      assert.equal(await frame.locator(".card.diag").count(), 5);
      assert.equal(await frame.locator(".card.diag.sev-error").count(), 2);
      await frame.getByText("Note at project/include/geometry/vector.hpp, line 13, character 11", { exact: false }).first().waitFor();
      await frame.getByRole("button", { name: "Errors only" }).click();
      assert.equal(await frame.locator(".card.diag").count(), 2);
      assert.match(await frame.locator("header").innerText(), /5 diagnostics/);
    }));

  test("clangd: hover renders Markdown with a C++ signature block; outline collapses", async () => {
    await withWidget({ widget: "clangd-result", fixture: "hover" }, async ({ frame }) => {
      await frame.locator(".md code", { hasText: "sqrt(x * x + y * y)" }).waitFor();
      assert.ok((await frame.locator(".md pre .t-k").count()) > 0, "the signature block is C++-colored");
    });
    await withWidget({ widget: "clangd-result", fixture: "document-symbols" }, async ({ frame }) => {
      const vector = frame.locator("details", { hasText: "Vector" }).last();
      await vector.getByText("normalized").waitFor();
      await vector.locator("summary").first().click();
      assert.equal(await vector.evaluate((d) => d.open), false);
    });
  });

  test("copy all puts the complete JSON result on the clipboard", () =>
    withWidget({ widget: "cmake-build", fixture: "mixed" }, async ({ page, frame }) => {
      await env.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: env.servers.hostOrigin });
      await frame.locator("header .copy").click();
      await frame.locator("header .copy[data-copied]").waitFor();
      const copied = JSON.parse(await page.evaluate(() => navigator.clipboard.readText()));
      assert.equal(copied.structuredContent.result[1].profile, "presets");
      assert.match(copied.structuredContent.result[1].error, /has no build presets/);
    }));
});
