import assert from "node:assert/strict";
import type { EvidenceStore } from "../../src/evidence/evidence-types.ts";
import { MemoryEvidenceStore } from "../../src/evidence/memory-evidence-store.ts";
import { SqliteEvidenceStore } from "../../src/store/sqlite-evidence-store.ts";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import { MemoryTaskStore } from "../../src/core/memory-task-store.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestApi } from "./suite-support.ts";
import { runningTask } from "./task-fixtures.ts";

type Opened = { evidence: EvidenceStore; tasks?: SqliteTaskStore };

/** One contract for both evidence stores; the SQLite one also on the task store's connection and transactions. */
export function defineEvidenceStoreSuite({ describe, it }: TestApi): void {
  const kinds: [string, (file: string, projectId: string) => Opened][] = [
    ["MemoryEvidenceStore", () => ({ evidence: new MemoryEvidenceStore() })],
    ["SqliteEvidenceStore", (file, projectId) => {
      const tasks = SqliteTaskStore.open({ path: file, projectId });
      return { evidence: new SqliteEvidenceStore(tasks.db, projectId), tasks };
    }],
  ];
  for (const [name, open] of kinds) {
    describe(name, () => {
      it("upserts rows by task, run, kind and key, and reads them back in first-written order, per run", () => {
        withStore(open, ({ evidence }) => {
          evidence.put({ taskId: "t1", run: 0, kind: "file", key: "b.md", data: { n: 1 } });
          evidence.put({ taskId: "t1", run: 0, kind: "command", key: "call_1", data: { command: "ls" } });
          evidence.put({ taskId: "t1", run: 0, kind: "file", key: "b.md", data: { n: 2 } });
          evidence.put({ taskId: "t1", run: 1, kind: "file", key: "b.md", data: { n: 3 } });
          evidence.put({ taskId: "t2", run: 0, kind: "file", key: "b.md", data: { n: 9 } });
          assert.deepEqual(evidence.rows("t1", 0).map((r) => [r.kind, r.key, r.data]), [["file", "b.md", { n: 2 }], ["command", "call_1", { command: "ls" }]]);
          assert.deepEqual(evidence.rows("t1").map((r) => r.run), [0, 0, 1]);
          assert.deepEqual(evidence.rows("nope"), []);
        });
      });

      it("keeps one spec per task", () => {
        withStore(open, ({ evidence }) => {
          assert.equal(evidence.spec("t1"), undefined);
          evidence.putSpec("t1", { expect: { files: ["a.md"] }, continuations: 0 });
          evidence.putSpec("t1", { expect: { files: ["a.md"] }, milestones: true, continuations: 1 });
          assert.deepEqual(evidence.spec("t1"), { expect: { files: ["a.md"] }, milestones: true, continuations: 1 });
        });
      });

      if (name === "SqliteEvidenceStore") {
        it("rows written in a task store transaction that fails are rolled back with it; orphans are purged", () => {
          withStore(open, ({ evidence, tasks }) => {
            assert.throws(() => tasks!.transaction(() => {
              evidence.put({ taskId: "t1", run: 0, kind: "file", key: "x", data: {} });
              throw new Error("boom");
            }));
            assert.deepEqual(evidence.rows("t1"), []);
            tasks!.save(runningTask("kept"));
            evidence.put({ taskId: "kept", run: 0, kind: "file", key: "x", data: {} });
            evidence.put({ taskId: "gone", run: 0, kind: "file", key: "x", data: {} });
            evidence.putSpec("gone", { continuations: 0 });
            (evidence as SqliteEvidenceStore).purgeOrphans();
            assert.equal(evidence.rows("kept").length, 1);
            assert.deepEqual([evidence.rows("gone"), evidence.spec("gone")], [[], undefined]);
            evidence.putSpec("kept", { continuations: 0 });
            tasks!.remove("kept");
            assert.deepEqual([evidence.rows("kept"), evidence.spec("kept")], [[], undefined], "a removed task takes its evidence with it");
            tasks!.save({ ...runningTask("old"), status: "completed", settledAt: 1 });
            evidence.put({ taskId: "old", run: 0, kind: "file", key: "x", data: {} });
            tasks!.purgeOlderThan(2);
            assert.deepEqual(evidence.rows("old"), [], "retention removes evidence with its task");
          });
        });
      }
    });
  }
}

/** The event log keeps no secrets either: both task stores mask event details. */
export function defineEventMaskingSuite({ describe, it }: TestApi): void {
  describe("event log masking", () => {
    for (const [name, open] of [["MemoryTaskStore", () => new MemoryTaskStore()], ["SqliteTaskStore", (file: string) => SqliteTaskStore.open({ path: file, projectId: "p" })]] as const) {
      it(`${name} masks secrets in event details`, () => {
        const dir = mkdtempSync(join(tmpdir(), "obt-mask-"));
        const store = open(join(dir, "tasks.db"));
        try {
          store.appendEvent({ taskId: "t", at: 1, kind: "status:error", detail: "401 from provider: invalid key sk-proj-abcdefghijklmnopqrstuvwx" });
          store.appendEvent({ taskId: "t", at: 2, kind: "launched" });
          assert.deepEqual(store.events("t").map((e) => e.detail), ["401 from provider: invalid key sk-proj-[MASKED]", undefined]);
        } finally {
          store.close();
          rmSync(dir, { recursive: true, force: true });
        }
      });
    }
  });
}

function withStore(open: (file: string, projectId: string) => Opened, fn: (opened: Opened) => void): void {
  const dir = mkdtempSync(join(tmpdir(), "obt-evidence-"));
  const opened = open(join(dir, "tasks.db"), "project-a");
  try {
    fn(opened);
  } finally {
    opened.tasks?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
