import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { appliedVersions, migrate, MIGRATIONS } from "../../src/store/migrations.ts";
import { openSqlite } from "../../src/store/sqlite-driver.ts";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import { StoreUnavailableError } from "../../src/store/store-unavailable-error.ts";
import { inWorkspace, type MakeStore, type TestApi } from "./suite-support.ts";
import { fullTask, notification, runningTask } from "./task-fixtures.ts";

/** What a file-backed store promises beyond the contract. */
export function defineDurableStoreTests(makeStore: MakeStore, { describe, it }: TestApi): void {
  const test = (title: string, fn: Parameters<typeof inWorkspace>[1]) => it(title, () => inWorkspace(makeStore, fn));

  describe("durable", () => {
    test("a reopened store has every task, event and notification", ({ open }) => {
      const first = open();
      first.save(fullTask());
      first.save(runningTask("ses_a", { createdAt: 5 }));
      first.appendEvent({ taskId: "ses_a", at: 1, kind: "launched" });
      first.enqueueNotification(notification("n1"));
      first.enqueueNotification(notification("n2", { createdAt: 2_000 }));
      first.markDelivered("n1", 3_000);
      first.close();
      const second = open();
      assert.deepEqual(second.get("ses_full"), fullTask());
      assert.deepEqual(
        second.list({ includeCleared: true }).map((t) => t.id),
        ["ses_a", "ses_full"],
      );
      assert.deepEqual(second.events("ses_a"), [{ taskId: "ses_a", at: 1, kind: "launched" }]);
      assert.deepEqual(second.pendingNotifications(), [notification("n2", { createdAt: 2_000 })]);
    });

    test("a claim is seen by a second connection and survives reopening", ({ open }) => {
      const first = open("project-a");
      const second = open("project-a");
      first.enqueueNotification(notification("n1"));
      first.claimNotification("n1", "host:1:a", 2_000);
      assert.deepEqual(second.pendingNotifications(), [notification("n1", { claim: { by: "host:1:a", at: 2_000 }, claims: 1 })]);
      first.close();
      second.releaseClaim("n1");
      assert.deepEqual(open("project-a").pendingNotifications(), [notification("n1", { claims: 1 })]);
    });

    test("a delivered notification stays delivered when enqueued again", ({ open }) => {
      const store = open();
      store.enqueueNotification(notification("n1"));
      store.markDelivered("n1", 2_000);
      store.enqueueNotification(notification("n1"));
      assert.deepEqual(store.pendingNotifications(), []);
    });

    test("a second store of the same project sees the first one's writes", ({ open }) => {
      const a = open("project-a");
      const b = open("project-a");
      a.save(runningTask("ses_a"));
      a.save(runningTask("ses_gone"));
      assert.deepEqual(ids(b.list()), ["ses_a", "ses_gone"]);
      a.save(runningTask("ses_a", { status: "completed", settledAt: 9 }));
      a.remove("ses_gone");
      a.save(runningTask("ses_new", { createdAt: 2_000 }));
      assert.deepEqual(
        b.list().map((t) => [t.id, t.status]),
        [
          ["ses_a", "completed"],
          ["ses_new", "running"],
        ],
      );
    });

    test("a rolled-back transaction leaves nothing behind, in the list either", ({ open }) => {
      const store = sqlite(open());
      store.save(runningTask("ses_kept"));
      assert.deepEqual(ids(store.list()), ["ses_kept"]);
      assert.throws(() =>
        store.transaction(() => {
          store.save(runningTask("ses_rolled_back"));
          throw new Error("boom");
        }),
      );
      assert.equal(store.get("ses_rolled_back"), undefined);
      assert.deepEqual(ids(store.list()), ["ses_kept"]);
    });

    test("migrations run once: opening again applies nothing and keeps the data", ({ open, file }) => {
      open().save(runningTask("ses_a"));
      open().save(runningTask("ses_b"));
      const db = openSqlite(file);
      try {
        assert.deepEqual(migrate(db), []);
        assert.deepEqual(
          appliedVersions(db),
          MIGRATIONS.map((m) => m.version),
        );
      } finally {
        db.close();
      }
      assert.deepEqual(ids(open().list()), ["ses_a", "ses_b"]);
    });

    test("a corrupt file gives StoreUnavailableError and is left byte-identical", ({ dir }) => {
      const file = join(dir, "corrupt.db");
      const bytes = randomBytes(64 * 1024);
      writeFileSync(file, bytes);
      const error = captureOpenError(makeStore, file);
      assert.equal(error.path, file);
      assert.equal(error.reason, "corrupt");
      assert.match(error.message, /corrupt\.db/);
      assert.match(error.message, /Move it aside/);
      assert.match(error.message, /dbPath/);
      assert.ok(readFileSync(file).equals(bytes), "the file must not change");
    });

    test("another program's SQLite database is refused and left unchanged", ({ dir }) => {
      const file = join(dir, "notes.db");
      const foreign = openSqlite(file);
      foreign.exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep me')");
      foreign.close();
      const before = readFileSync(file);
      const error = captureOpenError(makeStore, file);
      assert.equal(error.reason, "foreign");
      assert.ok(readFileSync(file).equals(before), "the file must not change");
    });

    test("a folder that cannot be created gives StoreUnavailableError", ({ dir }) => {
      const blocker = join(dir, "not-a-folder");
      writeFileSync(blocker, "a file where a folder should be");
      const error = captureOpenError(makeStore, join(blocker, "tasks.db"));
      assert.equal(error.reason, "permission");
      assert.match(error.message, /not-a-folder/);
    });

    test("purgeOlderThan removes old settled tasks with their events and delivered notifications", ({ open }) => {
      const store = sqlite(open());
      store.save(runningTask("ses_old", { status: "completed", settledAt: 100 }));
      store.save(runningTask("ses_recent", { status: "completed", settledAt: 900 }));
      // A settledAt left on a task that is running again must not get it purged.
      store.save(runningTask("ses_running", { status: "resumed", settledAt: 100 }));
      for (const taskId of ["ses_old", "ses_recent"]) store.appendEvent({ taskId, at: 1, kind: "launched" });
      store.enqueueNotification(notification("n_done", { taskId: "ses_old" }));
      store.enqueueNotification(notification("n_waiting", { taskId: "ses_old", createdAt: 2_000 }));
      store.markDelivered("n_done", 150);
      assert.deepEqual(ids(store.list()), ["ses_old", "ses_recent", "ses_running"]);
      assert.equal(store.purgeOlderThan(500), 1);
      assert.deepEqual(ids(store.list()), ["ses_recent", "ses_running"]);
      assert.deepEqual(store.events("ses_old"), []);
      assert.equal(store.events("ses_recent").length, 1);
      assert.deepEqual(nids(store.pendingNotifications()), ["n_waiting"]);
      assert.equal(store.purgeOlderThan(500), 0);
    });

    test("purgeOlderThan leaves other projects alone", ({ open }) => {
      const a = sqlite(open("project-a"));
      const b = open("project-b");
      a.save(runningTask("ses_same", { status: "completed", settledAt: 1 }));
      b.save(runningTask("ses_same", { status: "completed", settledAt: 1 }));
      b.appendEvent({ taskId: "ses_same", at: 1, kind: "launched" });
      assert.equal(a.purgeOlderThan(1_000), 1);
      assert.deepEqual(ids(b.list()), ["ses_same"]);
      assert.equal(b.events("ses_same").length, 1);
    });
  });
}

function captureOpenError(makeStore: MakeStore, file: string): StoreUnavailableError {
  try {
    makeStore({ file, projectId: "project-a" }).close();
  } catch (error) {
    assert.ok(error instanceof StoreUnavailableError, `expected StoreUnavailableError, got ${String(error)}`);
    return error;
  }
  assert.fail("opening should have failed");
}

function sqlite(store: unknown): SqliteTaskStore {
  assert.ok(store instanceof SqliteTaskStore, "this test needs a SqliteTaskStore");
  return store;
}

const ids = (tasks: { id: string }[]) => tasks.map((t) => t.id);
const nids = (notifications: { id: string }[]) => notifications.map((n) => n.id);
