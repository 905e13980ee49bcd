import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FakeClock, flush } from "../helpers/fake-clock.ts";
import { FakeHost } from "../helpers/fake-host.ts";
import { PARENT, MODEL } from "../helpers/core-fixture.ts";
import { TaskManager } from "../../src/core/task-manager.ts";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import { DEFAULT_OPTIONS } from "../../src/options/options.ts";
import { CONTINUE_PROMPT } from "../../src/core/recovery.ts";
import { newClaimer, retireClaimer } from "../../src/core/claims.ts";
import type { Host, HostEvent } from "../../src/host/host.ts";

const LEASE_MS = 3_000;

/**
 * One OpenCode process's view of the shared sessions: OpenCode's session status is per process,
 * so a child another process drives is idle here, and its events are heard only where it runs.
 */
function processView(shared: FakeHost, drivenHere: Set<string>): Host {
  return new Proxy(shared, {
    get(target, property, receiver) {
      if (property === "statuses") {
        return async () => Object.fromEntries(Object.entries(await target.statuses()).filter(([id]) => drivenHere.has(id) || id === PARENT));
      }
      if (property === "prompt") {
        return async (input: Parameters<Host["prompt"]>[0]) => {
          drivenHere.add(input.sessionID);
          return target.prompt(input);
        };
      }
      return Reflect.get(target, property, receiver);
    },
  });
}

