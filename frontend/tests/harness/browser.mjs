// Debian's Chromium driven by playwright-core (no browser download). Without the binary the browser
// tests fail under CI and are skipped, loudly, elsewhere.
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
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

/** Headless, offline, no first-run or background work. */
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export async function launch() {
  const profile = mkdtempSync(join(tmpdir(), "forgemcp-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    viewport: { width: 720, height: 460 },
    args: FLAGS,
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Whether something still answers on a loopback port. */
const listening = (port) =>
  new Promise((ok) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), ok(true)));
    socket.once("error", () => ok(false));
  });

/**
 * What a person does: `forgemcp --open-admin` (run by `openAdmin`) with `$BROWSER` set to a script
 * that starts Debian's Chromium on the argument it is given. The script opens a DevTools port so the
 * test can drive the very browser `--open-admin` started. Returns the script path and `connect()`,
 * which attaches to that browser once it listens.
 */
export function browserScript(dir, debugPort) {
  const profile = mkdtempSync(join(tmpdir(), "forgemcp-chromium-open-"));
  const script = join(dir, "chromium-browser.sh");
  const flags = [
    ...FLAGS,
    "--window-size=720,460",
    `--user-data-dir=${profile}`,
    `--remote-debugging-port=${debugPort}`,
  ];
  // The script records its pid, which `exec` hands to Chromium, so `close` can wait for it to exit.
  writeFileSync(script, `#!/bin/sh\nPATH=/usr/local/bin:/usr/bin:/bin; export PATH\necho $$ >'${profile}.pid'\nexec '${executablePath}' ${flags.map((f) => `'${f}'`).join(" ")} "$1" >'${profile}.log' 2>&1\n`);
  chmodSync(script, 0o755);
  return {
    script,
    async connect() {
      const end = Date.now() + 60_000;
      for (;;) {
        try {
          const browser = await chromium.connectOverCDP(`http://127.0.0.1:${debugPort}`);
          return {
            browser,
            context: browser.contexts()[0],
            close: async () => {
              // Disconnecting leaves a browser we did not launch running: ask it to quit.
              const session = await browser.newBrowserCDPSession().catch(() => null);
              await session?.send("Browser.close").catch(() => {});
              await browser.close().catch(() => {});
              for (let i = 0; i < 100 && (await listening(debugPort)); i++) await new Promise((ok) => setTimeout(ok, 100));
              // Chromium closes its debugging port early in its shutdown and writes its profile until
              // it exits: wait for the process, then remove the profile.
              const pid = Number(readFileSync(`${profile}.pid`, "utf8"));
              for (let i = 0; i < 200 && alive(pid); i++) await new Promise((ok) => setTimeout(ok, 50));
              rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
              rmSync(`${profile}.log`, { force: true });
              rmSync(`${profile}.pid`, { force: true });
            },
          };
        } catch (error) {
          if (Date.now() > end) throw error;
          await new Promise((ok) => setTimeout(ok, 200));
        }
      }
    },
  };
}

/** Whether the process `pid` still exists (a zombie counts until its parent reaps it). */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
