// The admin panel end to end: real `forgemcp` instances on two workspaces, the real detached Hub
// they start, the real `--open-admin`, and Debian's Chromium. Covers the acceptance list of the admin
// Hub issue: tabs per instance, client calls with progress and widget, panel calls with progress and
// cancel, elicitation answered in the browser, widget isolation, Hub restart, Hub exit, stdout purity;
// and the undo journal's view: changes with diffs, a revert after a dry run and a confirmation.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { browserMissing, browserScript } from "./harness/browser.mjs";
import { adminGroup, alive, binaryMissing, freePort, Instance, openAdmin, waitFor } from "./harness/forgemcp.mjs";
import { artifacts } from "./harness/page.mjs";
import { assets } from "./harness/server.mjs";

/** A full-page screenshot in test-artifacts/ for visual review. */
const shoot = async (page, name) => {
  mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: join(artifacts, `admin-${name}.png`), fullPage: true });
};

const skip = browserMissing() || binaryMissing();
const env = {};

function workspace(name, files) {
  const dir = join(env.group.base, name);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** A fake tool that prints a version at once, and one that hangs (slow version probes). */
function tools() {
  const dir = join(env.group.base, "tools");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "ninja"), "#!/bin/sh\necho 1.11.1\n");
  writeFileSync(join(dir, "cmake"), "#!/bin/sh\nexec sleep 60\n");
  chmodSync(join(dir, "ninja"), 0o755);
  chmodSync(join(dir, "cmake"), 0o755);
  return dir;
}

async function login(page) {
  const opened = openAdmin(env.group);
  assert.equal(opened.status, 0, opened.stderr);
  assert.ok(opened.url, "the fake browser was given the private page");
  assert.doesNotMatch(opened.stdout + opened.stderr, /token=/, "--open-admin never prints the token");
  await page.goto(opened.url);
  await page.getByTestId("hub-state").filter({ hasText: "Hub connected" }).waitFor();
  return opened.url;
}

/** A widget's rendered header inside a locator's widget box. */
const widgetHeader = (within) => within.frameLocator('[data-testid="widget-box"] iframe').frameLocator("iframe").locator("header h1");

const STATUS_TOOLS = ["processes_overview", "toolsets_list", "cmake_profiles", "clangd_configurations"];

/** The panel's views and what shows each has rendered. */
const VIEWS = [
  ["History", (page) => widgetHeader(page.getByTestId("call-detail")).waitFor()],
  ["Tools", (page) => page.getByTestId("tool-detail").waitFor()],
  ["Resources", (page) => page.getByTestId("resource-uri").waitFor()],
  [
    "Status",
    async (page) => {
      for (const tool of STATUS_TOOLS) await widgetHeader(page.locator(`[data-testid="status-section"][data-tool="${tool}"]`)).waitFor();
    },
  ],
  ["Settings", (page) => page.getByTestId("settings").waitFor()],
];

const tab = (page, name) => page.getByTestId("instance-tab").filter({ hasText: name });

before(async () => {
  if (skip) return;
  env.group = adminGroup();
  env.port = await freePort();
  const bin = tools();
  env.wsA = workspace("alpha", { "src/main.cpp": "int main() { return 0; } // needle\n", "README.md": "needle in a haystack\n" });
  env.wsB = workspace("beta", { "lib/x.h": "#pragma once\n" });
  env.external = join(env.group.base, "external.txt");
  writeFileSync(env.external, "outside the workspace\n");
  env.a = await new Instance(env.group, env.wsA, env.port, ["--toolset", "slowset", `cmake=${bin}/cmake`, `ninja=${bin}/ninja`]).initialize();
  env.b = await new Instance(env.group, env.wsB, env.port).initialize();
  env.browser = browserScript(env.group.base, await freePort());
  env.errors = [];
});

