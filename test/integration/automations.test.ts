import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { startStack, call, toolOutputs, waitUntil, MOCK_MODEL, type Stack, pendingPermissions, answerPermission } from "../harness/plugin-stack.ts";
import { defaultResponder, lastUserText, startMockModel, type MockModel, type MockRequest } from "../harness/mock-model.ts";
import { openSqlite } from "../../src/store/sqlite-driver.ts";

/**
 * Automations on a real OpenCode: scenarios share few server starts (each start costs seconds), so
 * they run side by side in their own parent sessions of one server, then across a SIGKILL restart
 * and with a second server on the same project and database.
 */
describe("automations on the real host", () => {
  let mock: MockModel;
  const stacks: Stack[] = [];
  const dir = mkdtempSync(join(tmpdir(), "ocbt-auto-"));
  const dbPath = join(dir, "tasks.db");
  after(async () => {
    for (const stack of stacks) await stack.stop().catch(() => undefined);
    await mock?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** on_change: the child answers by run number (runs 1 and 2 the same, run 3 different). */
  const responder = (req: MockRequest) => {
    const text = lastUserText(req);
    const run = /ONCHANGE/.test(text) ? Number(/run #(\d+)/.exec(text)?.[1]) : 0;
    if (run > 0) return { text: run <= 2 ? "stable answer" : "new answer" };
    return defaultResponder(req);
  };
  const start = async (reuse?: Stack, config?: Record<string, unknown>) => {
    mock ??= await startMockModel({ responder });
    const stack = await startStack({
      mock, pluginOptions: { dbPath, pollIntervalMs: 500 }, config,
      reuse: reuse && { homeDir: reuse.server.homeDir, projectDir: reuse.server.projectDir },
    });
    stacks.push(stack);
    return stack;
  };

  /** Pending permission requests of the server, through its HTTP API. */
  const permissions = pendingPermissions;
  const reply = answerPermission;

  /** The parent's model calls task_create; the user answers OpenCode's permission prompt. */
  const create = async (stack: Stack, parent: string, args: Record<string, unknown>, answer: "once" | "reject" = "once") => {
    const before = (await toolOutputs(stack, parent, "task_create")).length;
    void stack.server.client.session.promptAsync({
      path: { id: parent }, body: { agent: "build", model: MOCK_MODEL, parts: [{ type: "text", text: call("task_create", args) }] },
    });
    const asked = await waitUntil(async () => (await permissions(stack)).find((p) => p.sessionID === parent), { timeoutMs: 15_000, what: "permission prompt" });
    assert.equal(asked.permission, "background_automation");
    assert.match(asked.patterns.join(), /^au[0-9a-f]+@v1-[0-9a-f]{12}$/, "the new automation's id and version (issue 33), never its title");
    await reply(stack, asked.id, answer);
    const out = await waitUntil(async () => (await toolOutputs(stack, parent, "task_create"))[before], { timeoutMs: 15_000, what: "task_create output" });
    await waitUntil(async () => (await stack.server.client.session.status()).data?.[parent] === undefined, { what: "parent idle" });
    return { out, id: /automation (au\w+)/.exec(out)?.[1] };
  };

  const automationNotes = async (stack: Stack, parent: string) =>
    (await stack.messages(parent))
      .filter((m) => m.info.role === "user")
      .map((m) => m.parts.filter((p) => p.type === "text").map((p) => p.text).join("\n"))
      .filter((text) => text.includes("<automation-"));

  const db = () => openSqlite(dbPath, { readonly: true });
  const runs = (automationId: string) => {
    const conn = db();
    try {
      return conn.prepare("SELECT * FROM automation_runs WHERE automation_id = ? ORDER BY id").all(automationId) as any[];
    } finally {
      conn.close();
    }
  };
  const automation = (id: string) => {
    const conn = db();
    try {
      return conn.prepare("SELECT * FROM automations WHERE id = ?").get(id) as any;
    } finally {
      conn.close();
    }
  };

  let first: Stack;
  let survivor: string;

  it("interval, once, six-field cron, on_change, failure pause, overlap and approval in one server", async () => {
    first = await start();
    const s = first;
    const [p1, p2, p3, p4, p5, p6, p7, p8, p9] = await Promise.all(
      ["interval", "once", "cron", "on_change", "failing", "overlap", "rejected", "continue", "expect"].map((t) => s.newSession(`parent: ${t}`)),
    );
    // One after the other: parallel prompts that each wait on a permission prompt did not all show one.
    const at = new Date(Date.now() + 12_000).toISOString();
    const made = [];
    for (const [parent, args, answer] of [
      [p1, { title: "every two seconds", prompt: "REPLY tick result", triggers: [{ every: "2s" }], max_runs: 2, notify: "always" }],
      [p2, { title: "once later", prompt: "REPLY once result", triggers: [{ at }], notify: "always" }],
      [p3, { title: "seconds cron", prompt: "REPLY cron result", triggers: [{ cron: "*/3 * * * * *", timezone: "UTC" }], max_runs: 1, notify: "always" }],
      [p4, { title: "changes only", prompt: "ONCHANGE check", triggers: [{ every: "2s" }], max_runs: 3 }],
      [p5, { title: "always failing", prompt: "FAIL 400 boom", triggers: [{ every: "2s" }], notify: "never" }],
      [p6, { title: "slow one", prompt: "SLOW 3500\nREPLY slow done", triggers: [{ every: "1s" }], max_runs: 2, notify: "never" }],
      [p7, { title: "unwanted", prompt: "REPLY no", triggers: [{ every: "1s" }] }, "reject"],
      [p8, { title: "remembers", prompt: "REPLY same child", triggers: [{ every: "2s" }], max_runs: 2, session: "continue", notify: "never" }],
      [p9, { title: "writes a report", prompt: `CALL write ${JSON.stringify({ filePath: "auto-report.md", content: "# Report\n" })}`, triggers: [{ every: "2s" }], max_runs: 1, notify: "never", expect: { files: ["auto-report.md"] } }],
    ] as [string, Record<string, unknown>, ("once" | "reject")?][]) made.push(await create(s, parent, args, answer));
    const [interval, once, cron, onChange, failing, slow, , remembers, reporter] = made.map((m) => m.id!);
    assert.match(made[0]!.out, /Created automation au\w+ "every two seconds" \(enabled; notify always\)/);
    assert.match(made[6]!.out, /rejected automation "unwanted"; nothing was stored/);
    assert.equal(made[6]!.id, undefined);

    // interval every 2s, max_runs 2: fires twice and the creating session gets both results.
    const ticks = (await waitUntil(async () => { const n = await automationNotes(s, p1); return n.length >= 2 && n; }, { timeoutMs: 30_000, what: "two interval results" })) as string[];
    assert.match(ticks[0]!, /run #1 .*completed:\ntick result/);
    assert.match(ticks[1]!, /run #2 .*completed:\ntick result/);
    await waitUntil(() => automation(interval).done_at !== null, { what: "done after max_runs" });

    // once: fires at its time.
    await waitUntil(() => runs(once).some((r) => r.status === "completed"), { timeoutMs: 30_000, what: "once run" });
    const onceRun = runs(once)[0];
    assert.equal(onceRun.planned_at, Date.parse(at));
    assert.ok(onceRun.started_at >= Date.parse(at) && onceRun.started_at - Date.parse(at) < 1500, `late by ${onceRun.started_at - Date.parse(at)} ms`);
    await waitUntil(async () => (await automationNotes(s, p2)).length === 1, { what: "once result told" });

    // six-field cron with seconds.
    await waitUntil(() => runs(cron).some((r) => r.status === "completed"), { timeoutMs: 30_000, what: "cron run" });
    assert.equal(new Date(runs(cron)[0].planned_at).getUTCSeconds() % 3, 0);

    // on_change: runs 1 and 2 answer the same, run 3 differs: two notifications.
    await waitUntil(() => runs(onChange).filter((r) => r.status === "completed").length === 3, { timeoutMs: 30_000, what: "three on_change runs" });
    const changed = (await waitUntil(async () => { const n = await automationNotes(s, p4); return n.length >= 2 && n; }, { what: "on_change notes" })) as string[];
    assert.equal(changed.length, 2);
    assert.match(changed[0]!, /stable answer/);
    assert.match(changed[1]!, /new answer/);
    assert.deepEqual(runs(onChange).map((r) => r.notified), [1, 0, 1]);

    // two failing runs pause the automation and the parent is told.
    await waitUntil(() => automation(failing).enabled === 0, { timeoutMs: 30_000, what: "paused after failures" });
    const told = await waitUntil(async () => (await automationNotes(s, p5)).find((n) => n.includes("PAUSED")), { what: "pause note" });
    assert.match(told, /PAUSED after 2 consecutive failed runs\. Last error: .*boom/);
    assert.equal(runs(failing).filter((r) => r.status === "error").length, 2);

    // slow run, fast interval: skips recorded, never two at once.
    await waitUntil(() => runs(slow).filter((r) => r.status === "completed").length === 2, { timeoutMs: 30_000, what: "two slow runs" });
    const slowRuns = runs(slow);
    // Consecutive skips are one row that counts them (skip_count).
    const overlapSkips = slowRuns.filter((r) => r.status === "skipped" && r.skip_reason === "overlap");
    assert.ok(overlapSkips.reduce((n, r) => n + (r.skip_count ?? 1), 0) >= 2, JSON.stringify(overlapSkips));
    assert.ok(overlapSkips.length <= 2, "one row per streak: before the second run, and at most one after it");
    const done = slowRuns.filter((r) => r.status === "completed");
    assert.ok(done[1].started_at >= done[0].ended_at, "the second run started after the first ended");
    survivor = interval;

    // session: continue: the second run resumes the first run's child, which sees both prompts.
    await waitUntil(() => runs(remembers).filter((r) => r.status === "completed").length === 2, { timeoutMs: 30_000, what: "two continued runs" });
    const [r1, r2] = runs(remembers);
    assert.equal(r1.task_id, r2.task_id);
    const prompts = (await s.messages(r1.task_id)).filter((m) => m.info.role === "user").map((m) => m.parts.map((p) => p.text ?? "").join(""));
    assert.deepEqual(prompts.map((t) => /run #(\d+)/.exec(t)?.[1]), ["1", "2"]);

    // expect: the run's child writes the expected file with the real write tool; met at the first check, the run completes.
    assert.equal(automation(reporter).expect, JSON.stringify({ files: ["auto-report.md"] }));
    await waitUntil(() => runs(reporter).some((r) => r.status !== "running" && r.status !== "starting"), { timeoutMs: 30_000, what: "expect run ended" });
    const [report] = runs(reporter);
    assert.equal(report.status, "completed", report.summary);
    assert.equal(readFileSync(join(s.server.projectDir, "auto-report.md"), "utf8"), "# Report\n");
    const conn = db();
    try {
      const spec = conn.prepare("SELECT spec FROM task_evidence_specs WHERE task_id = ?").get(report.task_id) as { spec: string } | undefined;
      assert.deepEqual(JSON.parse(spec?.spec ?? "{}").expect, { files: ["auto-report.md"] }, "the run's task carries the definition's expect");
    } finally {
      conn.close();
    }
    const childPrompts = (await s.messages(report.task_id)).filter((m) => m.info.role === "user");
    assert.equal(childPrompts.length, 1, "no continuation was needed");
  });

  it("definitions survive a SIGKILL restart and keep firing; two servers on one database fire each occurrence once", async () => {
    const parent = await first.newSession("parent: survivor");
    const { id } = await create(first, parent, { title: "keeps going", prompt: "REPLY still here", triggers: [{ every: "2s" }], notify: "never" });
    await waitUntil(() => runs(id!).some((r) => r.status === "completed"), { timeoutMs: 20_000, what: "a run before the kill" });
    const at = Date.now() + 8000; // creating it takes ~1 s; the margin is for a loaded machine
    const catcher = (await create(first, parent, { title: "catch up", prompt: "REPLY caught up", triggers: [{ at: new Date(at).toISOString() }], catch_up: "once", notify: "never" })).id!;
    await first.server.kill();
    first.events.close();
    const killedAt = Date.now();
    assert.ok(killedAt < at, "the once trigger falls in the down time");
    // Down past the once trigger plus the start grace (10 s): at start it counts as missed.
    await new Promise((r) => setTimeout(r, at - Date.now() + 11_000));
    const second = await start(first);
    // A second process on the same project and database, whose config allows automations without asking.
    const third = await start(first, { permission: { background_automation: "allow" } });
    await waitUntil(() => runs(id!).filter((r) => r.status === "completed" && r.started_at > killedAt).length >= 4, { timeoutMs: 30_000, what: "runs after the restart" });
    const all = runs(id!);
    assert.ok(all.some((r) => r.status === "missed" && r.missed_count >= 1), "the down time is recorded as missed");
    // catch_up: once: the missed once trigger is recorded and one catch-up run follows.
    await waitUntil(() => runs(catcher).some((r) => r.fired_by === "catch_up" && r.status === "completed"), { timeoutMs: 20_000, what: "catch-up run" });
    const caught = runs(catcher);
    assert.deepEqual(caught.map((r) => [r.status, r.fired_by, r.missed_count]), [["missed", "schedule", 1], ["completed", "catch_up", null]]);
    const planned = all.filter((r) => r.planned_at !== null && r.status !== "missed").map((r) => r.planned_at);
    assert.equal(new Set(planned).size, planned.length, "each planned time once");
    const numbers = all.filter((r) => r.run_no !== null).map((r) => r.run_no);
    assert.equal(new Set(numbers).size, numbers.length, "each run number once");
    // Each run launched exactly one child: one session per run number.
    const children = ((await second.server.client.session.list()).data ?? []).filter((s: any) => s.title?.startsWith("keeps going (automation run #"));
    const titles = children.map((s: any) => s.title);
    assert.equal(new Set(titles).size, titles.length, `one child per run: ${titles.join(", ")}`);
    assert.ok(all.filter((r) => r.task_id !== null).length === new Set(all.map((r) => r.task_id).filter(Boolean)).size);
    void survivor;

    // The config's "allow" skips the prompt; a deleted report-to session: runs go on, recorded, marked.
    const orphanParent = await third.newSession("parent: goes away");
    await third.say(orphanParent, call("task_create", { title: "orphan", prompt: "REPLY orphan result", triggers: [{ every: "2s" }], max_runs: 1, notify: "always" }));
    const orphanOut = (await toolOutputs(third, orphanParent, "task_create"))[0]!;
    assert.match(orphanOut, /Created automation (au\w+) "orphan"/);
    assert.equal((await permissions(third)).length, 0, "no prompt");
    const orphan = /automation (au\w+)/.exec(orphanOut)![1]!;
    await third.server.client.session.delete({ path: { id: orphanParent } });
    await waitUntil(() => runs(orphan).some((r) => r.status === "completed"), { timeoutMs: 20_000, what: "run for a deleted session" });
    const [orphanRun] = runs(orphan);
    assert.equal(orphanRun.notified, 0);
    assert.equal(orphanRun.notify_note, "report-to session gone");
    assert.ok(automation(orphan).report_to_gone_at !== null);
  });
});
