import assert from "node:assert/strict";
import { openSqlite, type SqliteDatabase } from "../../src/store/sqlite-driver.ts";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import { ReadModel } from "../../src/store/reads/read-model.ts";
import { TASK_COLUMNS, taskToParams } from "../../src/store/task-row.ts";
import { inWorkspace, type MakeStore, type TestApi } from "./suite-support.ts";
import { notification, runningTask } from "./task-fixtures.ts";

/**
 * A database file shared with other connections (other OpenCode processes, older plugin versions):
 * what they write is read back without reloading every task, and retention cleans up after them.
 */
export function defineSharedFileTests(makeStore: MakeStore, { describe, it }: TestApi): void {
  const test = (title: string, fn: Parameters<typeof inWorkspace>[1]) => it(title, () => inWorkspace(makeStore, fn));

  describe("shared file", () => {
    test("another connection's write is read back alone, not by reloading every task", ({ open, file }) => {
      const a = open();
      const b = open();
      a.save(runningTask("ses_a"));
      a.save(runningTask("ses_b"));
      assert.deepEqual(ids(b.list()), ["ses_a", "ses_b"]);
      // ses_a changes behind the counter's back: only a full reload would see it.
      withRaw(file, (db) => {
        db.exec("DROP TRIGGER tasks_changed_on_update");
        db.prepare("UPDATE tasks SET description = 'unseen' WHERE id = 'ses_a'").run();
      });
      a.save(runningTask("ses_c"));
      assert.deepEqual(
        b.list().map((t) => [t.id, t.description]),
        [["ses_a", "task ses_a"], ["ses_b", "task ses_b"], ["ses_c", "task ses_c"]],
      );
    });

    test("writes by a connection that knows nothing of the counter (an older plugin) are seen", ({ open, file }) => {
      const b = open();
      b.save(runningTask("ses_a"));
      b.save(runningTask("ses_b"));
      assert.deepEqual(ids(b.list()), ["ses_a", "ses_b"]);
      withRaw(file, (db) => {
        db.prepare("UPDATE tasks SET status = 'completed', settled_at = 5 WHERE id = 'ses_a'").run();
        db.prepare("DELETE FROM tasks WHERE id = 'ses_b'").run();
        const columns = TASK_COLUMNS.join(", ");
        const values = TASK_COLUMNS.map(() => "?").join(", ");
        db.prepare(`INSERT INTO tasks (${columns}) VALUES (${values})`).run(...taskToParams("project-a", runningTask("ses_c")));
      });
      assert.deepEqual(
        b.list().map((t) => [t.id, t.status]),
        [["ses_a", "completed"], ["ses_c", "running"]],
      );
    });

    test("another project's writes change nothing in this project's list", ({ open }) => {
      const a = open("project-a");
      const b = open("project-b");
      a.save(runningTask("ses_a"));
      assert.deepEqual(ids(a.list()), ["ses_a"]);
      b.save(runningTask("ses_b"));
      b.remove("ses_b");
      assert.deepEqual(ids(a.list()), ["ses_a"]);
    });

    test("purge also removes delivered notifications and events whose task is gone", ({ open, file }) => {
      const store = sqlite(open());
      store.save(runningTask("ses_kept"));
      for (const taskId of ["ses_kept", "ses_ghost"]) store.appendEvent({ taskId, at: 1, kind: "launched" });
      store.enqueueNotification(notification("n_ghost_done", { taskId: "ses_ghost" }));
      store.enqueueNotification(notification("n_ghost_waiting", { taskId: "ses_ghost", createdAt: 2_000 }));
      store.enqueueNotification(notification("n_kept_done", { taskId: "ses_kept" }));
      store.markDelivered("n_ghost_done", 5);
      store.markDelivered("n_kept_done", 5);
      assert.equal(store.purgeOlderThan(1_000), 0);
      assert.deepEqual(store.events("ses_ghost"), []);
      assert.equal(store.events("ses_kept").length, 1);
      const reader = ReadModel.open(file);
      try {
        assert.deepEqual(
          reader.tasks.notifications().map((n) => n.id).sort(),
          ["n_ghost_waiting", "n_kept_done"],
        );
      } finally {
        reader.close();
      }
    });
  });
}

function withRaw(file: string, fn: (db: SqliteDatabase) => void): void {
  const db = openSqlite(file);
  try {
    fn(db);
  } finally {
    db.close();
  }
}

function sqlite(store: unknown): SqliteTaskStore {
  assert.ok(store instanceof SqliteTaskStore, "this test needs a SqliteTaskStore");
  return store;
}

const ids = (tasks: { id: string }[]) => tasks.map((t) => t.id);
