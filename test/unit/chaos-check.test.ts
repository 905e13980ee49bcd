/** The chaos run's checker (bench/chaos-check.ts) on synthetic observations: each broken invariant is caught. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { checkChaos, isClean, type ChaosObservation, type TaskRow } from "../../bench/chaos-check.ts";

const ok = (key: string, id: string, over: Partial<TaskRow> = {}): TaskRow => ({
  key, id, status: "completed", result: `CHAOS ${key} done`, createdAt: 1000, settledAt: 5000,
  expected: { status: "completed", result: `CHAOS ${key} done` }, ...over,
});

/** Two tasks and one run, all well: A (p0.1) was killed at 3000 and B (p1.2) took T2 over. */
const clean = (): ChaosObservation => ({
  procs: [{ proc: "p0.1", startedAt: 0, endedAt: 3000 }, { proc: "p1.2", startedAt: 0 }],
  requests: [
    { proc: "p0.1", key: "T1", at: 1100, endedAt: 1500 },
    { proc: "p0.1", key: "T2", at: 1200, endedAt: 3000 },
    { proc: "p1.2", key: "T2", at: 4000, endedAt: 4500 },
    { proc: "p1.2", key: "au1#1", at: 2000, endedAt: 2300 },
  ],
  tasks: [ok("T1", "ses_1"), ok("T2", "ses_2", { status: "error", result: null, error: "400", expected: { status: "error" } })],
  launched: [{ key: "T1", id: "ses_1" }, { key: "T2", id: "ses_2" }],
  notices: [{ taskId: "ses_1", status: "completed" }, { taskId: "ses_2", status: "error" }],
  runs: [{ automationId: "au1", runNo: 1, triggerId: "tr1", plannedAt: 1900, status: "completed", createdAt: 1900, startedAt: 1950, taskId: "ses_r1" }],
  runNotices: [{ automationId: "au1", runNo: 1 }],
  notifyingAutomations: ["au1"],
  cliTasks: [{ id: "ses_1", status: "completed" }, { id: "ses_2", status: "error" }],
  checkedAt: 10_000, stuckAfterMs: 60_000,
});

const verdictOf = (change: (o: ChaosObservation) => void) => {
  const o = clean();
  change(o);
  return checkChaos(o);
};

describe("chaos checker", () => {
  it("passes a clean run, a takeover after a kill included", () => {
    const v = checkChaos(clean());
    assert.ok(isClean(v), JSON.stringify(v));
  });

  it("a child driven by two live processes is doubled", () => {
    const v = verdictOf((o) => o.requests.push({ proc: "p1.2", key: "T1", at: 1600, endedAt: 1700 }));
    assert.equal(v.doubled.length, 1);
    assert.match(v.doubled[0], /T1: driven by p0.1 and p1.2 while both lived/);
  });

  it("two requests of one child open at once are doubled, even from one process", () => {
    const v = verdictOf((o) => o.requests.push({ proc: "p0.1", key: "T1", at: 1300, endedAt: 1400 }));
    assert.match(v.doubled.join("\n"), /T1: two requests open at once/);
  });

  it("a request long after its task settled is doubled", () => {
    const v = verdictOf((o) => o.requests.push({ proc: "p1.2", key: "T1", at: 9000, endedAt: 9100 }));
    assert.match(v.doubled.join("\n"), /T1: 1 request\(s\) after it settled/);
  });

  it("a notice twice is doubled; no notice is lost", () => {
    assert.match(verdictOf((o) => o.notices.push({ taskId: "ses_1", status: "completed" })).doubled.join(), /ses_1: the parent was told 2 times/);
    assert.match(verdictOf((o) => o.notices.shift()).lost.join(), /T1 ses_1: settled completed, the parent was never told/);
  });

  it("a note that a restart interrupted the task (status running) is no second notice", () => {
    const v = verdictOf((o) => o.notices.push({ taskId: "ses_1", status: "running" }));
    assert.ok(isClean(v), JSON.stringify(v));
    assert.equal(v.counts["interrupted notes"], 1);
  });

  it("a launched task missing from the database is lost", () => {
    assert.match(verdictOf((o) => o.launched.push({ key: "T3", id: "ses_3" })).lost.join(), /T3: launched as ses_3, no such task/);
  });

  it("a task still running past the bound is stuck; a young one is not", () => {
    assert.match(verdictOf((o) => { o.tasks[0].status = "running"; o.stuckAfterMs = 5000; }).stuck.join(), /T1 ses_1: running 9 s after launch/);
    assert.deepEqual(verdictOf((o) => { o.tasks[0].status = "running"; }).stuck, []);
  });

  it("a task settled otherwise than its script says is wrong, as is another result or a notice of another status", () => {
    assert.match(verdictOf((o) => { o.tasks[1].status = "completed"; o.notices[1].status = "completed"; }).wrong.join(), /T2 ses_2: completed .*its script says error/);
    assert.match(verdictOf((o) => { o.tasks[0].result = "ok: OpenCode was restarted"; }).wrong.join(), /result "ok: OpenCode was restarted"/);
    assert.match(verdictOf((o) => { o.notices[0].status = "error"; }).wrong.join(), /told error, stored completed/);
    assert.match(verdictOf((o) => { o.cliTasks = [{ id: "ses_1", status: "completed" }]; }).wrong.join(), /T2 ses_2: the CLI shows no such task, the database error/);
  });

  it("an occurrence fired twice, two runs on one task, a run stuck starting and a run told twice or never are caught", () => {
    const run = clean().runs[0];
    assert.match(verdictOf((o) => o.runs.push({ ...run, runNo: 2, taskId: "ses_r2" })).doubled.join(), /occurrence fired 2 times/);
    assert.match(verdictOf((o) => o.runs.push({ ...run, runNo: 2, plannedAt: 2900 })).doubled.join(), /ses_r1: one task for 2 runs/);
    assert.match(verdictOf((o) => { o.runs[0].status = "starting"; o.stuckAfterMs = 5000; }).stuck.join(), /au1#1: starting 8 s/);
    assert.match(verdictOf((o) => o.runNotices.push({ automationId: "au1", runNo: 1 })).doubled.join(), /au1#1: told 2 times/);
    assert.match(verdictOf((o) => o.runNotices.pop()).lost.join(), /au1#1: ended completed, its report session was never told/);
  });
});
