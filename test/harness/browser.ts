/**
 * A real headless Chromium for the dashboard tests, driven by playwright-core. The browser is the
 * one CHROMIUM_PATH names, else the dev dependency @sparticuz/chromium: its binary ships inside the
 * npm package (brotli-compressed) and is extracted to the temp folder at first use, so `npm ci` is
 * the only install. It stays on major 143: 144 and later need Node 22.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { brotliDecompressSync } from "node:zlib";
import { chromium, type Browser } from "playwright-core";

// --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start. Not the package's own
// `args`: they are for AWS Lambda (--single-process dies when a test closes a browser context, and
// --disable-web-security drops the Origin header the dashboard requires on a POST).
const ARGS = ["--no-sandbox", "--disable-dev-shm-usage"];

export async function launchBrowser(): Promise<Browser> {
  const own = process.env.CHROMIUM_PATH;
  if (own) return chromium.launch({ executablePath: own, args: ARGS });
  const bundled = (await import("@sparticuz/chromium")).default;
  const executablePath = await bundled.executablePath();
  const env = { ...process.env, LD_LIBRARY_PATH: bundledLibs() };
  try {
    return await chromium.launch({ executablePath, args: ARGS, env });
  } catch (error) {
    // The package's extraction is not atomic: a run killed during it leaves a truncated binary that is reused.
    throw new Error(`Chromium from @sparticuz/chromium (${executablePath}) did not start. If an earlier run was interrupted while extracting it, delete ${executablePath} and retry; or set CHROMIUM_PATH to another Chromium.\n${String(error)}`);
  }
}

/**
 * The binary links libnss3, libnspr4 and libexpat, which a bare Linux may lack; the package ships
 * them (al2023.tar.br, built for Amazon Linux) and unpacks them only on Lambda, so unpack them here.
 */
function bundledLibs(): string {
  const dir = join(tmpdir(), "sparticuz-chromium-libs");
  if (existsSync(dir)) return join(dir, "lib");
  const entry = fileURLToPath(import.meta.resolve("@sparticuz/chromium")); // <package>/build/esm/index.js
  const archive = join(dirname(entry), "..", "..", "bin", "al2023.tar.br");
  const partial = mkdtempSync(dir + "-");
  execFileSync("tar", ["-x", "-C", partial], { input: brotliDecompressSync(readFileSync(archive)) });
  try {
    renameSync(partial, dir); // atomic: a concurrent or interrupted run never sees half the files
  } catch {
    rmSync(partial, { recursive: true, force: true }); // another run got there first
  }
  return join(dir, "lib");
}

/** Where screenshots go: DASHBOARD_SCREENSHOTS (e.g. docs/screenshots to refresh the README's), else a temp dir. */
export function screenshotDir(): string {
  const dir = process.env.DASHBOARD_SCREENSHOTS ? resolve(process.env.DASHBOARD_SCREENSHOTS) : mkdtempSync(join(tmpdir(), "dashboard-shots-"));
  mkdirSync(dir, { recursive: true });
  console.log(`dashboard screenshots: ${dir}`);
  return dir;
}
