import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { launchTask, startStack, call, toolOutputs, waitUntil, pluginDbPath, type Stack } from "../harness/plugin-stack.ts";
import { openSqlite, type SqliteDatabase } from "../../src/store/sqlite-driver.ts";

/**
 * The plugin's database locked by another process for longer than its busy timeout (5 s): every
 * write inside OpenCode fails with SQLITE_BUSY. Nothing may escape into OpenCode, the tools keep
 * answering and say the store is failing, and once the lock is gone the poll finishes the work.
 */
describe("a locked database on the real host", () => {
  let stack: Stack;
  let locker: SqliteDatabase | undefined;
  before(async () => {
    stack = await startStack({ pluginOptions: { pollIntervalMs: 1000 } });
  });
  after(async () => {
    locker?.close();
    await stack?.stop();
  });

  it("writes fail while another process holds the lock; background_list says so, and the result arrives once after it is released", async () => {
    const parent = await stack.newSession("parent: locked store");
    const id = await launchTask(stack, parent, { description: "finishes under a lock", prompt: "SLOW 1000\nREPLY result written later" });
    const from = stack.server.logs().length;
    locker = openSqlite(pluginDbPath(stack.server));
    locker.exec("BEGIN EXCLUSIVE");
    // The child answers; the plugin's settle waits out the busy timeout and fails.
    await waitUntil(() => /database is locked/.test(stack.server.logs().slice(from)), { timeoutMs: 30_000, what: "a write failing on the lock" });
    await stack.say(parent, call("background_list", {}));
    const [listed] = (await toolOutputs(stack, parent, "background_list")).slice(-1);
    assert.match(listed, /^The task store is failing: database is locked; results may be stale\.\n/);
    assert.match(listed, new RegExp(`^${id} `, "m"), "the list still answers from what it can read");
    locker.exec("ROLLBACK");
    locker.close();
    locker = undefined;

    const note = await waitUntil(async () => (await stack.notifications(parent)).find((n) => n.includes(`task_id="${id}"`)), { timeoutMs: 30_000, what: "the notification once the lock is gone" });
    assert.match(note, /status="completed"/);
    assert.match(note, /result written later/);
    await waitUntil(async () => (await stack.server.client.session.status()).data?.[parent] === undefined, { timeoutMs: 30_000, what: "parent idle" });
    assert.equal((await stack.notifications(parent)).filter((n) => n.includes(`task_id="${id}"`)).length, 1);
    await stack.say(parent, call("background_list", {}));
    assert.doesNotMatch((await toolOutputs(stack, parent, "background_list")).at(-1)!, /store is failing/);
    assert.doesNotMatch(stack.server.logs().slice(from), /unhandled|uncaught/i);
  });
});
