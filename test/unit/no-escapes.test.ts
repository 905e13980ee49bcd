import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { coreFixture, PARENT } from "../helpers/core-fixture.ts";
import { MemoryTaskStore } from "../../src/core/memory-task-store.ts";
import { TaskManager, STORE_RETRY_MS } from "../../src/core/task-manager.ts";
import { DEFAULT_OPTIONS } from "../../src/options/options.ts";
import type { TaskStore } from "../../src/core/task-store.ts";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import { openSqlite } from "../../src/store/sqlite-driver.ts";
import { errandsPlugin } from "../../src/plugin.ts";

const BUSY = "SQLITE_BUSY: database is locked";
const WRITES = new Set(["save", "remove", "appendEvent", "enqueueNotification", "markDelivered", "claimNotification", "releaseClaim", "transaction"]);

/** A store that throws on command: every method, or only the writes (a full disk). */
function flakyStore() {
  const control = { failing: false as false | "all" | "writes" };
  const store = new Proxy(new MemoryTaskStore(), {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (control.failing === "all" || (control.failing === "writes" && WRITES.has(String(property)))) throw new Error(BUSY);
        return value.apply(target, args);
      };
    },
  }) as TaskStore;
  return { store, control };
}

describe("nothing escapes into the host", () => {
  const escaped: unknown[] = [];
  const onEscape = (error: unknown) => escaped.push(error);
  before(() => {
    process.on("unhandledRejection", onEscape);
    process.on("uncaughtException", onEscape);
  });
  after(() => {
    process.off("unhandledRejection", onEscape);
    process.off("uncaughtException", onEscape);
  });

  it("a store failing in every background path is logged, retried by the poll, and the tools keep answering", async () => {
    const { store, control } = flakyStore();
    const f = coreFixture({ pollIntervalMs: 1000 }, store);
    const held = await f.launch({ description: "held" });
    const missed = await f.launch({ description: "missed" });
    f.host.finishRun(held, "held result"); // the parent is busy: its notification waits in the outbox
    await f.flush();
    assert.equal(f.store.pendingNotifications().length, 1);

    control.failing = "all";
    f.host.finishRun(missed, "missed result"); // settle from an event
    f.host.emit({ type: "tool", sessionID: missed, callID: "c1", tool: "read" });
    f.host.emit({ type: "deleted", sessionID: "ses_unknown" });
    f.host.setActivity(PARENT, "idle"); // the notifier's delivery
    await f.clock.advance(3000); // polls
    const restarted = new TaskManager(f.host, store, f.clock, { ...DEFAULT_OPTIONS, pollIntervalMs: 1000 });
    await restarted.start(); // recovery
    restarted.dispose();
    assert.match(await f.call("background_list", {}), /^background_list failed: SQLITE_BUSY/);
    assert.match(await f.call("background_task", { description: "d", prompt: "p", agent: "general" }), /^background_task failed: SQLITE_BUSY/);
    await f.flush();
    assert.deepEqual(escaped, []);
    assert.ok(f.host.logs.filter((l) => l.level === "error" && /SQLITE_BUSY|poll|notify|check/i.test(l.message)).length >= 3, JSON.stringify(f.host.logs));

    control.failing = false;
    assert.equal(f.store.get(missed)!.status, "running");
    await f.clock.advance(STORE_RETRY_MS); // the next poll after the pause settles what the failed event could not
    assert.equal(f.store.get(missed)!.status, "completed");
    f.host.setActivity(PARENT, "idle");
    await f.flush();
    const notes = f.host.promptsTo(PARENT).map((p) => p.text).join("\n");
    assert.match(notes, /held result/);
    assert.match(notes, /missed result/);
    assert.deepEqual(escaped, []);
  });

  it("background_list says the store is failing while writes fail, and stops saying it once a write succeeds", async () => {
    const { store, control } = flakyStore();
    const f = coreFixture({ pollIntervalMs: 1000 }, store);
    const id = await f.launch({ description: "job" });
    control.failing = "writes";
    f.host.finishRun(id, "done");
    await f.flush();
    const failing = await f.call("background_list", {});
    assert.match(failing, /^The task store is failing: SQLITE_BUSY: database is locked; results may be stale\.\n/);
    assert.match(failing, /job/);
    control.failing = false;
    await f.clock.advance(1000);
    assert.equal(f.store.get(id)!.status, "running", "the poll leaves a failing store alone for a while");
    await f.clock.advance(STORE_RETRY_MS);
    assert.equal(f.store.get(id)!.status, "completed");
    assert.doesNotMatch(await f.call("background_list", {}), /failing/);
    assert.deepEqual(escaped, []);
  });

  it("dispose stops every timer: the poll and blocked waits", async () => {
    const f = coreFixture({ pollIntervalMs: 1000 });
    const id = await f.launch();
    const blocked = f.call("background_output", { task_id: id, block: true, timeout: 60 });
    await f.flush();
    assert.equal(f.clock.pendingTimers(), 2);
    f.manager.dispose();
    assert.equal(f.clock.pendingTimers(), 0);
    assert.match(await blocked, /Stopped waiting/);
    f.host.finishRun(id, "late");
    await f.clock.advance(5000);
    assert.equal(f.clock.pendingTimers(), 0);
    assert.equal(f.store.get(id)!.status, "running", "a disposed manager hears no more events");
  });
});

describe("plugin start", () => {
  const dir = mkdtempSync(join(tmpdir(), "ocbt-start-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("never throws on a damaged database: the purge fails, is logged, and the tools still answer", async () => {
    const path = join(dir, "damaged.db");
    SqliteTaskStore.open({ path, projectId: "p" }).close();
    const raw = openSqlite(path);
    raw.exec("DROP TABLE task_events");
    raw.close();
    const logs: string[] = [];
    const client = {
      app: { log: async ({ body }: { body: { message: string } }) => void logs.push(body.message) },
    };
    const hooks = await errandsPlugin({ client, directory: dir, project: { id: "p" } } as never, { dbPath: path });
    assert.ok(logs.some((m) => /Removing old background tasks failed/.test(m)), logs.join("\n"));
    const list = await hooks.tool!.background_list.execute({} as never, { sessionID: PARENT, messageID: "m", agent: "build", abort: new AbortController().signal } as never);
    assert.equal(list, "No background tasks found.");
    await hooks.dispose?.();
  });
});
