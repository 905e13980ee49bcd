import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

// Bun, as inside OpenCode: its module cache lists every loaded file, ESM included. The plugin is
// started on a temp database with a client that answers every call with no data, and left to run
// its start (recovery, the automation scheduler's first wake) before croner is looked for.
const PROBE = `
const { mkdtempSync } = await import("node:fs");
const { join } = await import("node:path");
const { tmpdir } = await import("node:os");
const cronerLoaded = () => Object.keys(require.cache).some((path) => path.includes("/croner/"));
const client = new Proxy({}, { get: (_, group) => group === "then" ? undefined : new Proxy({}, { get: (_, call) => async () => ({ data: call === "status" ? {} : [] }) }) });
const plugin = (await import("./src/index.ts")).default;
const hooks = await plugin.server({ client, project: { id: "p" }, directory: tmpdir(), worktree: tmpdir() }, { dbPath: join(mkdtempSync(join(tmpdir(), "ocbt-lazy-")), "t.db") });
await new Promise((resolve) => setTimeout(resolve, 300));
const atStart = cronerLoaded();
const { parseTrigger } = await import("./src/automations/trigger-spec.ts");
const spec = parseTrigger({ cron: "0 9 * * 1-5", timezone: "UTC" }, Date.now());
await hooks.dispose();
console.log(JSON.stringify({ tools: Object.keys(hooks.tool).length, atStart, afterCronTrigger: cronerLoaded(), kind: spec.kind }));
`;

test("starting the plugin does not load croner; the first cron trigger does", () => {
  const run = spawnSync("npx", ["bun", "-e", PROBE], { cwd: ROOT, encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  const seen = JSON.parse(run.stdout.trim().split("\n").at(-1)!);
  assert.deepEqual(seen, { tools: 15, atStart: false, afterCronTrigger: true, kind: "cron" });
});
