/**
 * A real headless Chromium for the dashboard tests, driven by playwright-core. The browser is
 * Debian's `chromium` (.ci/run installs it when missing), or the one CHROMIUM_PATH names.
 */
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type Browser } from "playwright-core";

const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];

export async function launchBrowser(): Promise<Browser> {
  const executablePath = process.env.CHROMIUM_PATH ?? CANDIDATES.find((path) => existsSync(path));
  if (!executablePath) {
    throw new Error(`No Chromium found (looked for ${CANDIDATES.join(", ")}). Install it (apt-get install chromium; .ci/run does) or set CHROMIUM_PATH.`);
  }
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath, args: ["--no-sandbox", "--disable-dev-shm-usage"] });
}

/** Where screenshots go: DASHBOARD_SCREENSHOTS (e.g. docs/screenshots to refresh the README's), else a temp dir. */
export function screenshotDir(): string {
  const dir = process.env.DASHBOARD_SCREENSHOTS ? resolve(process.env.DASHBOARD_SCREENSHOTS) : mkdtempSync(join(tmpdir(), "dashboard-shots-"));
  mkdirSync(dir, { recursive: true });
  console.log(`dashboard screenshots: ${dir}`);
  return dir;
}