/** The first sign-in, exactly as a person does it: `--open-admin` starts the browser on its page. */
async function signInThroughOpenAdmin() {
  const opened = openAdmin(env.group, { browser: env.browser.script });
  assert.equal(opened.status, 0, opened.stderr);
  assert.match(opened.stderr, /opened the admin panel in your browser/);
  assert.doesNotMatch(opened.stdout + opened.stderr, /token=/, "--open-admin never prints the token");
  const browser = await env.browser.connect();
  env.context = browser.context;
  env.close = browser.close;
  const page = await waitFor(() => env.context.pages().find((p) => p.url() === env.publicUrl), {
    timeout: 60_000,
    what: "the browser to reach the panel",
  });
  // A busy 2-core CI machine can take well over Playwright's 30 s default for the nested widget frames.
  page.setDefaultTimeout(90_000);
  page.on("pageerror", (error) => env.errors.push(error.message));
  await page.setViewportSize({ width: 720, height: 460 });
  await page.getByTestId("hub-state").filter({ hasText: "Hub connected" }).waitFor();
  env.page = page;
}

after(async () => {
  await env.close?.();
  for (const instance of [env.a, env.b]) {
    if (instance && instance.child.exitCode === null) instance.child.kill("SIGKILL");
  }
  const hub = env.group?.hubPid();
  if (hub && alive(hub)) process.kill(hub, "SIGKILL");
  env.group?.cleanup();
});

