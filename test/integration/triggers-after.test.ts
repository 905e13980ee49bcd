import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { startStack, call, toolOutputs, waitUntil, queryDb, type Stack } from "../harness/plugin-stack.ts";
import { allText } from "../harness/mock-model.ts";
import type { SqlValue } from "../../src/store/sqlite-driver.ts";
import { AFTER_POLL_MS } from "../../src/triggers/kinds/after.ts";
import { TICK_MS } from "../../src/triggers/event-sources.ts";

/** Several polls of the chained triggers and ticks of the sources: a second firing would have happened. */
const QUIET_MS = 3 * Math.max(AFTER_POLL_MS, TICK_MS);
const RUN_MS = 30_000;

/**
 * Chaining on a real OpenCode: "report" runs after each successful run of "build" (task_run), with
 * build's result in its prompt; a steps-only chained automation reads it from $EVENT_FILE; an
 * `on: failure` chain stays quiet on success; a cycle is refused naming it, and nothing is stored.
 */
describe("after triggers on the real host", () => {
  let s: Stack;
  let parent: string;
  const dir = mkdtempSync(join(tmpdir(), "ocbt-after-"));
  const dbPath = join(dir, "tasks.db");
  const query = <T = any>(sql: string, ...params: SqlValue[]): T[] => queryDb<T>(dbPath, sql, ...params);
  const runs = (id: string) => query<any>("SELECT * FROM automation_runs WHERE automation_id = ? ORDER BY id", id);
  const ended = (r: any) => !["waiting", "starting", "running"].includes(r.status);

  const tool = async (name: string, args: Record<string, unknown>) => {
    await s.say(parent, call(name, args));
    return (await toolOutputs(s, parent, name)).at(-1) ?? "";
  };
  const create = async (args: Record<string, unknown>) => {
    const out = await tool("task_create", { notify: "never", ...args });
    const id = /Created automation (au\w+)/.exec(out)?.[1];
    assert.ok(id, `task_create answered: ${out}`);
    return id;
  };

  before(async () => {
    s = await startStack({
      pluginOptions: { dbPath, pollIntervalMs: 500 },
      config: { permission: { background_automation: "allow", bash: "allow" } },
    });
    parent = await s.newSession("parent: chains");
  });
  after(async () => {
    await s?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a run of the upstream fires each chained automation once, with its result in the prompt and $EVENT_FILE", async () => {
    const build = await create({ title: "build", prompt: "REPLY build ok: 42 tests passed" });
    const report = await create({ title: "report", prompt: "REPLY reported", triggers: [{ after: build }] });
    const onFailure = await create({ title: "fix build", prompt: "REPLY fixing", triggers: [{ after: build, on: "failure" }] });
    const copy = await create({ title: "copy event", triggers: [{ after: build, on: "any" }], steps: [{ name: "copy", run: 'cp "$EVENT_FILE" event-copy.txt' }] });
    const read = await tool("task_read", { id: report });
    assert.match(read, new RegExp(`after each run of ${build} that succeeds`), read);

    await tool("task_run", { id: build });
    await waitUntil(() => runs(build).length === 1 && runs(build).every(ended), { timeoutMs: RUN_MS, what: "build's run ended" });
    assert.equal(runs(build)[0].status, "completed");
    await waitUntil(() => runs(report).length === 1 && runs(report).every(ended), { timeoutMs: RUN_MS, what: "report's run ended" });
    await waitUntil(() => runs(copy).length === 1 && runs(copy).every(ended), { timeoutMs: RUN_MS, what: "copy's run ended" });
    await sleep(QUIET_MS);

    const [fired] = runs(report);
    assert.equal(runs(report).length, 1, JSON.stringify(runs(report)));
    assert.equal(fired.status, "completed", fired.summary);
    assert.equal(fired.fired_by, "after");
    assert.equal(fired.event_summary, `${build} run #1 succeeded`);
    const child = s.mock.requests().find((r) => allText(r).includes(`[Automation "report" (`));
    assert.ok(child, "report's child asked the model");
    assert.match(allText(child), /\[Event: au\w+ run #1 succeeded\]\nbuild ok: 42 tests passed/);
    assert.deepEqual(runs(onFailure), [], "on: failure does not fire on a success");
    const copied = join(s.server.projectDir, "event-copy.txt");
    assert.ok(existsSync(copied), JSON.stringify(runs(copy)));
    assert.equal(readFileSync(copied, "utf8").trim(), "build ok: 42 tests passed");
    assert.equal(runs(build).length, 1, "the chain fires downstream only");
  });

  it("two servers on one database: the lease holder fires the chain once for a run made in the other", async () => {
    const upstream = await create({ title: "upstream", prompt: "REPLY shared result" });
    const downstream = await create({ title: "downstream", prompt: "REPLY got it", triggers: [{ after: upstream }] });
    const triggerId = query<{ id: string }>("SELECT id FROM automation_triggers WHERE automation_id = ?", downstream)[0]!.id;
    const holder = () => query<{ holder: string }>("SELECT holder FROM trigger_leases WHERE trigger_id = ?", triggerId)[0]?.holder;
    const pidOf = (h: string | undefined) => Number(/^.+:(\d+):[0-9a-f]{8}$/.exec(h ?? "")?.[1]);
    await waitUntil(() => holder(), { what: "the creating server takes the chained trigger's lease" });
    const b = await startStack({
      mock: s.mock, pluginOptions: { dbPath, pollIntervalMs: 500 },
      config: { permission: { background_automation: "allow", bash: "allow" } },
      reuse: { homeDir: s.server.homeDir, projectDir: s.server.projectDir },
    });
    try {
      const other = await b.newSession("parent: the other server");
      await b.say(other, call("task_run", { id: upstream }));
      await waitUntil(() => runs(upstream).length === 1 && runs(upstream).every(ended), { timeoutMs: RUN_MS, what: "upstream's run (in B) ended" });
      await waitUntil(() => runs(downstream).length === 1 && runs(downstream).every(ended), { timeoutMs: RUN_MS, what: "downstream's run ended" });
      await sleep(QUIET_MS);
      assert.equal(runs(downstream).length, 1, JSON.stringify(runs(downstream)));
      assert.equal(runs(downstream)[0].event_summary, `${upstream} run #1 succeeded`);
      assert.equal(pidOf(holder()), s.server.pid, "A, the holder, fired it; B (which ran the upstream and synced its sources) did not");
    } finally {
      await b.stop();
    }
  });

  it("a cycle is refused at creation and in task_trigger_add, naming it; nothing is stored", async () => {
    const first = await create({ title: "first", prompt: "REPLY one" });
    const second = await create({ title: "second", prompt: "REPLY two", triggers: [{ after: first }] });
    const automations = query("SELECT id FROM automations").length;
    const triggers = query("SELECT id FROM automation_triggers").length;

    const added = await tool("task_trigger_add", { id: first, trigger: { after: second } });
    assert.match(added, new RegExp(`would make a cycle: ${first} -> ${second} -> ${first}`), added);
    const self = await tool("task_trigger_add", { id: first, trigger: { after: first, on: "any" } });
    assert.match(self, new RegExp(`would make a cycle: ${first} -> ${first}`), self);
    const unknown = await tool("task_create", { title: "orphan", prompt: "REPLY x", triggers: [{ after: "au_nope" }] });
    assert.match(unknown, /"after": "au_nope" is not an automation of this project; give the id of one/, unknown);
    const badOn = await tool("task_create", { title: "bad on", prompt: "REPLY x", triggers: [{ after: first, on: "sometimes" }] });
    assert.match(badOn, /"on": "sometimes" must be one of success, failure, any/, badOn);

    assert.equal(query("SELECT id FROM automations").length, automations, "no automation stored");
    assert.equal(query("SELECT id FROM automation_triggers").length, triggers, "no trigger stored");
  });
});
