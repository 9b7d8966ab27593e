// Client set-up as the README describes it, with the real client CLIs: Claude Code and Codex are
// installed from the pinned lockfile in tests/clients/ into a temporary home, ForgeMCP is added with
// their one-line `mcp add` commands (absolute paths), and `claude mcp list` must report it connected
// (it starts the server and initializes it) while `codex mcp list` must list it. Neither needs a
// login. The MCP Inspector's CLI, from the same lockfile, must print no warning (such as a schema
// format it does not know) for tools/list and a call. The install downloads the CLIs from the npm registry, so this runs under CI or with
// FORGEMCP_HEAVY_TESTS=1.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";

import { alive, binary, binaryMissing } from "./harness/forgemcp.mjs";
import { frontend } from "./harness/server.mjs";

const heavy = Boolean(process.env.CI || process.env.FORGEMCP_HEAVY_TESTS);
if (!heavy) console.error("SKIPPING the client CLI test: it installs Claude Code and Codex (set FORGEMCP_HEAVY_TESTS=1)");
const skip = !heavy || binaryMissing();
const env = {};

/** Runs a command of the temporary installation; fails the test with its output when it fails. */
function run(command, args, { cwd = env.project, timeout = 120_000 } = {}) {
  const result = spawnSync(command, args, { cwd, env: env.vars, encoding: "utf8", timeout });
  const output = `${result.stdout ?? ""}${result.stderr ?? ""}`;
  assert.equal(result.status, 0, `${command} ${args.join(" ")} failed (${result.error ?? result.status}):\n${output}`);
  return output;
}

const bin = (name) => join(env.base, "node_modules", ".bin", name);

before(() => {
  if (skip) return;
  env.base = mkdtempSync(join(tmpdir(), "forgemcp-clients-"));
  const home = join(env.base, "home");
  const runtime = join(env.base, "runtime");
  env.project = join(env.base, "project");
  for (const dir of [home, join(home, ".codex"), env.project]) mkdirSync(dir, { recursive: true });
  mkdirSync(runtime, { mode: 0o700 });
  for (const file of ["package.json", "package-lock.json"]) copyFileSync(resolve(frontend, "tests/clients", file), join(env.base, file));
  env.group = `clients-${process.pid}`;
  env.vars = {
    PATH: process.env.PATH,
    HOME: home,
    CODEX_HOME: join(home, ".codex"),
    XDG_RUNTIME_DIR: runtime,
    DISABLE_AUTOUPDATER: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  };
  run("npm", ["ci", "--no-audit", "--no-fund"], { cwd: env.base, timeout: 900_000 });
  // The one-line commands of the README, with absolute paths.
  env.server = [binary, "--workspace", env.project, "--admin-ipc", env.group];
});

after(() => {
  if (!env.base) return;
  try {
    const pid = Number(readFileSync(join(env.vars.XDG_RUNTIME_DIR, "forgemcp", `${env.group}.lock`), "utf8").trim());
    if (pid > 0 && alive(pid)) process.kill(pid, "SIGKILL");
  } catch {
    // No Hub was started.
  }
  rmSync(env.base, { recursive: true, force: true });
});

describe("the client CLIs from the lockfile", { skip }, () => {
  test("claude mcp add, then claude mcp list reports ForgeMCP connected; a project .mcp.json awaits approval", () => {
    assert.match(run(bin("claude"), ["--version"]), /Claude Code/);
    run(bin("claude"), ["mcp", "add", "--scope", "user", "forgemcp", "--", ...env.server]);
    run(bin("claude"), ["mcp", "add", "--scope", "project", "forgemcp-project", "--", ...env.server]);
    assert.ok(JSON.parse(readFileSync(join(env.project, ".mcp.json"), "utf8")).mcpServers["forgemcp-project"], "the project file");
    const listed = run(bin("claude"), ["mcp", "list"]);
    assert.match(listed, /^forgemcp: .*forgemcp --workspace .* - ✔ Connected$/m, listed);
    assert.match(listed, /^forgemcp-project: .* Pending approval/m, listed);
  });

  test("codex mcp add, then codex mcp list lists ForgeMCP", () => {
    assert.match(run(bin("codex"), ["--version"]), /codex-cli/);
    run(bin("codex"), ["mcp", "add", "forgemcp", "--", ...env.server]);
    const listed = run(bin("codex"), ["mcp", "list"]);
    const row = listed.split("\n").find((line) => line.startsWith("forgemcp "));
    assert.ok(row, listed);
    assert.ok(row.includes(binary) && row.includes(env.project) && /\benabled\b/.test(row), row);
    const config = readFileSync(join(env.vars.CODEX_HOME, "config.toml"), "utf8");
    assert.match(config, /\[mcp_servers\.forgemcp\]/);
  });
});

describe("the MCP Inspector CLI from the lockfile", { skip }, () => {
  test("tools/list and tools/call print no warnings", () => {
    const inspect = (...args) => {
      const [method, ...rest] = args;
      const result = spawnSync(bin("mcp-inspector"), ["--cli", ...env.server, "--method", method, ...rest], {
        cwd: env.project,
        env: env.vars,
        encoding: "utf8",
        timeout: 120_000,
      });
      assert.equal(result.status, 0, `${args.join(" ")}: ${result.stderr}`);
      // The server's own stderr lines (the panel line) come through; nothing else may.
      const other = result.stderr.split("\n").filter((line) => line.trim() && !line.startsWith("forgemcp: "));
      assert.deepEqual(other, [], `no warnings for ${args.join(" ")}`);
      return JSON.parse(result.stdout);
    };
    // --strict spells out every schema portability finding (formats, type lists, …).
    const { tools } = inspect("tools/list", "--strict");
    assert.ok(tools.length > 20, "every tool is listed");
    const called = inspect("tools/call", "--tool-name", "workspace_list");
    assert.equal(called.isError, false);
    assert.equal(called.structuredContent.path, "project/");
  });
});
