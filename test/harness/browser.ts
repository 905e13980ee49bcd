/**
 * A real headless Chromium for the dashboard tests, driven by playwright-core. The browser is the
 * one CHROMIUM_PATH names, else the dev dependency @sparticuz/chromium: its binary ships inside the
 * npm package (brotli-compressed) and is extracted to the temp folder at first use, so `npm ci` is
 * the only install. It stays on major 143: 144 and later need Node 22.
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type Browser } from "playwright-core";

export async function launchBrowser(): Promise<Browser> {
  const own = process.env.CHROMIUM_PATH;
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  if (own) return chromium.launch({ executablePath: own, args: ["--no-sandbox", "--disable-dev-shm-usage"] });
  const bundled = (await import("@sparticuz/chromium")).default;
  const executablePath = await bundled.executablePath();
  try {
    return await chromium.launch({ executablePath, args: bundled.args });
  } catch (error) {
    // The extraction is not atomic: a run killed during it leaves a truncated binary that is reused.
    throw new Error(`Chromium from @sparticuz/chromium (${executablePath}) did not start. If an earlier run was interrupted while extracting it, delete ${executablePath} and retry; or set CHROMIUM_PATH to another Chromium.\n${String(error)}`);
  }
}

/** Where screenshots go: DASHBOARD_SCREENSHOTS (e.g. docs/screenshots to refresh the README's), else a temp dir. */
export function screenshotDir(): string {
  const dir = process.env.DASHBOARD_SCREENSHOTS ? resolve(process.env.DASHBOARD_SCREENSHOTS) : mkdtempSync(join(tmpdir(), "dashboard-shots-"));
  mkdirSync(dir, { recursive: true });
  console.log(`dashboard screenshots: ${dir}`);
  return dir;
}
