import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { FakeClock, flush } from "../helpers/fake-clock.ts";
import { FakeHost } from "../helpers/fake-host.ts";
import { MemoryTaskStore } from "../../src/core/memory-task-store.ts";
import { TaskManager } from "../../src/core/task-manager.ts";
import type { Task } from "../../src/core/task.ts";
import { buildTools } from "../../src/tools/build-tools.ts";
import { DEFAULT_OPTIONS, type Options } from "../../src/options/options.ts";
import { RoutedHost } from "../../src/host/routed-host.ts";
import { workerRoute } from "../../src/workers/worker-route.ts";
import { WorkerPlacement } from "../../src/workers/worker-placement.ts";
import { WorkerSupervisor } from "../../src/workers/worker-supervisor.ts";
import type { WorkerHealth, WorkerLink } from "../../src/workers/worker-link.ts";
import { EvidenceService } from "../../src/evidence/evidence-service.ts";
import { MemoryEvidenceStore } from "../../src/evidence/memory-evidence-store.ts";
import { createForkSupport } from "../../src/fork/fork-preparer.ts";

const PARENT = "ses_parent0001";
const MODEL = { providerID: "mock", modelID: "mock-model" };
const GRACE_MS = 120_000;

/** A local FakeHost and two worker FakeHosts ("box", "cube") behind the routing host, as the plugin wires them. */
function setup(overrides: Partial<Options> = {}) {
  const clock = new FakeClock();
  const local = new FakeHost(clock);
  local.addSession(PARENT, "busy");
  const links = new Map<string, WorkerLink & { fake: FakeHost; files: Map<string, string>; setHealth(h: WorkerHealth["state"]): void }>();
  for (const name of ["box", "cube"]) {
    const fake = new FakeHost(clock);
    let health: WorkerHealth = { state: "healthy", since: clock.now() };
    const files = new Map<string, string>();
    links.set(name, {
      name, capacity: 4, host: fake, fake, files, health: () => health,
      fileContent: async (path) => files.get(path),
      setHealth: (state) => { health = { state, since: clock.now(), ...(state === "healthy" ? {} : { error: "connect ECONNREFUSED" }) }; supervisor.healthChanged(links.get(name)!, health); },
    });
  }
  const options = { ...DEFAULT_OPTIONS, maxConcurrentPerModel: 4, ...overrides };
  let manager!: TaskManager<EvidenceService>;
  const routed = new RoutedHost(local, workerRoute(links, {
    workerOf: (id) => manager.get(id)?.worker,
    runningOn: (worker) => manager.activeTasks().filter((t) => t.worker === worker).map((t) => t.id),
  }));
  const placement = new WorkerPlacement(local, links, { toolOutputLimit: 1500, tokenCap: 100_000 });
  const filesOf = (task: Task) => (task.worker ? (path: string) => links.get(task.worker!)!.fileContent(path) : undefined);
  manager = new TaskManager(routed, new MemoryTaskStore(), clock, options, {
    placement,
    forks: createForkSupport(routed, { toolOutputLimit: 1500, tokenCap: 100_000 }),
    hooks: (running) => new EvidenceService(running, new MemoryEvidenceStore(), "/nonexistent", options, filesOf),
  });
  const evidence = manager.hooks;
  const supervisor = new WorkerSupervisor(() => manager, clock, GRACE_MS, () => {});
  for (const host of [local, ...[...links.values()].map((l) => l.fake)]) host.onEvent((e) => { manager.handleEvent(e); evidence.handleEvent(e); });
  const tools = buildTools({ manager, clock, options: { ...options, workers: [...links.values()] } as never, onCrash: () => {} });
  after(() => { supervisor.stop(); manager.dispose(); });
  let seq = 0;
  const call = async (name: string, args: unknown, messageID = `msg_${++seq}`) =>
    String(await tools[name]!.execute(args as never, { sessionID: PARENT, messageID, agent: "build", abort: new AbortController().signal, extra: { model: { id: MODEL.modelID, providerID: MODEL.providerID } } } as never));
  const launch = async (args: Record<string, unknown> = {}, messageID?: string) => {
    const out = await call("background_task", { description: "look around", prompt: "find things", agent: "general", ...args }, messageID);
    const id = /task_id: (\S+)/.exec(out)?.[1];
    if (!id) throw new Error(out);
    return id;
  };
  const box = links.get("box")!;
  const cube = links.get("cube")!;
  /** The parent's notices that name the task. */
  const noticesOf = (id: string) => local.promptsTo(PARENT).filter((p) => p.text.includes(id));
  return { clock, local, box, cube, manager, call, launch, noticesOf };
}

