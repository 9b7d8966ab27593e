// Opens one widget with one fixture in one of the two hosts and waits until it has rendered.
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";

import { frontend } from "./server.mjs";

export const artifacts = resolve(frontend, "test-artifacts");

/**
 * @param {{context: import("playwright-core").BrowserContext, servers: {hostOrigin: string, sandboxOrigin: string}}} env
 * @param {{host?: "ours" | "sdk", widget: string, fixture: string, theme?: "light" | "dark", resources?: boolean}} options
 */
export async function openWidget(env, { host = "ours", widget, fixture, theme = "light", resources = true }) {
  const page = await env.context.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  const query = new URLSearchParams({
    widget,
    fixture: `${widget}/${fixture}`,
    theme,
    sandbox: env.servers.sandboxOrigin,
    ...(resources ? {} : { resources: "no" }),
  });
  const path = host === "sdk" ? "sdk-host.html" : "host.html";
  await page.goto(`${env.servers.hostOrigin}/${path}?${query}`);
  const frame = page.frameLocator("#outer").frameLocator("iframe");
  await frame.locator("header nav.tabs, header h1").first().waitFor();
  await frame.locator("header nav.tabs").waitFor({ timeout: 5000 });
  return { page, frame, errors };
}

export async function screenshot(page, name) {
  mkdirSync(artifacts, { recursive: true });
  await page.locator("#outer").screenshot({ path: resolve(artifacts, `${name}.png`) });
}
