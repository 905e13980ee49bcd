// The registry reachable here serves opencode-ai's platform binaries for linux-x64 only, so
// `npm install` leaves the other platforms out of package-lock.json, and `npm ci` then refuses the
// lock as out of sync. This adds the missing entries (version, os, cpu, optional): `npm ci` skips
// them on other platforms without fetching anything. Run it after `npm install` changes the lock.
import { readFileSync, writeFileSync } from "node:fs";

const OS = { darwin: "darwin", linux: "linux", windows: "win32" };

export function missingPlatformEntries(lock) {
  const packages = lock.packages;
  const added = {};
  for (const [name, version] of Object.entries(packages["node_modules/opencode-ai"]?.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    if (packages[key]) continue;
    const [, os, cpu] = name.match(/^opencode-(darwin|linux|windows)-(x64|arm64)/) ?? [];
    if (!os) throw new Error(`cannot tell the platform of ${name}`);
    added[key] = { version, cpu: [cpu], dev: true, optional: true, os: [OS[os]] };
  }
  return added;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const lock = JSON.parse(readFileSync("package-lock.json", "utf8"));
  const added = missingPlatformEntries(lock);
  const entries = Object.entries({ ...lock.packages, ...added });
  lock.packages = Object.fromEntries(entries.sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : a > b ? 1 : 0)));
  writeFileSync("package-lock.json", JSON.stringify(lock, null, 2) + "\n");
  console.log(`added ${Object.keys(added).length} platform entries to package-lock.json`);
}
