import { test } from "node:test";
import assert from "node:assert/strict";
import { TaskCache } from "../../src/store/task-cache.ts";
import { runningTask } from "../store/task-fixtures.ts";

const ids = (tasks: { id: string }[]) => tasks.map((t) => t.id);

test("the unsettled and per-parent lists follow status changes, deletes and retainOnly", () => {
  const cache = new TaskCache([runningTask("ses_a", { parentSessionID: "ses_p1" }), runningTask("ses_b", { parentSessionID: "ses_p2" })]);
  cache.put(runningTask("ses_c", { parentSessionID: "ses_p1", status: "queued" }));
  assert.deepEqual(ids(cache.list({ statuses: ["queued", "running", "resumed"], includeCleared: true })), ["ses_a", "ses_b", "ses_c"]);
  cache.put(runningTask("ses_a", { parentSessionID: "ses_p1", status: "completed", settledAt: 5 }));
  assert.deepEqual(ids(cache.list({ statuses: ["queued", "running"], includeCleared: true })), ["ses_b", "ses_c"]);
  assert.deepEqual(ids(cache.list({ statuses: ["completed"] })), ["ses_a"]);
  assert.deepEqual(ids(cache.list({ parentSessionID: "ses_p1" })), ["ses_a", "ses_c"]);
  cache.put(runningTask("ses_a", { parentSessionID: "ses_p1", status: "resumed" }));
  assert.deepEqual(ids(cache.list({ statuses: ["resumed"], parentSessionID: "ses_p1", includeCleared: true })), ["ses_a"]);
  cache.delete("ses_c");
  assert.deepEqual(ids(cache.list({ parentSessionID: "ses_p1" })), ["ses_a"]);
  cache.retainOnly(new Set(["ses_b"]));
  assert.deepEqual(ids(cache.list({ statuses: ["running", "resumed"], includeCleared: true })), ["ses_b"]);
  assert.deepEqual(ids(cache.list({ parentSessionID: "ses_p1" })), []);
  assert.deepEqual(ids(cache.list({})), ["ses_b"]);
});

test("ties on createdAt keep the first insertion's order, through updates and every index", () => {
  const cache = new TaskCache([]);
  for (const id of ["ses_x", "ses_y", "ses_z"]) cache.put(runningTask(id, { createdAt: 7 }));
  cache.put(runningTask("ses_x", { createdAt: 7, description: "updated" }));
  for (const filter of [{}, { parentSessionID: "ses_parent" }, { statuses: ["running" as const] }]) {
    assert.deepEqual(ids(cache.list(filter)), ["ses_x", "ses_y", "ses_z"], JSON.stringify(filter));
  }
});
