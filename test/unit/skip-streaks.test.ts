import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import { AutomationRepository } from "../../src/store/automation-repository.ts";
import { RunRows, skipKind } from "../../src/automations/run-rows.ts";
import { runLine, skippedText } from "../../src/automations/automation-text.ts";
import { ReadModel } from "../../src/store/reads/read-model.ts";
import type { NewRun } from "../../src/store/automation-repository.ts";
import { tempDb } from "../helpers/automation-fixture.ts";

/** Two processes' views of one database file: each its own connection, repository and rows. */
function twoProcesses() {
  const db = tempDb();
  const stores = [SqliteTaskStore.open({ path: db.path, projectId: "proj" }), SqliteTaskStore.open({ path: db.path, projectId: "proj" })];
  after(() => { for (const s of stores) s.close(); db.cleanup(); });
  const repos = stores.map((s) => new AutomationRepository(s.db, "proj"));
  return { path: db.path, repos, rows: repos.map((r) => new RunRows(r)) };
}

const BUDGET = (spent: string) => `daily budget reached ($${spent} of $2.00)`;
const skip = (at: number, skipReason: string, over: Partial<NewRun> = {}): NewRun & { skipReason: string } =>
  ({ automationId: "au1", triggerId: "tr1", firedBy: "schedule", plannedAt: at, status: "skipped", skipReason, createdAt: at, ...over });

describe("a streak of skipped firings is one row", () => {
  it("consecutive skips for one reason fold into one row that counts them, first and latest time, latest figures", () => {
    const { repos, rows } = twoProcesses();
    for (let i = 0; i < 1203; i++) rows[0]!.skip(skip(1000 + i * 1000, BUDGET(i < 600 ? "2.03" : "2.05")));
    const [row, ...rest] = repos[0]!.runs("au1", 10);
    assert.equal(rest.length, 0, "one row for 1,203 firings");
    assert.equal(row!.skipCount, 1203);
    assert.equal(row!.createdAt, 1000);
    assert.equal(row!.plannedAt, 1000, "the first firing's occurrence");
    assert.equal(row!.endedAt, 1000 + 1202 * 1000);
    assert.equal(row!.skipReason, BUDGET("2.05"), "the latest firing's figures");
    assert.equal(skippedText(row!), "skipped 1,203 times until 1970-01-01T00:20:03Z (daily budget reached ($2.05 of $2.00))");
    assert.match(runLine(row!, []), /^- 1970-01-01T00:00:01Z skipped 1,203 times until 1970-01-01T00:20:03Z \(daily budget reached \(\$2\.05 of \$2\.00\)\) trigger tr1$/);
  });

  it("a run, another reason or a keyed event starts a new row; a single skip reads as before", () => {
    const { repos, rows } = twoProcesses();
    const r = rows[0]!;
    r.skip(skip(1, "overlap"));
    r.skip(skip(2, "overlap"));
    r.skip(skip(3, BUDGET("2.03")));
    r.insert({ automationId: "au1", runNo: 1, firedBy: "manual", status: "starting", createdAt: 4 });
    r.skip(skip(5, BUDGET("2.04")));
    r.skip(skip(6, BUDGET("2.04"), { eventKey: "after:7" }));
    r.skip(skip(7, BUDGET("2.04")));
    const history = repos[0]!.runs("au1", 10).reverse().map((x) => `${x.status}:${x.skipReason ?? ""}:${x.skipCount ?? 1}`);
    assert.deepEqual(history, [
      "skipped:overlap:2", `skipped:${BUDGET("2.03")}:1`, "starting::1", `skipped:${BUDGET("2.04")}:1`, `skipped:${BUDGET("2.04")}:1`, `skipped:${BUDGET("2.04")}:1`,
    ]);
    assert.equal(skippedText(repos[0]!.runs("au1", 1)[0]!), `skipped (${BUDGET("2.04")})`);
    assert.notEqual(skipKind(BUDGET("2.03")), skipKind(`${BUDGET("2.03").slice(0, -1)} for all background work today, option dailyBudgetUsd)`), "own and machine budget differ");
  });

  it("two triggers skipping in turn keep a streak each; a run breaks both", () => {
    const { repos, rows } = twoProcesses();
    const r = rows[0]!;
    for (let i = 0; i < 10; i++) r.skip(skip(i, "overlap", { triggerId: i % 2 ? "fast" : "slow" }));
    const counts = () => repos[0]!.runs("au1", 10).reverse().map((x) => `${x.triggerId ?? "-"}:${x.status}:${x.skipCount ?? 1}`);
    assert.deepEqual(counts(), ["slow:skipped:5", "fast:skipped:5"]);
    r.insert({ automationId: "au1", runNo: 1, firedBy: "manual", status: "starting", createdAt: 11 });
    r.skip(skip(12, "overlap", { triggerId: "slow" }));
    assert.deepEqual(counts().slice(-2), ["-:starting:1", "slow:skipped:1"]);
  });

  it("two processes taking turns on one database extend the same row, never start a second one", () => {
    const { repos, rows } = twoProcesses();
    for (let i = 0; i < 40; i++) rows[i % 2]!.skip(skip(i, BUDGET("2.03")));
    assert.deepEqual(repos[1]!.runs("au1", 10).map((x) => x.skipCount), [40]);
  });

  it("the dashboard's needs-attention counts the firings of a streak, dated by its latest", () => {
    const { path, rows } = twoProcesses();
    for (let i = 0; i < 5; i++) rows[0]!.skip(skip(10_000 + i, BUDGET("2.03")));
    const reader = ReadModel.open(path);
    try {
      assert.deepEqual(reader.spend.budgetSkips(10_004).map((s) => [s.count, s.at, s.reason]), [[5, 10_004, BUDGET("2.03")]]);
      assert.deepEqual(reader.spend.budgetSkips(10_005), [], "nothing skipped since");
      assert.deepEqual(reader.automations.runs("proj", "au1", { from: 10_003 }).map((r) => r.skipCount), [5], "a run list from a time after its first firing still shows the streak");
    } finally {
      reader.close();
    }
  });
});
