import assert from "node:assert/strict";
import { transition } from "../../src/core/task.ts";
import { summaryOf } from "../../src/core/task-summary.ts";
import { defineDurableStoreTests } from "./durable-store-tests.ts";
import { defineSharedFileTests } from "./shared-file-tests.ts";
import { inWorkspace, type MakeStore, type TestApi } from "./suite-support.ts";
import { fullTask, notification, runningTask, withoutUndefined } from "./task-fixtures.ts";

export type { MakeStore, StoreLocation, TestApi } from "./suite-support.ts";

/**
 * The TaskStore contract, run against every implementation. `durable` adds what only a store
 * backed by a file can promise: reopening, sharing a file between projects and processes,
 * migrations, and refusing corrupt or foreign files without touching them.
 */
export function defineTaskStoreSuite(
  name: string,
  makeStore: MakeStore,
  { describe, it, durable = false }: TestApi & { durable?: boolean },
): void {
  const test = (title: string, fn: Parameters<typeof inWorkspace>[1]) => it(title, () => inWorkspace(makeStore, fn));

  describe(`TaskStore contract: ${name}`, () => {
    test("returns every field of a saved task unchanged", ({ open }) => {
      const store = open();
      store.save(fullTask());
      assert.deepEqual(store.get("ses_full"), fullTask());
    });

    test("leaves unset optional fields out rather than null", ({ open }) => {
      const store = open();
      store.save(runningTask("ses_a"));
      const task = store.get("ses_a");
      assert.deepEqual(task, runningTask("ses_a"));
      for (const key of ["parentModel", "result", "error", "settledAt", "retrievedAt", "clearedAt"]) {
        assert.equal(key in task!, false, `${key} should be absent`);
      }
    });

    test("save replaces the whole task (upsert)", ({ open }) => {
      const store = open();
      store.save(fullTask());
      const resumed = fullTask();
      transition(resumed, "resumed", 2_000);
      store.save(resumed);
      // Whether a cleared field comes back as an undefined key or no key is not part of the contract.
      assert.deepEqual(withoutUndefined(store.get("ses_full")!), withoutUndefined(resumed));
      assert.equal(store.get("ses_full")!.result, undefined);
      assert.equal(store.list({ includeCleared: true }).length, 1);
    });

    test("get of an unknown id is undefined", ({ open }) => {
      assert.equal(open().get("ses_nope"), undefined);
    });

    test("get and list return copies, and save keeps a copy", ({ open }) => {
      const store = open();
      store.list(); // a store that caches its list must copy into the cache as well
      const original = runningTask("ses_a", { progress: { toolCalls: 1, lastTools: ["read"], lastActivityAt: 5 } });
      store.save(original);
      original.progress.lastTools.push("changed after save");
      for (const task of [store.get("ses_a")!, store.list()[0]!]) {
        task.status = "error";
        task.model.modelID = "mutated";
        task.progress.lastTools.push("mutated");
      }
      const stored = store.get("ses_a")!;
      assert.equal(stored.status, "running");
      assert.equal(stored.model.modelID, "claude-sonnet");
      assert.deepEqual(stored.progress.lastTools, ["read"]);
      assert.deepEqual(store.list()[0], summaryOf(stored));
    });

    test("list returns summaries: the prompt, result and error are read with get", ({ open }) => {
      const store = open();
      store.list(); // a store that caches its list must leave them out of the cache as well
      store.save(fullTask({ clearedAt: undefined }));
      const [listed] = store.list();
      for (const key of ["prompt", "result", "error"]) assert.equal(key in listed!, false, `${key} should be absent`);
      assert.deepEqual(withoutUndefined(listed!), summaryOf(withoutUndefined(fullTask({ clearedAt: undefined }))));
      assert.equal(store.get("ses_full")!.result, fullTask().result);
    });

    test("list filters by parent session", ({ open }) => {
      const store = open();
      store.save(runningTask("ses_a", { parentSessionID: "ses_p1" }));
      store.save(runningTask("ses_b", { parentSessionID: "ses_p2" }));
      store.save(runningTask("ses_c", { parentSessionID: "ses_p1" }));
      assert.deepEqual(ids(store.list({ parentSessionID: "ses_p1" })), ["ses_a", "ses_c"]);
      assert.deepEqual(ids(store.list({ parentSessionID: "ses_none" })), []);
      assert.deepEqual(ids(store.list()), ["ses_a", "ses_b", "ses_c"]);
    });

    test("list filters by statuses; an empty status list matches nothing", ({ open }) => {
      const store = open();
      store.save(runningTask("ses_run"));
      store.save(runningTask("ses_done", { status: "completed", settledAt: 2_000 }));
      store.save(runningTask("ses_err", { status: "error", settledAt: 2_000 }));
      assert.deepEqual(ids(store.list({ statuses: ["completed", "error"] })), ["ses_done", "ses_err"]);
      assert.deepEqual(ids(store.list({ statuses: ["running"] })), ["ses_run"]);
      assert.deepEqual(ids(store.list({ statuses: [] })), []);
    });

    test("list hides cleared tasks unless asked, and combines filters", ({ open }) => {
      const store = open();
      store.save(runningTask("ses_a", { status: "completed", clearedAt: 3_000 }));
      store.save(runningTask("ses_b", { status: "completed" }));
      store.save(runningTask("ses_c", { status: "completed", parentSessionID: "ses_other" }));
      assert.deepEqual(ids(store.list()), ["ses_b", "ses_c"]);
      assert.deepEqual(ids(store.list({ includeCleared: true })), ["ses_a", "ses_b", "ses_c"]);
      const combined = store.list({ includeCleared: true, statuses: ["completed"], parentSessionID: "ses_parent" });
      assert.deepEqual(ids(combined), ["ses_a", "ses_b"]);
    });

    test("list orders by createdAt, ties by first save, and a re-save does not move a task", ({ open }) => {
      const store = open();
      store.save(runningTask("ses_late", { createdAt: 3_000 }));
      store.save(runningTask("ses_tie2", { createdAt: 2_000 }));
      store.save(runningTask("ses_early", { createdAt: 1_000 }));
      store.save(runningTask("ses_tie1", { createdAt: 2_000 }));
      assert.deepEqual(ids(store.list()), ["ses_early", "ses_tie2", "ses_tie1", "ses_late"]);
      store.save(runningTask("ses_tie2", { createdAt: 2_000, description: "saved again" }));
      assert.deepEqual(ids(store.list()), ["ses_early", "ses_tie2", "ses_tie1", "ses_late"]);
    });

    test("list reflects saves and removes made after an earlier list", ({ open }) => {
      const store = open();
      store.save(runningTask("ses_a"));
      assert.deepEqual(ids(store.list()), ["ses_a"]);
      store.save(runningTask("ses_b", { createdAt: 500 }));
      store.save(runningTask("ses_a", { status: "completed" }));
      store.remove("ses_b");
      store.save(runningTask("ses_c", { createdAt: 2_000 }));
      assert.deepEqual(
        store.list().map((t) => [t.id, t.status]),
        [
          ["ses_a", "completed"],
          ["ses_c", "running"],
        ],
      );
    });

    test("remove deletes the task; removing an unknown id is harmless", ({ open }) => {
      const store = open();
      store.save(runningTask("ses_a"));
      store.save(runningTask("ses_b"));
      store.remove("ses_a");
      store.remove("ses_nope");
      assert.equal(store.get("ses_a"), undefined);
      assert.deepEqual(ids(store.list()), ["ses_b"]);
    });

    test("remove takes the task's events and notifications along, and no other task's", ({ open }) => {
      const store = open();
      for (const id of ["ses_a", "ses_b"]) {
        store.save(runningTask(id));
        store.appendEvent({ taskId: id, at: 1, kind: "launched" });
        store.enqueueNotification(notification(`n_${id}_done`, { taskId: id }));
        store.enqueueNotification(notification(`n_${id}_waiting`, { taskId: id, createdAt: 2_000 }));
        store.markDelivered(`n_${id}_done`, 2);
      }
      store.remove("ses_a");
      assert.deepEqual(store.events("ses_a"), []);
      assert.equal(store.events("ses_b").length, 1);
      assert.deepEqual(nids(store.pendingNotifications()), ["n_ses_b_waiting"]);
    });

    test("events are kept per task in the order appended, detail optional", ({ open }) => {
      const store = open();
      store.appendEvent({ taskId: "ses_a", at: 200, kind: "launched", detail: "general" });
      store.appendEvent({ taskId: "ses_b", at: 150, kind: "launched" });
      store.appendEvent({ taskId: "ses_a", at: 100, kind: "status:completed" });
      store.appendEvent({ taskId: "ses_a", at: 300, kind: "notified", detail: "wake" });
      assert.deepEqual(store.events("ses_a"), [
        { taskId: "ses_a", at: 200, kind: "launched", detail: "general" },
        { taskId: "ses_a", at: 100, kind: "status:completed" },
        { taskId: "ses_a", at: 300, kind: "notified", detail: "wake" },
      ]);
      assert.deepEqual(store.events("ses_b"), [{ taskId: "ses_b", at: 150, kind: "launched" }]);
      assert.deepEqual(store.events("ses_none"), []);
    });

    test("events are returned as copies", ({ open }) => {
      const store = open();
      store.appendEvent({ taskId: "ses_a", at: 1, kind: "launched" });
      store.events("ses_a")[0]!.kind = "mutated";
      assert.equal(store.events("ses_a")[0]!.kind, "launched");
    });

    test("outbox: pending in creation order, by parent, until delivered", ({ open }) => {
      const store = open();
      store.enqueueNotification(notification("n2", { createdAt: 2_000, wake: true }));
      store.enqueueNotification(notification("n1", { createdAt: 1_000 }));
      store.enqueueNotification(notification("n3", { createdAt: 3_000, parentSessionID: "ses_other" }));
      assert.deepEqual(store.pendingNotifications(), [
        notification("n1", { createdAt: 1_000 }),
        notification("n2", { createdAt: 2_000, wake: true }),
        notification("n3", { createdAt: 3_000, parentSessionID: "ses_other" }),
      ]);
      assert.deepEqual(nids(store.pendingNotifications("ses_parent")), ["n1", "n2"]);
      store.markDelivered("n1", 4_000);
      store.markDelivered("n_unknown", 4_000);
      assert.deepEqual(nids(store.pendingNotifications()), ["n2", "n3"]);
      store.pendingNotifications()[0]!.text = "mutated";
      assert.equal(store.pendingNotifications()[0]!.text, "notification n2");
    });

    test("outbox: a claimed notification stays pending until confirmed; a release keeps the claim count", ({ open }) => {
      const store = open();
      store.enqueueNotification(notification("n1"));
      store.claimNotification("n1", "host:1:a", 2_000);
      store.enqueueNotification(notification("n1", { text: "queued again" }));
      assert.deepEqual(store.pendingNotifications(), [
        notification("n1", { text: "queued again", claim: { by: "host:1:a", at: 2_000 }, claims: 1 }),
      ]);
      store.releaseClaim("n1");
      assert.deepEqual(store.pendingNotifications(), [notification("n1", { text: "queued again", claims: 1 })]);
      store.claimNotification("n1", "host:2:b", 3_000);
      assert.deepEqual(store.pendingNotifications()[0]!.claims, 2);
      store.markDelivered("n1", 4_000);
      store.claimNotification("n1", "host:2:b", 5_000);
      store.claimNotification("n_unknown", "host:2:b", 5_000);
      assert.deepEqual(store.pendingNotifications(), []);
    });

    test("projects sharing one database see only their own tasks, events and notifications", ({ open }) => {
      const a = open("project-a");
      const b = open("project-b");
      a.save(runningTask("ses_same", { description: "from a" }));
      b.save(runningTask("ses_same", { description: "from b" }));
      b.save(runningTask("ses_only_b"));
      a.appendEvent({ taskId: "ses_same", at: 1, kind: "launched", detail: "a" });
      a.enqueueNotification(notification("n1", { text: "for a" }));
      b.enqueueNotification(notification("n1", { text: "for b" }));
      assert.deepEqual(ids(a.list()), ["ses_same"]);
      assert.equal(a.get("ses_same")!.description, "from a");
      assert.equal(a.get("ses_only_b"), undefined);
      assert.deepEqual(b.events("ses_same"), []);
      a.markDelivered("n1", 5);
      b.remove("ses_same");
      assert.equal(a.get("ses_same")!.description, "from a");
      assert.deepEqual(a.pendingNotifications(), []);
      assert.deepEqual(
        b.pendingNotifications().map((n) => n.text),
        ["for b"],
      );
    });

    if (durable) defineDurableStoreTests(makeStore, { describe, it });
    if (durable) defineSharedFileTests(makeStore, { describe, it });
  });
}

const ids = (tasks: { id: string }[]) => tasks.map((t) => t.id);
const nids = (notifications: { id: string }[]) => notifications.map((n) => n.id);