describe("task ownership: several processes on one database", () => {
  const dir = mkdtempSync(join(tmpdir(), "ocbt-owner-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;

  function twoProcesses() {
    const clock = new FakeClock();
    const shared = new FakeHost(clock);
    shared.addSession(PARENT, "busy");
    const path = join(dir, `owner-${++n}.db`);
    const driven = { a: new Set<string>(), b: new Set<string>() };
    const claimers = { a: newClaimer(), b: newClaimer() };
    const open = (who: "a" | "b") => new TaskManager(processView(shared, driven[who]), SqliteTaskStore.open({ path, projectId: "p" }), clock, DEFAULT_OPTIONS,
      { claimer: claimers[who], taskLeaseMs: LEASE_MS });
    const managers = { a: open("a"), b: open("b") };
    // Events go to the process where the child runs (and the parent's to both).
    shared.onEvent((event: HostEvent) => {
      if (event.sessionID === PARENT || driven.a.has(event.sessionID)) managers.a.handleEvent(event);
      if (event.sessionID === PARENT || driven.b.has(event.sessionID)) managers.b.handleEvent(event);
    });
    const launchInA = async () => {
      await managers.a.start();
      return managers.a.launch({ parentSessionID: PARENT, parentMessageID: "msg_1", parentAgent: "build", parentModel: MODEL, description: "d", prompt: "p", agent: "general" });
    };
    const continues = (id: string) => shared.promptsTo(id).filter((p) => p.text === CONTINUE_PROMPT);
    return { clock, shared, driven, claimers, managers, open, launchInA, continues };
  }

  it("a process starting up leaves a child another live process drives alone: no continue, no settle from its own idle view", async () => {
    const t = twoProcesses();
    const task = await t.launchInA();
    await t.clock.advance(10_000); // A's child streams on; to B it looks idle
    await t.managers.b.start();
    await t.clock.advance(LEASE_MS * 3); // B's sweeps and polls while A renews
    assert.deepEqual(t.continues(task.id), [], "B told A's child nothing");
    assert.equal(t.managers.b.get(task.id)!.status, "running");
    t.shared.setActivity(PARENT, "idle");
    t.shared.finishRun(task.id, "the real result");
    await flush();
    await t.clock.advance(5_000);
    const settled = t.managers.a.get(task.id)!;
    assert.equal(settled.status, "completed");
    assert.equal(settled.result, "the real result");
    assert.equal(t.shared.promptsTo(PARENT).length, 1, "the parent is told once");
    t.managers.a.dispose();
    t.managers.b.dispose();
  });

  it("a holder that dies has its running child taken over by a live process within one lease, settled once", async () => {
    const t = twoProcesses();
    await t.managers.b.start(); // B runs already: it is not restarted
    const task = await t.launchInA();
    await t.clock.advance(10_000); // past the first few seconds, when a prompt not yet answered is no interruption
    // A is killed: its timers stop, its claim stays in the row; this pid with A's nonce is a gone process.
    t.managers.a.dispose = () => undefined;
    (t.managers.a as unknown as { sweep: { stop(): void } }).sweep.stop();
    (t.managers.a as unknown as { poller: { stop(): void } }).poller.stop();
    t.shared.sessions.get(task.id)!.activity = "idle"; // its run died with A
    t.driven.a.delete(task.id);
    retireClaimer(t.claimers.a);
    await t.clock.advance(LEASE_MS);
    assert.equal(t.continues(task.id).length, 1, "B told the child to continue, once");
    t.shared.setActivity(PARENT, "idle");
    t.shared.finishRun(task.id, "finished in B");
    await flush();
    await t.clock.advance(5_000);
    const store = SqliteTaskStore.open({ path: join(dir, `owner-${n}.db`), projectId: "p" });
    assert.equal(store.get(task.id)!.status, "completed");
    assert.equal(store.get(task.id)!.result, "finished in B");
    assert.equal(store.events(task.id).filter((e) => e.kind === "status:completed").length, 1);
    assert.equal(store.taskClaim(task.id), undefined, "a settled task has no owner");
    store.close();
    t.managers.b.dispose();
  });

  it("a launch cut off before its child got the prompt is started with the task's own prompt by the process that takes it over, not told to continue", async () => {
    const t = twoProcesses();
    await t.managers.b.start();
    const task = await t.launchInA();
    // A was killed between storing the task and prompting its child (seen in the chaos run): the child has no message.
    t.managers.a.dispose = () => undefined;
    (t.managers.a as unknown as { sweep: { stop(): void } }).sweep.stop();
    (t.managers.a as unknown as { poller: { stop(): void } }).poller.stop();
    const child = t.shared.sessions.get(task.id)!;
    child.messages = [];
    child.activity = "idle";
    t.shared.prompts = t.shared.prompts.filter((p) => p.sessionID !== task.id);
    t.driven.a.delete(task.id);
    retireClaimer(t.claimers.a);
    await t.clock.advance(10_000);
    assert.deepEqual(t.continues(task.id), [], "nothing to continue: the child never had its task");
    assert.deepEqual(t.shared.promptsTo(task.id).map((p) => p.text), ["p"], "B gave the child its prompt, once");
    t.shared.setActivity(PARENT, "idle");
    t.shared.finishRun(task.id, "done in B");
    await flush();
    await t.clock.advance(5_000);
    const store = SqliteTaskStore.open({ path: join(dir, `owner-${n}.db`), projectId: "p" });
    assert.equal(store.get(task.id)!.status, "completed");
    assert.equal(store.get(task.id)!.result, "done in B");
    store.close();
    t.managers.b.dispose();
  });

  it("a holder whose lease ran out (a stall, a clock jump) learns it lost the task at its next renewal and stops driving it", async () => {
    const t = twoProcesses();
    const task = await t.launchInA();
    (t.managers.a as unknown as { sweep: { stop(): void } }).sweep.stop(); // A stalls: no renewal
    t.shared.sessions.get(task.id)!.activity = "idle";
    await t.clock.advance(10_000);
    await t.managers.b.start();
    await t.clock.advance(LEASE_MS + 1);
    assert.equal(t.continues(task.id).length, 1, "B took the child over after A's lease ran out");
    await t.managers.a.sweepNow(); // A wakes up
    t.driven.a.add(task.id);
    t.shared.finishRun(task.id, "answer");
    await flush();
    const events = SqliteTaskStore.open({ path: join(dir, `owner-${n}.db`), projectId: "p" }).events(task.id);
    assert.equal(events.filter((e) => e.kind === "status:completed").length, 1, "settled once, by B");
    t.managers.a.dispose();
    t.managers.b.dispose();
  });
});
