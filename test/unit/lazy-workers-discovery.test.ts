import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

// Bun, as inside OpenCode: the plugin started without workers, then with one (that never answers),
// and the worker modules looked for in the module cache each time.
const probe = (options: string) => `
const { mkdtempSync } = await import("node:fs");
const { join } = await import("node:path");
const { tmpdir } = await import("node:os");
const loaded = () => Object.keys(require.cache).filter((p) => p.includes("/src/workers/") || p.includes("/src/discovery/")).map((p) => p.split("/").at(-1)).sort();
const client = new Proxy({}, { get: (_, group) => group === "then" ? undefined : new Proxy({}, { get: (_, call) => async () => ({ data: call === "status" ? {} : [] }) }) });
const plugin = (await import("./src/index.ts")).default;
const hooks = await plugin.server({ client, project: { id: "p" }, directory: tmpdir(), worktree: tmpdir() }, { dbPath: join(mkdtempSync(join(tmpdir(), "ocbt-lazy-")), "t.db"), ...${options} });
await new Promise((resolve) => setTimeout(resolve, 200));
await hooks.dispose();
console.log(JSON.stringify({ worker: "worker" in hooks.tool.background_task.args, loaded: loaded() }));
`;

const run = (options: string) => {
  const out = spawnSync("npx", ["bun", "-e", probe(options)], { cwd: ROOT, encoding: "utf8" });
  assert.equal(out.status, 0, out.stderr);
  return JSON.parse(out.stdout.trim().split("\n").at(-1)!) as { worker: boolean; loaded: string[] };
};

test("without workers or discovery the plugin loads only their option parsers; with them it loads the rest", () => {
  assert.deepEqual(run("{}"), { worker: false, loaded: ["discovery-config.ts", "worker-config.ts"] });
  const withWorker = run(`{ workers: [{ name: "box", url: "http://127.0.0.1:9", directory: "/srv/repo" }] }`);
  assert.equal(withWorker.worker, true);
  assert.ok(withWorker.loaded.includes("workers.ts") && withWorker.loaded.includes("worker-connection.ts"), withWorker.loaded.join(", "));
  assert.ok(!withWorker.loaded.includes("discovery.ts"));
  assert.ok(run("{ discovery: true }").loaded.includes("discovery.ts"), "discovery on: loaded at the layer's start");
});
