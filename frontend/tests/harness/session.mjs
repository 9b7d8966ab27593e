// The browser session a widget test file shares: the fixture servers and one browser, started before
// the file's tests and closed after them, and `withWidget`, which opens one widget, runs a check and
// closes the page, failing on any page or console error.
import assert from "node:assert/strict";
import { after, before } from "node:test";

import { browserMissing, launch } from "./browser.mjs";
import { openWidget } from "./page.mjs";
import { startServers } from "./server.mjs";

export function widgetSession() {
  const skip = browserMissing();
  const env = {};
  before(async () => {
    if (skip) return;
    env.servers = await startServers();
    const browser = await launch();
    env.context = browser.context;
    env.close = browser.close;
  });
  after(async () => {
    await env.close?.();
    await env.servers?.close();
  });
  /** Opens a widget, runs `check`, and closes the page; fails on any page error. */
  async function withWidget(options, check) {
    const opened = await openWidget(env, options);
    try {
      await check(opened);
      assert.deepEqual(opened.errors, [], "no page or console errors");
    } finally {
      await opened.page.close();
    }
  }
  return { skip, env, withWidget };
}