describe("the admin panel against real instances and a real Hub", { skip }, () => {
  test("the built pages are self-contained and carry their placeholders", () => {
    const admin = readFileSync(join(assets, "admin.html"), "utf8");
    const sandbox = readFileSync(join(assets, "sandbox.html"), "utf8");
    for (const html of [admin, sandbox]) {
      assert.ok(html.startsWith("<!doctype html>"));
      assert.doesNotMatch(html, /<script[^>]+src=|<link[^>]+href=/i, "no external scripts or styles");
      assert.doesNotMatch(html, /\beval\(|new Function\b/, "no eval");
    }
    assert.match(admin, /__FORGEMCP_CSRF__/);
    assert.match(admin, /__FORGEMCP_SANDBOX_ORIGIN__/);
    assert.match(sandbox, /__FORGEMCP_ADMIN_ORIGIN__/);
    assert.match(sandbox, /allow-scripts/);
    assert.doesNotMatch(sandbox, /allow-same-origin/, "the inner widget frame never gets its origin");
  });

  test("each instance prints the public address and the --open-admin command, never a token", async () => {
    const [urlA, urlB] = await Promise.all([env.a.publicUrl(), env.b.publicUrl()]);
    assert.equal(urlA, urlB, "one Hub for the group");
    assert.equal(urlA, `http://127.0.0.1:${env.port}/`);
    assert.doesNotMatch(env.a.stderr + env.b.stderr, /token=/);
    env.publicUrl = urlA;
  });

  test("--open-admin signs the browser it starts in", async () => {
    await signInThroughOpenAdmin();
    const address = await env.page.evaluate(() => location.href);
    assert.equal(address, env.publicUrl, "the token left the address bar");
    await env.page.reload();
    await env.page.getByTestId("hub-state").filter({ hasText: "Hub connected" }).waitFor();
  });

  test("the public address alone signs nobody in", async () => {
    const page = await env.context.browser().newContext().then((c) => c.newPage());
    const response = await page.goto(env.publicUrl);
    assert.equal(response.status(), 401);
    assert.match(await page.locator("body").innerText(), /forgemcp --open-admin/);
    await page.context().close();
  });

  test("two instances on two workspaces appear as two tabs", async () => {
    await waitFor(async () => (await env.page.getByTestId("instance-tab").count()) === 2, { what: "two tabs" });
    await tab(env.page, "alpha").waitFor();
    await tab(env.page, "beta").waitFor();
    // The instances joined at start-up; the tab names the MCP client once it initialized.
    await tab(env.page, "alpha").getByTestId("instance-client").filter({ hasText: "forgemcp-browser-tests 0" }).waitFor();
    const url = env.page.url();
    assert.equal(url, env.publicUrl, "the token left the address bar");
  });

  test("a login link works once", async () => {
    const { url } = openAdmin(env.group);
    const first = await fetch(url, { redirect: "manual" });
    assert.equal(first.status, 200, "a same-origin page moves on to the panel");
    assert.match(await first.text(), /<meta http-equiv="refresh" content="0;url=\/">/);
    assert.match(first.headers.get("set-cookie") ?? "", new RegExp(`^forgemcp_session_${env.port}=.+; HttpOnly; SameSite=Strict; Path=/$`));
    const again = await fetch(url, { redirect: "manual" });
    assert.equal(again.status, 403);
    assert.equal(again.headers.get("set-cookie"), null);
  });

  test("a call made by the MCP client shows in history with progress and its widget", async () => {
    const result = await env.a.callTool("workspace_text_search", { query: "needle" }, "client-1");
    assert.notEqual(result.isError, true);
    assert.ok(env.a.progressFor("client-1").length > 0, "the MCP client got progress");
    const page = env.page;
    await tab(page, "alpha").click();
    const entry = page.getByTestId("history-entry").filter({ hasText: "workspace_text_search" }).first();
    await entry.waitFor();
    assert.equal(await entry.getAttribute("data-origin"), "client");
    await entry.click();
    const detail = page.getByTestId("call-detail");
    await detail.getByTestId("call-state").filter({ hasText: "completed" }).waitFor();
    assert.ok((await detail.getByTestId("progress").locator("li").count()) > 0, "progress is in the history");
    const widget = page.frameLocator('[data-testid="widget-box"] iframe').frameLocator("iframe");
    await widget.locator("header h1").waitFor();
    await shoot(page, "client-call");
    await widget.getByText("needle").first().waitFor();
    await detail.getByRole("tab", { name: "Text" }).click();
    assert.match(await detail.getByTestId("call-text").innerText(), /needle/);
    await detail.getByRole("tab", { name: "JSON" }).click();
    assert.match(await detail.getByTestId("call-json").innerText(), /"structuredContent"/);
    assert.equal(await detail.getByTestId("call-cancel").count(), 0, "the panel cannot cancel a client call");
  });

  test("a widget in the sandbox cannot reach the panel's API", async () => {
    const page = env.page;
    const detail = page.getByTestId("call-detail");
    await detail.getByRole("tab", { name: "Widget" }).click();
    const outer = page.frameLocator('[data-testid="widget-box"] iframe');
    await outer.frameLocator("iframe").locator("header h1").waitFor();
    const frames = page.frames();
    const proxy = frames.find((f) => f.url().includes("/sandbox.html"));
    const view = frames.find((f) => f.parentFrame() === proxy);
    assert.ok(proxy && view, "the proxy and the widget frames exist");
    const api = `${env.publicUrl}api/instances`;
    const probe = (target) =>
      fetch(target, { credentials: "include" }).then(
        (r) => `fetched ${r.status}`,
        (e) => `blocked ${e.name}`,
      );
    assert.match(await view.evaluate(probe, api), /^blocked/);
    assert.match(await proxy.evaluate(probe, api), /^blocked/);
    assert.equal(await view.evaluate(() => { try { return String(parent.document); } catch (e) { return e.name; } }), "SecurityError");
  });

  test("with controls enabled, a panel call runs, shows progress and can be cancelled", async () => {
    const page = env.page;
    await tab(page, "alpha").click();
    const instance = page.getByTestId("instance");
    assert.equal(await page.getByTestId("call-form").count(), 0, "command controls start hidden");
    await page.getByTestId("controls-toggle").check();
    await instance.getByRole("tab", { name: "Tools" }).click();
    await page.getByTestId("tool").filter({ hasText: "toolset_get" }).click();
    const id = `user-${createHash("sha256").update("slowset").digest("hex")}`;
    await page.getByTestId("call-arguments").fill(JSON.stringify({ toolset_id: id }));
    await page.getByTestId("call-run").click();
    const detail = page.getByTestId("call-detail");
    await detail.getByTestId("call-state").filter({ hasText: "running" }).waitFor();
    assert.match(await detail.getAttribute("data-call"), /^\d+$/);
    await detail.getByTestId("progress").getByText("Read ninja").waitFor();
    const entry = page.getByTestId("history-entry").filter({ hasText: "toolset_get" }).first();
    assert.equal(await entry.getAttribute("data-origin"), "panel");
    await detail.getByTestId("call-cancel").click();
    await detail.getByTestId("call-state").filter({ hasText: "cancelled" }).waitFor();
    assert.equal(await entry.getAttribute("data-state"), "cancelled");
  });

  test("invalid arguments are refused by the same validation as stdio calls", async () => {
    const page = env.page;
    await page.getByTestId("instance").getByRole("tab", { name: "Tools" }).click();
    await page.getByTestId("tool").filter({ hasText: "workspace_list" }).click();
    await page.getByTestId("call-arguments").fill(JSON.stringify({ path: "../outside" }));
    await page.getByTestId("call-run").click();
    const detail = page.getByTestId("call-detail");
    await detail.getByTestId("call-state").filter({ hasText: "tool error" }).waitFor();
    await detail.getByRole("tab", { name: "Text" }).click();
    assert.match(await detail.getByTestId("call-text").innerText(), /path/);
  });

  test("the journal view shows the changes with their diffs and reverts after a dry run and a confirmation", async () => {
    const notes = join(env.wsA, "notes.txt");
    const write = await env.a.callTool("workspace_write_file", { path: "project/notes.txt", text: "first line\n" });
    assert.notEqual(write.isError, true);
    const edit = await env.a.callTool("workspace_edit_file", { path: "project/notes.txt", old_text: "first", new_text: "second" });
    assert.notEqual(edit.isError, true);
    const listed = await env.a.callTool("workspace_history", { path: "project/notes.txt" });
    const first = listed.structuredContent.changes.at(-1).id;
    const page = env.page;
    await tab(page, "alpha").click();
    await page.getByTestId("instance").getByRole("tab", { name: "Journal" }).click();
    const frame = (testid) => page.getByTestId(testid).frameLocator('[data-testid="widget-box"] iframe').frameLocator("iframe");
    const history = frame("journal-history");
    await history.getByText("workspace_edit_file").first().waitFor();
    await history.getByTestId("journal-diff").first().locator("summary").click();
    await history.getByText("second line").first().waitFor();
    await shoot(page, "journal");
    // At 720 px wide (this page's size) the journal view fits: nothing scrolls sideways, the
    // history, its open diff and the revert controls all lie inside the viewport.
    assert.equal(page.viewportSize().width, 720);
    const fits = () => document.documentElement.scrollWidth <= document.documentElement.clientWidth;
    assert.ok(await page.evaluate(fits), "the journal view fits 720 px");
    assert.ok(await history.locator("body").evaluate((b) => b.ownerDocument.documentElement.scrollWidth <= b.ownerDocument.documentElement.clientWidth + 1), "the history widget fits 720 px");
    for (const id of ["journal-history", "journal-target", "journal-dry-run", "journal-revert"]) {
      const box = await page.getByTestId(id).boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= 720, `${id} lies within 720 px: ${JSON.stringify(box)}`);
    }
    const diff = await history.getByTestId("journal-diff").first().boundingBox();
    const frameBox = await page.getByTestId("journal-history").boundingBox();
    assert.ok(diff && frameBox && diff.width <= frameBox.width, `the open diff lies within the history: ${JSON.stringify([diff, frameBox])}`);
    await page.getByTestId("journal-target").fill(String(first));
    assert.equal(await page.getByTestId("journal-revert").isDisabled(), true, "no revert before a dry run");
    await page.getByTestId("journal-dry-run").click();
    await page.locator('[data-testid="journal-dry-run-result"][data-state="completed"]').waitFor();
    await frame("journal-dry-run-result").getByText("Dry run").first().waitFor();
    await shoot(page, "journal-dry-run");
    assert.equal(readFileSync(notes, "utf8"), "second line\n", "a dry run changes nothing");
    let asked = "";
    page.once("dialog", (dialog) => {
      asked = dialog.message();
      void dialog.accept();
    });
    await page.getByTestId("journal-revert").click();
    await page.locator('[data-testid="journal-revert-result"][data-state="completed"]').waitFor();
    assert.match(asked, new RegExp(`before change #${first}`));
    assert.equal(existsSync(notes), false, "the file the client created is gone");
    await frame("journal-history").getByText("admin panel").first().waitFor();
    await shoot(page, "journal-reverted");
  });

  test("a panel root/ read raises an elicitation answered in the browser", async () => {
    const page = env.page;
    await page.getByTestId("instance").getByRole("tab", { name: "Tools" }).click();
    await page.getByTestId("tool").filter({ hasText: "workspace_read_file" }).click();
    await page.getByTestId("call-arguments").fill(JSON.stringify({ path: `root${env.external}` }));
    await page.getByTestId("call-run").click();
    const question = page.getByTestId("elicitation");
    await question.waitFor();
    assert.match(await question.getByTestId("elicitation-message").innerText(), /external\.txt/);
    await question.getByTestId("elicitation-field-allow").check();
    await question.getByTestId("elicitation-accept").click();
    const detail = page.getByTestId("call-detail");
    await detail.getByTestId("call-state").filter({ hasText: "completed" }).waitFor();
    await detail.getByRole("tab", { name: "Text" }).click();
    assert.match(await detail.getByTestId("call-text").innerText(), /outside the workspace/);
    assert.equal(await page.getByTestId("elicitation").count(), 0, "the question is gone");
  });

  test("a widget reads its own result resources and nothing else", async () => {
    const page = env.page;
    await page.getByTestId("instance").getByRole("tab", { name: "Tools" }).click();
    await page.getByTestId("tool").filter({ hasText: "workspace_write_file" }).click();
    await page.getByTestId("call-arguments").fill(JSON.stringify({ path: "notes.txt", text: "first line\nsecond line\n" }));
    await page.getByTestId("call-run").click();
    const detail = page.getByTestId("call-detail");
    await detail.getByTestId("call-state").filter({ hasText: "completed" }).waitFor();
    const widget = page.frameLocator('[data-testid="widget-box"] iframe').frameLocator("iframe");
    // The diff comes from the result's own `resources.diff` link, read through the host.
    await widget.getByText("second line").first().waitFor();
    const view = page.frames().find((f) => f.parentFrame()?.url().includes("/sandbox.html"));
    const ask = (method, params) =>
      view.evaluate(
        ([method, params]) =>
          new Promise((ok) => {
            const id = 4242;
            addEventListener("message", (event) => {
              if (event.data?.id === id) ok(event.data);
            });
            parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
          }),
        [method, params],
      );
    const other = await ask("resources/read", { uri: "forgemcp://processes" });
    assert.equal(other.error?.code, -32002, JSON.stringify(other));
    const call = await ask("tools/call", { name: "workspace_list", arguments: {} });
    assert.equal(call.error?.code, -32601, JSON.stringify(call));
  });

  test("a widget whose document arrives after its call ended still gets the result", async () => {
    const page = env.page;
    // The widget document (a ui:// read) is held back until the call, running when its widget pane
    // opened, has ended; the host must then start from the ended call.
    let release;
    const released = new Promise((ok) => (release = ok));
    const held = async (route) => {
      if (String(route.request().postDataJSON()?.uri).startsWith("ui://")) await released;
      await route.continue();
    };
    await page.route("**/resources/read", held);
    try {
      await page.reload(); // nothing cached: every widget document is read again
      await page.getByTestId("hub-state").filter({ hasText: "Hub connected" }).waitFor();
      await tab(page, "alpha").click();
      if (!(await page.getByTestId("controls-toggle").isChecked())) await page.getByTestId("controls-toggle").check();
      await page.getByTestId("instance").getByRole("tab", { name: "Tools" }).click();
      await page.getByTestId("tool").filter({ hasText: "workspace_read_file" }).click();
      await page.getByTestId("call-arguments").fill(JSON.stringify({ path: `root${env.external}` }));
      await page.getByTestId("call-run").click();
      const detail = page.getByTestId("call-detail");
      await detail.getByTestId("call-state").filter({ hasText: "running" }).waitFor();
      const question = page.getByTestId("elicitation");
      await question.getByTestId("elicitation-field-allow").check();
      await question.getByTestId("elicitation-accept").click();
      await detail.getByTestId("call-state").filter({ hasText: "completed" }).waitFor();
      release();
      const widget = page.frameLocator('[data-testid="widget-box"] iframe').frameLocator("iframe");
      await widget.getByText("outside the workspace").first().waitFor({ timeout: 20_000 });
    } finally {
      release();
      await page.unroute("**/resources/read", held);
    }
  });

  test("an open widget follows the panel between light and dark", async () => {
    const page = env.page;
    const widget = page.frameLocator('[data-testid="widget-box"] iframe').frameLocator("iframe");
    const background = () => widget.locator("body").evaluate((b) => getComputedStyle(b).backgroundColor);
    const luminance = (rgb) => rgb.match(/\d+/g).slice(0, 3).reduce((a, b) => a + Number(b), 0) / 3;
    await widget.locator("header h1").waitFor();
    await page.emulateMedia({ colorScheme: "light" });
    await waitFor(async () => luminance(await background()) > 128, { what: "a light widget" });
    await page.emulateMedia({ colorScheme: "dark" });
    await waitFor(async () => luminance(await background()) < 128, { what: "a dark widget" });
    await page.emulateMedia({ colorScheme: "light" });
    await waitFor(async () => luminance(await background()) > 128, { what: "a light widget again" });
  });

  test("the views: catalog filter, descriptions and prefill; status widgets; readable settings; references; both themes and widths", async () => {
    const page = env.page;
    await tab(page, "alpha").click();
    const instance = page.getByTestId("instance");
    if (!(await page.getByTestId("controls-toggle").isChecked())) await page.getByTestId("controls-toggle").check();

    await instance.getByRole("tab", { name: "Tools" }).click();
    await page.getByTestId("tool-filter").fill("edit_file");
    await waitFor(async () => (await page.getByTestId("tool").count()) === 1, { what: "one tool left by the filter" });
    const description = page.getByTestId("tool-description");
    assert.doesNotMatch(await description.innerText(), /`/, "code spans are rendered, not raw backticks");
    assert.ok((await description.locator("code").count()) > 0);
    const { tools } = await env.a.request("tools/list");
    const required = tools.find((t) => t.name === "workspace_edit_file").inputSchema.required;
    const prefilled = JSON.parse(await page.getByTestId("call-arguments").inputValue());
    assert.deepEqual(Object.keys(prefilled).sort(), [...required].sort(), "the required arguments are filled in");
    await page.getByTestId("tool-filter").fill("");

    await instance.getByRole("tab", { name: "Status" }).click();
    for (const tool of STATUS_TOOLS) await widgetHeader(page.locator(`[data-testid="status-section"][data-tool="${tool}"]`)).waitFor();
    assert.doesNotMatch(await page.getByTestId("status").innerText(), /\d{2}:\d{2}:\d{2}\.\d{3,}|\d{4}-\d{2}-\d{2}T/, "readable times only");

    await instance.getByRole("tab", { name: "Settings" }).click();
    const settings = await page.getByTestId("settings").locator("table.fields").first().innerText();
    assert.doesNotMatch(settings, /PlainProfile|QualifiedPath|[{}]/, "no Debug dumps or raw JSON");
    assert.match(settings, /Workspace storage/);

    await instance.getByRole("tab", { name: "Resources" }).click();
    await page.getByTestId("resource-uri").fill("forgemcp://processes");
    await page.getByTestId("resource-read").click();
    const reference = page.getByTestId("process-ref").first();
    const target = (await reference.innerText()).trim();
    await reference.click();
    await page.getByTestId("resource-result").locator(".mono.sub").filter({ hasText: target }).waitFor();
    // The URI shows at once with "Reading…"; the document follows when the read answers.
    await page.getByTestId("resource-result").filter({ hasText: /Outcome|Executable/i }).waitFor();
    assert.match(await page.getByTestId("resource-result").innerText(), /Outcome|Executable/i);

    await instance.getByRole("tab", { name: "History" }).click();
    await page.getByTestId("history-entry").filter({ hasText: "toolset_get" }).first().click();
    for (const row of await page.getByTestId("progress").locator("li").allInnerTexts()) {
      assert.doesNotMatch(row, /UTC\s+0(\s|$)/, `no bare counter: ${row}`);
    }

    await page.getByTestId("history-entry").filter({ hasText: "workspace_text_search" }).first().click();

    // Every view, light and dark, wide and narrow; tool names stay whole down to 360 px.
    for (const width of [1280, 420, 360]) {
      // Tall enough that every widget frame is painted (frames below the fold may not be).
      await page.setViewportSize({ width, height: 2400 });
      for (const name of await page.locator('[data-testid="history-entry"] .name').all()) {
        assert.ok(await name.evaluate((n) => n.scrollWidth <= n.clientWidth + 1), `a whole tool name at ${width} px`);
      }
      if (width === 360) continue;
      for (const scheme of ["light", "dark"]) {
        await page.emulateMedia({ colorScheme: scheme });
        for (const [view, ready] of VIEWS) {
          await instance.getByRole("tab", { name: view }).click();
          await ready(page);
          await shoot(page, `${view.toLowerCase()}-${scheme}-${width}`);
          assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth), `${view} fits ${width} px`);
        }
      }
    }
    await page.emulateMedia({ colorScheme: "light" });
    await page.setViewportSize({ width: 720, height: 460 });
    await instance.getByRole("tab", { name: "History" }).click();
  });

  test("killing the Hub shows instances reconnecting and a new Hub takes them back", async () => {
    const page = env.page;
    const old = env.group.hubPid();
    assert.ok(old && alive(old), "the Hub runs");
    process.kill(old, "SIGKILL");
    await page.getByTestId("hub-banner").waitFor();
    await waitFor(async () => (await page.locator('[data-testid="instance-tab"][data-state="reconnecting"]').count()) === 2, {
      what: "both tabs reconnecting",
    });
    // stdio is unaffected while the link is down or rejoining.
    const listed = await env.b.callTool("workspace_list", {});
    assert.notEqual(listed.isError, true);
    const fresh = await waitFor(() => {
      const pid = env.group.hubPid();
      return pid && pid !== old && alive(pid) ? pid : null;
    }, { what: "a new Hub" });
    assert.notEqual(fresh, old);
    await waitFor(() => /link lost|reconnecting/i.test(env.a.stderr) && /joined the admin Hub[\s\S]*joined the admin Hub/.test(env.a.stderr), {
      what: "instance alpha rejoined",
    });
    await login(page);
    await waitFor(async () => (await page.locator('[data-testid="instance-tab"][data-state="connected"]').count()) === 2, {
      what: "both instances back",
    });
    await tab(page, "alpha").click();
    await shoot(page, "after-hub-restart");
    await page.getByTestId("instance").getByText("link lost 1×").waitFor();
    // The history survived in the instance; nothing was replayed.
    await page.getByTestId("instance").getByRole("tab", { name: "History" }).click();
    const searches = page.getByTestId("history-entry").filter({ hasText: "workspace_text_search" });
    assert.equal(await searches.count(), 1);
  });

  test("--open-admin reports a Hub without a browser with status 3 and no token", () => {
    const opened = openAdmin(env.group, { browser: "fail" });
    assert.equal(opened.status, 3, opened.stderr);
    assert.doesNotMatch(opened.stdout + opened.stderr, /token=/);
    assert.equal(opened.stdout, "", "stdout stays empty");
  });

  test("the Hub exits after the last instance stops, and stdout stayed pure MCP", async () => {
    const hub = env.group.hubPid();
    assert.ok(hub && alive(hub));
    assert.equal(await env.a.stop(), 0);
    assert.ok(alive(hub), "one instance still uses the Hub");
    assert.equal(await env.b.stop(), 0);
    await waitFor(() => !alive(hub), { timeout: 20000, interval: 200, what: "the Hub to exit" });
    assert.ok(!existsSync(join(env.group.dir, `${env.group.name}.sock`)), "the socket is gone");
    assert.deepEqual(env.a.stdoutProblems, []);
    assert.deepEqual(env.b.stdoutProblems, []);
    const none = openAdmin(env.group);
    assert.equal(none.status, 1, none.stderr);
    assert.deepEqual(env.errors, [], "no page errors");
  });
});