describe("workers: where children run", () => {
  it('auto: 12 children at once run 4 here, then 4 and 4 on the workers with the most free capacity', async () => {
    const w = setup();
    const ids = await Promise.all(Array.from({ length: 12 }, (_, i) => w.launch({ worker: "auto", description: `job ${i}` }, "msg_batch")));
    const on = (host: FakeHost) => ids.filter((id) => host.sessions.has(id)).length;
    assert.deepEqual([on(w.local), on(w.box.fake), on(w.cube.fake)], [4, 4, 4]);
    assert.equal(w.manager.activeTasks().length, 12, "all running, none queued");
    assert.deepEqual(ids.filter((id) => w.box.fake.sessions.has(id)).map((id) => w.manager.get(id)!.worker), ["box", "box", "box", "box"]);
    for (const id of ids.filter((id) => w.box.fake.sessions.has(id))) assert.equal(w.box.fake.promptsTo(id)[0]!.text, "find things");
  });

  it("a burst past every slot is queued where the queue is shortest for its capacity, not all here", async () => {
    const w = setup();
    const ids = await Promise.all(Array.from({ length: 24 }, (_, i) => w.launch({ worker: "auto", description: `job ${i}` }, "msg_burst")));
    const where = (id: string) => w.manager.get(id)!.worker ?? "local";
    const count = (name: string) => ids.filter((id) => where(id) === name).length;
    assert.deepEqual([count("local"), count("box"), count("cube")], [8, 8, 8]);
    assert.equal(w.manager.activeTasks().length, 12);
    const onBox = (status: string) => ids.filter((id) => where(id) === "box" && w.manager.get(id)!.status === status);
    assert.deepEqual([onBox("running").length, onBox("queued").length], [4, 4]);
    w.box.fake.finishRun(onBox("running")[0]!, "done");
    await flush();
    assert.deepEqual([onBox("running").length, onBox("queued").length, onBox("completed").length], [4, 3, 1], "a freed box slot starts a task queued for box");
  });

  it("a named worker past its capacity queues there; a worker that is unknown or down is refused with the names", async () => {
    const w = setup();
    for (let i = 0; i < 5; i++) await w.launch({ worker: "box" });
    assert.equal(w.manager.activeTasks().filter((t) => t.worker === "box").length, 4);
    const queued = w.manager.listForParent(PARENT, "queued");
    assert.equal(queued.length, 1);
    assert.match(await w.call("background_list", {}), /\(on worker box\)  queued .*waiting for a free slot on worker box/);
    assert.match(await w.call("background_task", { description: "x", prompt: "y", agent: "general", worker: "tower" }), /No worker "tower". worker takes one of: local, auto, box, cube/);
    w.cube.setHealth("unreachable");
    assert.match(await w.call("background_task", { description: "x", prompt: "y", agent: "general", worker: "cube" }), /Worker "cube" is unreachable since .* \(connect ECONNREFUSED\); use worker "auto"/);
    assert.match(await w.call("background_task", { description: "x", prompt: "y", agent: "general", worker: "box", expect: { command: "npm test" } }), /expect.command runs on this machine/);
  });

  it("a worker's child: its result reaches the parent once; cancel and resume go to the worker", async () => {
    const w = setup();
    const id = await w.launch({ worker: "box" });
    assert.match(await w.call("background_output", { task_id: id }), /runs on worker box/);
    w.box.fake.finishRun(id, "found 3 things");
    await flush();
    w.local.setActivity(PARENT, "idle");
    await flush();
    assert.equal(w.noticesOf(id).length, 1);
    assert.match(w.noticesOf(id)[0]!.text, /found 3 things/);
    await w.clock.advance(10_000);
    assert.equal(w.noticesOf(id).length, 1, "told once");
    assert.match(await w.call("background_task", { description: "more", prompt: "and more?", agent: "general", resume: id }), /Resumed background task/);
    assert.equal(w.box.fake.promptsTo(id).at(-1)!.text, "and more?");
    assert.equal(w.local.promptsTo(id).length, 0);
    assert.match(await w.call("background_cancel", { task_id: id }), /cancel/i);
    assert.deepEqual(w.box.fake.aborted, [id]);
  });

  it("fork onto a worker copies the parent's messages into a new session there", async () => {
    const w = setup();
    await w.local.prompt({ sessionID: PARENT, text: "we decided on plan B", agent: "build" });
    w.local.finishRun(PARENT, "agreed: plan B", { emitIdle: false });
    const id = await w.launch({ worker: "cube", fork: true, prompt: "implement plan B" });
    const [copy, first] = w.cube.fake.promptsTo(id);
    assert.equal(copy!.noReply, true);
    assert.match(copy!.text, /copied from the parent session[\s\S]*--- user ---\nwe decided on plan B[\s\S]*--- assistant ---\nagreed: plan B/);
    assert.match(first!.text, /implement plan B/);
  });

  it("expect.files is checked on the worker's checkout, through its API", async () => {
    const w = setup({ maxContinuations: 0 });
    const id = await w.launch({ worker: "box", expect: { files: ["report.md"] } });
    w.box.fake.finishRun(id, "done");
    await flush();
    assert.equal(w.manager.get(id)!.status, "error");
    assert.match(w.manager.get(id)!.error!, /report.md does not exist/);
    const ok = await w.launch({ worker: "box", expect: { files: ["out.md"] } });
    w.box.files.set("out.md", "# results");
    w.box.fake.finishRun(ok, "done");
    await flush();
    assert.equal(w.manager.get(ok)!.status, "completed");
  });
});

