// Runs every suite: typecheck, unit tests (Node), the store suite under Node and Bun, and the
// integration tests against a real `opencode serve`. Prints one closing line for all of them.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

const only = process.argv[2]; // optional: unit | store | integration
const files = (dir, suffix) =>
  existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(suffix)).map((f) => join(dir, f)).sort() : [];

const suites = [
  { name: "typecheck", cmd: "npx", args: ["tsc", "--noEmit"] },
  { name: "unit", cmd: "node", args: ["--import", "tsx", "--test", ...files("test/unit", ".test.ts")] },
  { name: "store", cmd: "node", args: ["--import", "tsx", "--test", ...files("test/store", ".node.test.ts")] },
  { name: "store", cmd: "npx", args: ["bun", "test", ...files("test/store", ".bun.test.ts").map((f) => "./" + f)] },
  {
    name: "integration",
    cmd: "node",
    // A test that hangs fails after 4 minutes instead of holding CI (the longest file takes about 80 s).
    args: ["--import", "tsx", "--test", "--test-concurrency=1", "--test-timeout=240000", ...files("test/integration", ".test.ts")],
  },
];

let passed = 0;
let failed = 0;
for (const suite of suites) {
  if (only && suite.name !== only) continue;
  const hasFiles = suite.args.some((arg) => arg.endsWith(".ts"));
  if (!hasFiles && suite.name !== "typecheck") continue; // no files for this suite yet
  console.log(`\n=== ${suite.name}: ${suite.cmd} ${suite.args.slice(0, 4).join(" ")} ...`);
  const run = spawnSync(suite.cmd, suite.args, { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });
  const out = (run.stdout ?? "") + (run.stderr ?? "");
  process.stdout.write(out);
  const counts = countResults(out);
  passed += counts.passed;
  failed += counts.failed;
  if (run.status !== 0) failed += counts.failed === 0 ? 1 : 0;
}
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);

function countResults(out) {
  // node:test prints "# pass N" / "# fail N"; bun test prints " N pass" / " N fail".
  const node = { p: /^# pass (\d+)$/m, f: /^# fail (\d+)$/m };
  const bun = { p: /^\s*(\d+) pass$/m, f: /^\s*(\d+) fail$/m };
  for (const re of [node, bun]) {
    const p = out.match(re.p);
    if (p) return { passed: Number(p[1]), failed: Number(out.match(re.f)?.[1] ?? 0) };
  }
  return { passed: 0, failed: 0 };
}
