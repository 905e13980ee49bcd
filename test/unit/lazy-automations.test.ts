import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { FakeClock, flush } from "../helpers/fake-clock.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

// Bun, as inside OpenCode: its module cache lists every loaded file. The plugin is started on a
// database (new, or holding one automation row), with a client that answers every call with no
// data; the automation layer's modules are looked for at start and after one task_list call.
const LAYER = ["run-lifecycle.ts", "automation-scheduler.ts", "event-sources.ts", "proposal-service.ts", "channel-sink.ts"];
const probe = (dbPath: string, withAutomation: boolean) => `
const { tmpdir } = await import("node:os");
const layer = ${JSON.stringify(LAYER)};
const loaded = () => layer.filter((name) => Object.keys(require.cache).some((p) => p.endsWith("/" + name)));
if (${withAutomation}) {
  const { SqliteTaskStore } = await import("./src/store/sqlite-task-store.ts");
  SqliteTaskStore.open({ path: ${JSON.stringify(dbPath)}, projectId: "p" }).close();
  const { Database } = await import("bun:sqlite");
  const db = new Database(${JSON.stringify(dbPath)});
  db.run(\`INSERT INTO automations (project_id, id, title, prompt, agent, notify, session_mode, overlap, catch_up, report_to, report_agent,
    enabled, created_by, created_at, updated_at) VALUES ('p', 'au1', 'nightly', 'x', 'general', 'never', 'fresh', 'skip', 'skip', 'ses_1', 'general', 0, 'ses_1', 1, 1)\`);
  db.close();
}
const client = new Proxy({}, { get: (_, group) => group === "then" ? undefined : new Proxy({}, { get: (_, call) => async () => ({ data: call === "status" ? {} : [] }) }) });
const plugin = (await import("./src/index.ts")).default;
const hooks = await plugin.server({ client, project: { id: "p" }, directory: tmpdir(), worktree: tmpdir() }, { dbPath: ${JSON.stringify(dbPath)} });
await new Promise((resolve) => setTimeout(resolve, 300));
const atStart = loaded();
const context = { sessionID: "ses_1", messageID: "msg_1", agent: "general", abort: new AbortController().signal };
const answer = await hooks.tool.task_list.execute({}, context);
const afterCall = loaded();
await hooks.dispose();
console.log(JSON.stringify({ tools: Object.keys(hooks.tool).length, atStart, afterCall, answer: String(answer).slice(0, 200) }));
`;

const run = (withAutomation: boolean) => {
  const dbPath = join(mkdtempSync(join(tmpdir(), "ocbt-lazy-automations-")), "t.db");
  const out = spawnSync("npx", ["bun", "-e", probe(dbPath, withAutomation)], { cwd: ROOT, encoding: "utf8" });
  assert.equal(out.status, 0, out.stderr);
  return JSON.parse(out.stdout.trim().split("\n").at(-1)!) as { tools: number; atStart: string[]; afterCall: string[]; answer: string };
};

test("a project without automations or proposals starts without the automation layer; the first task_* call loads it", () => {
  const seen = run(false);
  assert.equal(seen.tools, 15, "the task_* tools are registered from the start");
  assert.deepEqual(seen.atStart, []);
  assert.deepEqual(seen.afterCall, LAYER);
  assert.doesNotMatch(seen.answer, /failed|not loaded/, seen.answer);
});

test("a project with an automation loads the layer at start", () => {
  const seen = run(true);
  assert.deepEqual(seen.atStart, LAYER);
  assert.match(seen.answer, /au1/);
});

test("LazyAutomations: built before the core starts, started after; a failed build is tried again; a build that ends after dispose is stopped", async () => {
  const { LazyAutomations } = await import("../../src/plugin/lazy-automations.ts");
  const events: string[] = [];
  const layer = (name: string) => ({ service: { name } as never, start: () => events.push(`start ${name}`), stop: () => events.push(`stop ${name}`) });
  let wanted = true;
  const atStart = new LazyAutomations({ build: async () => layer("a"), wanted: () => wanted, onCrash: () => {}, clock: new FakeClock() });
  await atStart.prepare();
  assert.deepEqual(events, [], "built, not started, before the core starts");
  atStart.start();
  atStart.stop();
  assert.deepEqual(events.splice(0), ["start a", "stop a"]);

  let fail = true;
  const crashes: string[] = [];
  wanted = false;
  const onDemand = new LazyAutomations({ build: async () => { if (fail) throw new Error("disk full"); return layer("b"); }, wanted: () => wanted, onCrash: (m) => crashes.push(m), clock: new FakeClock() });
  await onDemand.prepare();
  onDemand.start();
  assert.equal(onDemand.loaded(), undefined);
  assert.equal(await onDemand.ifWanted(), undefined, "nothing in the store: not loaded");
  await assert.rejects(onDemand.load(), /disk full/);
  fail = false;
  assert.deepEqual(await onDemand.load(), { name: "b" }, "tried again at the next need");
  assert.deepEqual(events.splice(0), ["start b"], "started at once: the core runs already");
  onDemand.stop();
  assert.deepEqual(events.splice(0), ["stop b"]);

  let finish!: () => void;
  const slow = new LazyAutomations({ build: () => new Promise((resolve) => (finish = () => resolve(layer("c")))), wanted: () => true, onCrash: () => {}, clock: new FakeClock() });
  const loading = slow.load();
  slow.stop();
  finish();
  await assert.rejects(loading, /disposed/);
  assert.deepEqual(events, ["stop c"]);
});

test("LazyAutomations: a process without the layer looks again once a minute, and builds it once another process has created an automation", async () => {
  const { LazyAutomations } = await import("../../src/plugin/lazy-automations.ts");
  const clock = new FakeClock();
  const events: string[] = [];
  let wanted = false;
  let looks = 0;
  const lazy = new LazyAutomations({
    build: async () => ({ service: {} as never, start: () => events.push("start"), stop: () => events.push("stop") }),
    wanted: () => (looks++, wanted), onCrash: () => {}, clock,
  });
  await lazy.prepare();
  lazy.start();
  await clock.advance(60_000);
  assert.equal(looks, 2, "once at start, once a minute later");
  assert.deepEqual(events, []);
  wanted = true;
  await clock.advance(60_000);
  await flush();
  assert.deepEqual(events, ["start"]);
  await clock.advance(180_000);
  assert.equal(looks, 3, "no more looks once built");
  lazy.stop();
  assert.deepEqual(events, ["start", "stop"]);
});
