// Compiles the CLI and what it imports to JavaScript in dist/, so the packed package runs it under
// plain Node with no build tool at run time. `npm pack` runs this as prepack, and with --clean as
// postpack: a source checkout keeps no dist/ that could go stale (bin/ then runs the sources).
import { spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const dist = `${root}dist`;
rmSync(dist, { recursive: true, force: true });
if (!process.argv.includes("--clean")) {
  const tsc = spawnSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, "-p", `${root}tsconfig.cli.json`], {
    stdio: "inherit",
  });
  if (tsc.status !== 0) process.exit(tsc.status ?? 1);
  if (!existsSync(`${dist}/bin/main.js`)) {
    console.error("build-cli: tsc finished but dist/bin/main.js is missing");
    process.exit(1);
  }
}