describe("workers: one that stops answering", () => {
  it("its children are held as unreachable (not failed), then settle as error after the grace period, the parent told once", async () => {
    const w = setup();
    const id = await w.launch({ worker: "box" });
    w.box.setHealth("unreachable");
    await w.clock.advance(60_000);
    assert.equal(w.manager.get(id)!.status, "running");
    assert.match(await w.call("background_list", {}), /worker box unreachable since .*; held up to 120 s/);
    await w.clock.advance(61_000);
    assert.equal(w.manager.get(id)!.status, "error");
    assert.match(w.manager.get(id)!.error!, /Worker "box" was unreachable since .* for more than 120 s \(workerGraceSeconds\)/);
    w.local.setActivity(PARENT, "idle");
    await flush();
    await w.clock.advance(10_000);
    assert.equal(w.noticesOf(id).length, 1);
  });

  it("one that comes back within the grace period: its children go on, and one that finished meanwhile settles", async () => {
    const w = setup();
    const id = await w.launch({ worker: "box" });
    w.box.setHealth("unreachable");
    await w.clock.advance(30_000);
    w.box.fake.finishRun(id, "finished while unseen", { emitIdle: false });
    w.box.setHealth("healthy");
    await flush();
    await w.clock.advance(5_000);
    assert.equal(w.manager.get(id)!.status, "completed");
    assert.equal(w.manager.get(id)!.result, "finished while unseen");
    await w.clock.advance(GRACE_MS);
    assert.equal(w.manager.get(id)!.status, "completed", "the grace timer was cancelled");
  });
});
