// Debian's Chromium driven by playwright-core (no browser download). Without the binary the browser
// tests fail under CI and are skipped, loudly, elsewhere.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { chromium } from "playwright-core";

export const executablePath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export function browserMissing() {
  if (existsSync(executablePath)) return false;
  if (process.env.CI) throw new Error(`Chromium is required under CI: ${executablePath} does not exist`);
  console.error(`SKIPPING browser tests: ${executablePath} not found (apt-get install chromium)`);
  return true;
}

export async function launch() {
  const profile = mkdtempSync(join(tmpdir(), "forgemcp-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    viewport: { width: 720, height: 460 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
