// Real ForgeMCP processes for the admin panel's browser tests: server instances spoken to over stdio
// by a tiny MCP client (which also checks that stdout carries nothing but JSON-RPC), and the real
// `forgemcp --open-admin` with a fake browser that records the page it was asked to open. Everything
// runs in a private runtime directory and its own --admin-ipc group, on loopback only.
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

import { frontend } from "./server.mjs";

export const binary = process.env.FORGEMCP_BIN ?? resolve(frontend, "../target/debug/forgemcp");

/** Skips (loudly) without the binary, except under CI, where it is an error. */
export function binaryMissing() {
  if (existsSync(binary)) return false;
  if (process.env.CI) throw new Error(`the admin browser tests need ${binary}: run \`cargo build\` first`);
  console.error(`SKIPPING admin browser tests: ${binary} not found (run \`cargo build\` first)`);
  return true;
}

/** A free loopback port (released again, for --admin-port). */
export function freePort() {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
  });
}

/** A private runtime directory and group for one test file. */
export function adminGroup() {
  const base = mkdtempSync(join(tmpdir(), "forgemcp-admin-test-"));
  const runtime = join(base, "runtime");
  spawnSync("mkdir", ["-m", "700", runtime]);
  const name = `browser-${process.pid}`;
  const env = { ...process.env, XDG_RUNTIME_DIR: runtime, FORGEMCP_LOG: "info" };
  delete env.BROWSER;
  return {
    base,
    runtime,
    name,
    env,
    dir: join(runtime, "forgemcp"),
    /** The pid in the Hub's lock file (the running Hub of the group), or null. */
    hubPid() {
      try {
        const pid = Number(readFileSync(join(runtime, "forgemcp", `${name}.lock`), "utf8").trim());
        return pid > 0 ? pid : null;
      } catch {
        return null;
      }
    },
    cleanup() {
      rmSync(base, { recursive: true, force: true });
    },
  };
}

/** Whether a pid is a live process (zombies count as gone). */
export function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

export async function waitFor(check, { timeout = 15000, interval = 50, what = "condition" } = {}) {
  const end = Date.now() + timeout;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((ok) => setTimeout(ok, interval));
  }
}

/** One `forgemcp` server over stdio. */
export class Instance {
  constructor(group, workspace, port, extraArgs = []) {
    this.stdoutProblems = [];
    this.notifications = [];
    this.stderr = "";
    this.pending = new Map();
    this.nextId = 1;
    this.child = spawn(
      binary,
      ["--workspace", workspace, "--admin-ipc", group.name, "--admin-port", String(port), "--progress-interval", "0", ...extraArgs],
      { env: group.env, stdio: ["pipe", "pipe", "pipe"] },
    );
    this.exited = new Promise((ok) => this.child.once("exit", (code) => ok(code)));
    let buffer = "";
    this.child.stdout.setEncoding("utf8");
    this.child.stdout.on("data", (chunk) => {
      buffer += chunk;
      let newline;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        this.onLine(line);
      }
    });
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (chunk) => (this.stderr += chunk));
  }

  onLine(line) {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      this.stdoutProblems.push(line);
      return;
    }
    if (message?.jsonrpc !== "2.0") {
      this.stdoutProblems.push(line);
      return;
    }
    if (message.id !== undefined && !message.method) {
      const waiter = this.pending.get(message.id);
      this.pending.delete(message.id);
      waiter?.(message);
    } else if (message.method && message.id !== undefined) {
      // A request from the server (no capability was advertised): refuse it.
      this.write({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "not supported" } });
    } else {
      this.notifications.push(message);
    }
  }

  write(message) {
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  request(method, params = {}) {
    const id = this.nextId++;
    return new Promise((ok, fail) => {
      const timer = setTimeout(() => fail(new Error(`${method} timed out`)), 60000);
      this.pending.set(id, (message) => {
        clearTimeout(timer);
        if (message.error) fail(new Error(`${method}: ${message.error.message}`));
        else ok(message.result);
      });
      this.write({ jsonrpc: "2.0", id, method, params });
    });
  }

  async initialize() {
    await this.request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "forgemcp-browser-tests", version: "0" },
    });
    this.write({ jsonrpc: "2.0", method: "notifications/initialized" });
    return this;
  }

  /** The public address from the stderr startup line. */
  async publicUrl() {
    const match = await waitFor(() => /admin panel at (http:\/\/127\.0\.0\.1:\d+\/) \(open it with `forgemcp --open-admin --admin-ipc [^`]+`\)/.exec(this.stderr), {
      what: "the startup line",
    });
    return match[1];
  }

  callTool(name, args, progressToken) {
    return this.request("tools/call", { name, arguments: args, ...(progressToken ? { _meta: { progressToken } } : {}) });
  }

  progressFor(token) {
    return this.notifications.filter((n) => n.method === "notifications/progress" && n.params.progressToken === token);
  }

  /** Closes stdin (the MCP client goes away) and waits for the exit status. */
  async stop() {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 10000);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }
}

/**
 * Runs the real `forgemcp --open-admin` with a fake browser ("record", "fail") or the path of a
 * browser start script; returns the exit status, the output, and (with "record") the login URL found
 * in the private page the browser was given (null when none was opened).
 */
export function openAdmin(group, { browser = "record" } = {}) {
  const record = join(group.base, "browser-arg");
  rmSync(record, { force: true });
  let fake = join(group.base, "fake-browser.sh");
  if (browser === "record" || browser === "fail") {
    writeFileSync(fake, browser === "record" ? `#!/bin/sh\nprintf '%s' "$1" > '${record}'\n` : "#!/bin/sh\nexit 4\n");
    chmodSync(fake, 0o755);
  } else {
    fake = browser; // a real browser's start script
  }
  const env = { ...group.env, BROWSER: fake, PATH: "/nonexistent" };
  const run = spawnSync(binary, ["--open-admin", "--admin-ipc", group.name], { env, encoding: "utf8", timeout: 30000 });
  let url = null;
  if (existsSync(record)) {
    const target = readFileSync(record, "utf8");
    const page = readFileSync(decodeURIComponent(new URL(target).pathname), "utf8");
    url = /location\.replace\("([^"]+)"\)/.exec(page)?.[1] ?? null;
  }
  return { status: run.status, stdout: run.stdout, stderr: run.stderr, url };
}
