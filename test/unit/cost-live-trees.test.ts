import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store } from "../../src/store/store.ts";
import { TaskSpend, type SpendRows } from "../../src/cost/task-spend.ts";
import type { MessageUsage } from "../../src/host/host.ts";

const usage = (input: number, costUsd = 0): MessageUsage => ({ input, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0, costUsd });

/** A store on a fresh file, its spend rows counting the reads a settle could make. */
function fixture() {
  const dir = mkdtempSync(join(tmpdir(), "cost-live-"));
  const path = join(dir, "e.db");
  const store = Store.open({ path, projectId: "p" });
  const reads = { rows: 0, budgets: 0 };
  const rows: SpendRows = Object.assign(Object.create(store.spend) as SpendRows, {
    ofTasks: (ids: readonly string[]) => (reads.rows++, store.spend.ofTasks(ids)),
    messagesOf: (id: string) => (reads.rows++, store.spend.messagesOf(id)),
    budgetsAbove: (id: string) => (reads.budgets++, store.spend.budgetsAbove(id)),
  });
  const errors: string[] = [];
  const spend = new TaskSpend(rows, store.tasks, (m, e) => errors.push(`${m}: ${String(e)}`));
  after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { path, store, spend, reads, errors };
}

describe("a tree this process launched", () => {
  it("is summed from memory at a settle: the task with its descendants, a message's latest numbers once, no read", () => {
    const f = fixture();
    f.spend.launched({ id: "a", parentSessionID: "ses_user" });
    f.spend.launched({ id: "b", parentSessionID: "a" });
    f.spend.record("a", "m1", usage(0));
    f.spend.record("a", "m1", usage(1000, 0.003));
    f.spend.record("a", "m1", usage(1000, 0.003));
    f.spend.record("b", "m2", usage(2000, 0.006));
    f.spend.record("b", "m2", usage(2500, 0.007)); // a message's newer numbers replace its older ones
    assert.equal(f.spend.line("b"), "$0.007 · 2.5k tok");
    f.spend.forget("b"); // b settled: a still counts what b spent
    assert.equal(f.spend.line("a"), "$0.010 · 3.5k tok");
    assert.equal(f.reads.rows, 0, "no spend row was read");
    assert.deepEqual(f.errors, []);
  });

  it("is read from the rows once another connection has written to the database, and then counts what it wrote", () => {
    const f = fixture();
    f.spend.launched({ id: "a", parentSessionID: "ses_user" });
    f.spend.record("a", "m1", usage(1000, 0.003));
    assert.equal(f.spend.line("a"), "$0.003 · 1.0k tok");
    assert.equal(f.reads.rows, 0);
    const other = Store.open({ path: f.path, projectId: "p" });
    other.spend.put("a", "m9", { tokens: { input: 4000, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, costUsd: 0.012, requests: 1 });
    other.close(); // written
    assert.equal(f.spend.line("a"), "$0.015 · 5.0k tok");
    assert.ok(f.reads.rows > 0, "read from the rows");
  });

  it("is read from the rows when it was not launched here (e.g. before a restart)", () => {
    const f = fixture();
    f.spend.record("x", "m1", usage(1000));
    assert.equal(f.spend.line("x"), "1.0k tok");
    assert.ok(f.reads.rows > 0);
  });

  it("knows its budgets without a query per task: the launcher's are read once, its own come with the launch", () => {
    const f = fixture();
    for (const id of ["a", "b", "c"]) f.spend.launched({ id, parentSessionID: "ses_user" });
    f.spend.launched({ id: "d", parentSessionID: "ses_user", budget: { tokens: 1500 } });
    f.spend.launched({ id: "e", parentSessionID: "d" });
    for (const id of ["a", "b", "c"]) assert.equal(f.spend.record(id, `m_${id}`, usage(5000)), undefined, "no budget: never stopped");
    assert.equal(f.spend.record("e", "m_e1", usage(1000)), undefined);
    assert.deepEqual(f.spend.record("e", "m_e2", usage(1000)), { taskId: "d", error: "budget_exceeded: spent 2.0k of 1.5k tokens (2 requests)" },
      "a request of a child counts against its launcher's budget");
    assert.equal(f.reads.budgets, 1, "the user's session, read once for all five launches");
  });
});
