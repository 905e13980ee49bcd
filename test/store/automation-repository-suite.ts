import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import { AutomationRepository } from "../../src/store/automation-repository.ts";
import type { Automation, Trigger } from "../../src/automations/automation.ts";
import type { TestApi } from "./suite-support.ts";

const automation = (id: string, overrides: Partial<Automation> = {}): Automation => ({
  id, title: `title ${id}`, prompt: "p", agent: "general", model: { providerID: "m", modelID: "x" }, notify: "on_change",
  sessionMode: "continue", maxRuns: 5, overlap: "queue", catchUp: "once", reportTo: "ses_parent", reportAgent: "build",
  reportModel: { providerID: "m", modelID: "y" }, enabled: true, pausedReason: "why", doneAt: 9, reportToGoneAt: 8,
  createdBy: "ses_parent", createdAt: 1, updatedAt: 2, runCount: 3, consecutiveFailures: 1, lastResultHash: "h",
  continueTaskId: "ses_child", ...overrides,
});
const trigger = (id: string, automationId: string, nextAt?: number): Trigger => ({
  id, automationId, spec: { kind: "interval", every: "1m", everyMs: 60_000 }, createdAt: 0, lastPlannedAt: nextAt && nextAt - 60_000, nextAt,
});

/** The automation tables behind the plugin's SQLite driver: bun:sqlite under Bun, better-sqlite3 under Node. */
export function defineAutomationRepositorySuite({ describe, it }: TestApi): void {
  const withStores = (fn: (open: (projectId?: string) => AutomationRepository) => void) => () => {
    const dir = mkdtempSync(join(tmpdir(), "obt-auto-store-"));
    const opened: SqliteTaskStore[] = [];
    try {
      fn((projectId = "project-a") => {
        const tasks = SqliteTaskStore.open({ path: join(dir, "tasks.db"), projectId });
        opened.push(tasks);
        return new AutomationRepository(tasks.db, projectId);
      });
    } finally {
      for (const s of opened) s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  };

  describe("AutomationRepository", () => {
    it("keeps every field of an automation and its triggers, per project", withStores((open) => {
      const store = open();
      store.saveAutomation(automation("au1"));
      store.saveTrigger(trigger("tr1", "au1", 120_000));
      assert.deepEqual(store.automation("au1"), automation("au1"));
      assert.deepEqual(store.triggers("au1"), [trigger("tr1", "au1", 120_000)]);
      const bare = automation("au2", { model: undefined, maxRuns: undefined, pausedReason: undefined, doneAt: undefined, reportToGoneAt: undefined, lastResultHash: undefined, continueTaskId: undefined, reportModel: undefined });
      for (const key of Object.keys(bare) as (keyof Automation)[]) if (bare[key] === undefined) delete bare[key];
      store.saveAutomation(bare);
      assert.deepEqual(store.automation("au2"), bare);
      assert.equal(open("project-b").automation("au1"), undefined);
    }));

    it("due triggers and the next due time leave out paused and done automations", withStores((open) => {
      const store = open();
      store.saveAutomation(automation("live", { doneAt: undefined }));
      store.saveAutomation(automation("paused", { enabled: false, doneAt: undefined }));
      store.saveAutomation(automation("done"));
      store.saveTrigger(trigger("t-live", "live", 500));
      store.saveTrigger(trigger("t-paused", "paused", 100));
      store.saveTrigger(trigger("t-done", "done", 100));
      assert.equal(store.nextDueAt(), 500);
      assert.deepEqual(store.dueTriggers(1000).map((t) => t.id), ["t-live"]);
      assert.deepEqual(store.dueTriggers(499), []);
    }));

    it("one row per (trigger, planned time), also across two connections: the second insert loses", withStores((open) => {
      const one = open();
      const two = open();
      const run = { automationId: "au1", triggerId: "tr1", firedBy: "schedule" as const, plannedAt: 60_000, status: "starting" as const, createdAt: 1 };
      const won = one.insertRun(run);
      assert.ok(won && won.id > 0);
      assert.equal(two.transaction(() => two.insertRun(run)), undefined);
      assert.ok(two.insertRun({ ...run, plannedAt: 120_000 }));
      assert.ok(one.insertRun({ ...run, triggerId: undefined, plannedAt: undefined, firedBy: "manual" }));
      assert.ok(one.insertRun({ ...run, triggerId: undefined, plannedAt: undefined, firedBy: "manual" }), "manual runs never collide");
      assert.equal(one.runs("au1").length, 4);
    }));

    it("run rows update field by field; lookups by task, number and status; newest first", withStores((open) => {
      const store = open();
      const a = store.insertRun({ automationId: "au1", firedBy: "manual", status: "starting", runNo: 1, createdAt: 1 })!;
      store.updateRun(a.id, { status: "running", taskId: "ses_t" });
      const b = store.insertRun({ automationId: "au1", firedBy: "manual", status: "waiting", createdAt: 2 })!;
      assert.equal(store.activeRunOfTask("ses_t")?.id, a.id);
      assert.equal(store.runByNumber("au1", 1)?.id, a.id);
      assert.deepEqual(store.runsWithStatus("au1", ["waiting"]).map((r) => r.id), [b.id]);
      store.updateRun(a.id, { status: "completed", endedAt: 10, notified: false, notifyNote: "never" });
      assert.deepEqual(store.runs("au1").map((r) => [r.id, r.status, r.notified]), [[b.id, "waiting", undefined], [a.id, "completed", false]]);
      assert.equal(store.activeRunOfTask("ses_t"), undefined);
    }));

    it("delete keeps the history but drops waiting runs; retention purges old ended runs only", withStores((open) => {
      const store = open();
      store.saveAutomation(automation("au1"));
      store.saveTrigger(trigger("tr1", "au1", 5));
      store.insertRun({ automationId: "au1", firedBy: "manual", status: "completed", createdAt: 1, endedAt: 2 });
      store.insertRun({ automationId: "au1", firedBy: "manual", status: "waiting", createdAt: 3 });
      store.insertRun({ automationId: "au1", firedBy: "manual", status: "running", createdAt: 1 });
      store.deleteAutomation("au1");
      assert.equal(store.automation("au1"), undefined);
      assert.deepEqual(store.triggers("au1"), []);
      assert.deepEqual(store.runs("au1").map((r) => r.status), ["running", "completed"]);
      assert.equal(store.purgeRunsOlderThan(100), 1);
      assert.deepEqual(store.runs("au1").map((r) => r.status), ["running"]);
    }));
  });
}
