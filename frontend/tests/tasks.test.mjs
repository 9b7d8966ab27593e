// MCP Tasks (2025-11-25) with an official SDK client that speaks them: the TypeScript SDK's
// experimental task API (`client.experimental.tasks`) against the real binary over stdio. A
// task-augmented search goes from `callToolStream`'s task creation through its polling to the
// `CallToolResult`; `listTasks`, `getTask` and `getTaskResult` see the same task; `cancelTask` of a
// task running a fake cmake (a shell that waits for a child) kills that process tree.
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

import { alive, binary, binaryMissing, waitFor } from "./harness/forgemcp.mjs";

const skip = binaryMissing();
const env = {};

before(() => {
  if (skip) return;
  env.base = mkdtempSync(join(tmpdir(), "forgemcp-sdk-tasks-"));
  env.project = join(env.base, "project");
  env.runtime = join(env.base, "runtime");
  mkdirSync(env.project);
  mkdirSync(env.runtime, { mode: 0o700 });
  writeFileSync(join(env.project, "a.txt"), "needle\n");
  writeFileSync(join(env.project, "CMakeLists.txt"), "project(x)\n");
  env.pids = join(env.base, "pids");
  env.cmake = join(env.base, "fake-cmake");
  writeFileSync(
    env.cmake,
    `#!/bin/sh\ncase "$1" in --version) echo 'cmake version 3.25.1'; exit 0;; -E) exit 0;; esac\n` +
      `echo '-- Pretending to configure'\nsleep 60 &\necho "$$ $!" > '${env.pids}'\nwait\n`,
  );
  chmodSync(env.cmake, 0o755);
});

after(() => {
  if (env.base) rmSync(env.base, { recursive: true, force: true });
});

/** An SDK client connected to a fresh server over stdio. */
async function connect() {
  const args = ["--workspace", env.project, "--no-admin", "--progress-interval", "0"];
  args.push("--toolset", "fake", `cmake=${env.cmake}`, "--cmake-profile", "p", "toolset=fake", "generator=Unix Makefiles");
  const transport = new StdioClientTransport({
    command: binary,
    args,
    env: { ...process.env, XDG_RUNTIME_DIR: env.runtime },
    stderr: "ignore",
  });
  const client = new Client({ name: "sdk-tasks", version: "1.0.0" }, { capabilities: { tasks: { list: {}, cancel: {} } } });
  await client.connect(transport);
  return client;
}

describe("MCP Tasks through the TypeScript SDK's task client", { skip }, () => {
  test("a task-augmented search: callToolStream, listTasks, getTask, getTaskResult", async () => {
    const client = await connect();
    try {
      assert.deepEqual(client.getServerCapabilities().tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } });
      const { tools } = await client.listTools();
      const search = tools.find((tool) => tool.name === "workspace_text_search");
      assert.deepEqual(search.execution, { taskSupport: "optional" });
      assert.equal(tools.find((tool) => tool.name === "workspace_read_file").execution, undefined);

      const messages = [];
      const stream = client.experimental.tasks.callToolStream(
        { name: "workspace_text_search", arguments: { query: "needle" } },
        CallToolResultSchema,
        { task: { ttl: 60_000 } },
      );
      for await (const message of stream) messages.push(message);
      const types = messages.map((m) => m.type);
      assert.equal(types[0], "taskCreated", JSON.stringify(messages));
      assert.equal(types.at(-1), "result", JSON.stringify(messages));
      assert.ok(types.includes("taskStatus"), JSON.stringify(types));
      const { taskId } = messages[0].task;
      const result = messages.at(-1).result;
      assert.equal(result.structuredContent.matches[0].path, "project/a.txt");
      assert.equal(result._meta["io.modelcontextprotocol/related-task"].taskId, taskId);

      const listed = await client.experimental.tasks.listTasks();
      assert.deepEqual(listed.tasks.map((t) => t.taskId), [taskId]);
      const task = await client.experimental.tasks.getTask(taskId);
      assert.equal(task.status, "completed");
      const again = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      assert.deepEqual(again.structuredContent, result.structuredContent);
    } finally {
      await client.close();
    }
  });

  test("cancelTask stops a running configure and kills its process tree", async () => {
    const client = await connect();
    try {
      await client.listTools();
      const progress = [];
      const stream = client.experimental.tasks.callToolStream({ name: "cmake_configure", arguments: {} }, CallToolResultSchema, {
        task: {},
        onprogress: (update) => progress.push(update),
      });
      const first = await stream.next();
      assert.equal(first.value.type, "taskCreated", JSON.stringify(first.value));
      const { taskId } = first.value.task;
      const recorded = await waitFor(() => existsSync(env.pids) && readFileSync(env.pids, "utf8").endsWith("\n") && readFileSync(env.pids, "utf8"), {
        what: "the fake cmake's pids",
      });
      const tree = recorded.trim().split(/\s+/).map(Number);
      assert.ok(tree.every(alive), "the fake cmake and its child run");

      // The call's progress token stays valid while the task runs: the configure output arrives on it.
      await waitFor(() => progress.some((p) => String(p.message).includes("Pretending to configure")), {
        what: "progress of the task",
      });
      const cancelled = await client.experimental.tasks.cancelTask(taskId);
      assert.equal(cancelled.status, "cancelled");
      await waitFor(() => tree.every((pid) => !alive(pid)), { what: "the cancelled tree to end" });
      const rest = [];
      for await (const message of stream) rest.push(message);
      assert.equal(rest.at(-1).type, "error", JSON.stringify(rest));
      assert.match(String(rest.at(-1).error.message), /cancelled/);
      assert.equal((await client.experimental.tasks.getTask(taskId)).status, "cancelled");
    } finally {
      await client.close();
    }
  });
});
