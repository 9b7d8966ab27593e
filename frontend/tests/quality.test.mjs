// The quality widgets on their recorded fixtures: clang-tidy diagnostics grouped by file with fix-it
// previews and the fixable-only toggle, the changed file's diff after applying fix-its, and
// clang-format's per-file diffs with highlighting. Expectations are read from the fixtures.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";

import { fixtures } from "./harness/server.mjs";
import { widgetSession } from "./harness/session.mjs";

const { skip, withWidget } = widgetSession();

const readFixture = (widget, name) => JSON.parse(readFileSync(join(fixtures, widget, `${name}.json`), "utf8"));

describe("quality widgets", { skip }, () => {
  test("tidy: diagnostics grouped by file with check names and fix-it previews", () => {
    const fixture = readFixture("quality-tidy", "tree");
    const result = fixture.result.structuredContent;
    const diagnostics = result.files.flatMap((f) => f.diagnostics);
    const fixable = diagnostics.filter((d) => d.fixes.length > 0);
    assert.ok(fixable.length > 0 && fixable.length < diagnostics.length, "the fixture has fixable and other diagnostics");
    return withWidget({ widget: "quality-tidy", fixture: "tree" }, async ({ frame }) => {
      const summaries = (await frame.locator("details summary").allInnerTexts()).map((t) => t.trim());
      assert.deepEqual(
        summaries.map((s) => s.split(" ")[0]),
        result.files.map((f) => f.path),
      );
      assert.equal(await frame.locator(".card.diag").count(), diagnostics.length);
      const first = fixable[0];
      await frame.locator(".card.diag .mono", { hasText: first.code }).first().waitFor();
      const fix = frame.locator(".fix").first();
      assert.match(await fix.innerText(), new RegExp(`-\\s*${first.fixes[0].old_text}[\\s\\S]*\\+\\s*${first.fixes[0].new_text}`));
      assert.equal(await fix.locator(".tx.del").count(), 1);
      assert.equal(await fix.locator(".tx.add").count(), 1);
      await frame.getByRole("button", { name: "With fix-its" }).click();
      assert.equal(await frame.locator(".card.diag").count(), fixable.length);
      assert.match(await frame.locator("header").innerText(), new RegExp(`${diagnostics.length} diagnostics`));
    });
  });

  test("tidy: applied fix-its show the changed file's diff", () => {
    const fixture = readFixture("quality-tidy", "apply");
    const changed = fixture.result.structuredContent.changed;
    assert.equal(changed.length, 1);
    const diff = JSON.parse(fixture.resources[changed[0].resources.diff.uri].contents[0].text);
    const added = diff.hunks.flatMap((h) => h.lines).filter((l) => l.kind === "added");
    return withWidget({ widget: "quality-tidy", fixture: "apply" }, async ({ frame }) => {
      await frame.getByRole("tab", { name: "Changes" }).click();
      await frame.getByText(`Changed ${changed[0].path}`).waitFor();
      await frame.locator(".code .tx.add").first().waitFor();
      assert.equal(await frame.locator(".code .tx.add").count(), added.length);
      assert.ok((await frame.locator(".code .tx.add .chg").count()) > 0, "changed substrings are highlighted");
    });
  });

  test("format: one diff per file, highlight toggle and find", () => {
    const fixture = readFixture("quality-format", "check");
    const files = fixture.result.structuredContent.files;
    assert.ok(files.length > 0);
    return withWidget({ widget: "quality-format", fixture: "check" }, async ({ frame }) => {
      const summaries = (await frame.locator("details summary").allInnerTexts()).map((t) => t.trim().split(" ")[0]);
      assert.deepEqual(summaries, files.map((f) => f.path));
      await frame.locator(".code .tx.del").first().waitFor();
      const highlighted = await frame.locator(".code .chg").count();
      assert.ok(highlighted > 0);
      await frame.getByRole("button", { name: "Highlight changes" }).click();
      assert.equal(await frame.locator(".code .chg").count(), 0);
      await frame.getByPlaceholder("Find in diffs").fill("return");
      assert.ok((await frame.locator("mark.find").count()) > 0);
      await frame.getByRole("tab", { name: "Summary" }).click();
      await frame.getByText("Check", { exact: true }).waitFor();
    });
  });

  test("format: applied files say they were written", () =>
    withWidget({ widget: "quality-format", fixture: "apply" }, async ({ frame }) => {
      await frame.locator("summary .pill", { hasText: "written" }).waitFor();
      assert.match(await frame.locator("header").innerText(), /1 file reformatted/);
    }));
});
