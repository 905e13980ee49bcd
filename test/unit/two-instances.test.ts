import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FakeClock, flush } from "../helpers/fake-clock.ts";
import { FakeHost } from "../helpers/fake-host.ts";
import { PARENT, MODEL } from "../helpers/core-fixture.ts";
import { TaskManager, WHOLE_PROJECT } from "../../src/core/task-manager.ts";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import { DEFAULT_OPTIONS } from "../../src/options/options.ts";

/** Two plugin instances on one database (re-instantiation, or two OpenCode processes), hearing the same events. */
describe("two instances on one database", () => {
  const dir = mkdtempSync(join(tmpdir(), "ocbt-two-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  function twoInstances(name: string) {
    const clock = new FakeClock();
    const host = new FakeHost(clock);
    host.addSession(PARENT, "busy");
    const path = join(dir, `${name}.db`);
    const stores = [SqliteTaskStore.open({ path, projectId: "p" }), SqliteTaskStore.open({ path, projectId: "p" })];
    const managers = [new TaskManager(host, stores[0], clock, DEFAULT_OPTIONS)];
    host.onEvent((event) => managers.forEach((m) => m.handleEvent(event)));
    /** Launches on the first instance, then starts the second one, which picks the task up from the database. */
    const launch = async () => {
      const task = await managers[0].launch({
        parentSessionID: PARENT, parentMessageID: "msg_1", parentAgent: "build", parentModel: MODEL, description: "d", prompt: "p", agent: "general",
      });
      managers.push(new TaskManager(host, stores[1], clock, DEFAULT_OPTIONS));
      return task;
    };
    return { clock, host, stores, managers, launch };
  }

  it("a task launched by one is known to the other, settled once and notified once", async () => {
    const t = twoInstances("settle");
    const task = await t.launch();
    assert.equal(t.managers[1].lookup(task.id, WHOLE_PROJECT).kind, "tasks");
    t.host.setActivity(PARENT, "idle");
    t.host.finishRun(task.id, "only once");
    await flush();
    await t.clock.advance(5000);
    assert.equal(t.host.promptsTo(PARENT).length, 1);
    assert.equal(t.stores[1].events(task.id).filter((e) => e.kind === "status:completed").length, 1);
    assert.equal(t.stores[1].events(task.id).filter((e) => e.kind === "notified").length, 1);
  });

  it("a second instance starting up does not tell a running child to continue twice", async () => {
    const t = twoInstances("recover");
    const task = await t.launch();
    t.host.sessions.get(task.id)!.activity = "idle";
    await t.clock.advance(10_000);
    t.managers[0].dispose(); // the instance that drove it stopped: its claim is free
    const restarted = [0, 1].map(() => new TaskManager(t.host, SqliteTaskStore.open({ path: join(dir, "recover.db"), projectId: "p" }), t.clock, DEFAULT_OPTIONS));
    await Promise.all(restarted.map((m) => m.start()));
    const continues = t.host.promptsTo(task.id).filter((p) => p.text.includes("Continue where you left off"));
    assert.equal(continues.length, 1);
    restarted.forEach((m) => m.dispose());
  });
});
