import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { coreFixture, PARENT } from "../helpers/core-fixture.ts";
import { backgroundCancelTool } from "../../src/tools/background-cancel.ts";
import { isolatedTask } from "../../src/tools/isolated-task.ts";
import type { AutomationAccess } from "../../src/automations/automation-access.ts";

/**
 * The user's finished task U, and two children of the user: A (which launched G1 and G2) and its
 * sibling B (which launched H). Each child calls tools from its own session.
 */
async function project() {
  const f = coreFixture();
  const u = await f.launch({ description: "user secret work" });
  f.host.finishRun(u, "the user's result");
  await f.flush();
  assert.equal(f.store.get(u)?.status, "completed");
  const a = await f.launch({ description: "child A" });
  const b = await f.launch({ description: "sibling B" });
  const g1 = await f.launch({ description: "grandchild G1" }, { sessionID: a });
  const g2 = await f.launch({ description: "grandchild G2" }, { sessionID: a });
  const h = await f.launch({ description: "nephew H" }, { sessionID: b });
  const outside = [u, b, h];
  /** What no answer to A may name: the ids and descriptions of tasks outside A's tree. */
  const assertNamesNothingOutside = (answer: string) => {
    for (const id of outside) assert.doesNotMatch(answer, new RegExp(id), `names ${id}: ${answer}`);
    for (const text of ["user secret work", "sibling B", "nephew H"]) assert.ok(!answer.includes(text), `names "${text}": ${answer}`);
  };
  /** The answer to an id that names no task at all, with nothing but the id the caller gave. */
  const assertUnknown = (tool: string, answer: string, given: string) => {
    assert.equal(answer, `${tool}: No background task or batch matches "${given}". Call background_list to see this session's task ids.`);
  };
  return { f, u, a, b, g1, g2, h, assertNamesNothingOutside, assertUnknown };
}

describe("a child sees and touches only its own tree", () => {
  it("a child resuming the user's finished task is answered as for an unknown id; no prompt is sent, nothing changes", async () => {
    const { f, u, a, assertUnknown } = await project();
    const before = f.host.promptsTo(u).length;
    const out = await f.call("background_task", { description: "go on", prompt: "spend", agent: "general", resume: u, budget: { usd: 1000 } }, { sessionID: a });
    assertUnknown("background_task", out, u);
    assert.equal(f.host.promptsTo(u).length, before, "the user's task got no prompt");
    assert.equal(f.store.get(u)?.status, "completed");
    assert.equal(f.store.get(u)?.budget, undefined, "its budget is untouched");
  });

  it('a child cancelling "ses_" lists only its own tasks; nothing outside its tree is cancelled', async () => {
    const { f, u, a, b, h, g1, g2, assertNamesNothingOutside } = await project();
    const out = await f.call("background_cancel", { task_id: "ses_" }, { sessionID: a });
    assert.match(out, /matches more than one/);
    assert.match(out, new RegExp(g1));
    assert.match(out, new RegExp(g2));
    assertNamesNothingOutside(out);
    for (const id of [u, a, b, h, g1, g2]) assert.notEqual(f.store.get(id)?.status, "cancelled");
    assert.deepEqual(f.host.aborted, []);
  });

  it("a child naming its sibling's task (output, cancel) gets the unknown-id answer; the user's session still reaches it", async () => {
    const { f, b, h, a, assertUnknown } = await project();
    for (const [tool, args] of [["background_output", { task_id: h }], ["background_cancel", { task_id: b }], ["background_output", { task_id: h.slice(0, 12) }]] as const) {
      assertUnknown(tool, await f.call(tool, args, { sessionID: a }), args.task_id);
    }
    assert.equal(f.store.get(b)?.status, "running");
    assert.match(await f.call("background_output", { task_id: h }), /nephew H/, "the user sees every task");
  });

  it("a child still reaches its own tasks (output, cancel by prefix)", async () => {
    const { f, a, g1 } = await project();
    assert.match(await f.call("background_output", { task_id: g1 }, { sessionID: a }), /grandchild G1/);
    assert.match(await f.call("background_cancel", { task_id: g1 }, { sessionID: a }), new RegExp(`${g1}: cancelled`));
  });

  it("an OpenCode subagent session of a child (the task tool) is treated as that child", async () => {
    const { f, u, a, g1, assertNamesNothingOutside } = await project();
    const { id: sub } = await f.host.createSession({ parentID: a, title: "explore (@explore subagent)" });
    const { id: subsub } = await f.host.createSession({ parentID: sub, title: "deeper" });
    for (const caller of [sub, subsub]) {
      const resumed = await f.call("background_task", { description: "go on", prompt: "x", agent: "general", resume: u }, { sessionID: caller });
      assert.match(resumed, /No background task or batch matches/);
      const cancelled = await f.call("background_cancel", { task_id: "ses_" }, { sessionID: caller });
      assertNamesNothingOutside(cancelled);
      assert.match(await f.call("background_output", { task_id: g1 }, { sessionID: caller }), /grandchild G1/, "its child's own tasks it reaches");
      assert.match(await f.call("background_list", {}, { sessionID: caller }), new RegExp(g1), "it lists its child's tasks");
      await assert.rejects(isolatedTask(f.manager, u, caller), /No background task or batch matches/, "merge's lookup too");
    }
    assert.equal(f.host.promptsTo(u).length, 1, "only the user's first prompt");
  });

  it("a task a subagent session of a child launched is in that child's tree", async () => {
    const { f, a, b } = await project();
    const { id: sub } = await f.host.createSession({ parentID: a, title: "subagent" });
    const mine = await f.launch({ description: "from the subagent" }, { sessionID: sub });
    assert.match(await f.call("background_output", { task_id: mine }, { sessionID: a }), /from the subagent/);
    assert.match(await f.call("background_output", { task_id: mine }, { sessionID: b }), /No background task or batch matches/);
  });

  it("a child cannot cancel a run of the user's automations by its batch id; the user can", async () => {
    const { f, a } = await project();
    const cancelled: string[] = [];
    const runs = { cancelSteps: async (id: string) => (cancelled.push(id), `Cancelled the steps of run ${id}.`) };
    const automations = { loaded: () => undefined, load: async () => ({ runs }), ifWanted: async () => ({ runs }) } as unknown as AutomationAccess;
    const tool = backgroundCancelTool({ manager: f.manager, onCrash: () => {}, automations });
    const context = (sessionID: string) => ({ sessionID, messageID: "msg_x", agent: "build", abort: new AbortController().signal }) as never;
    const byChild = String(await tool.execute({ task_id: "auto_1#3" } as never, context(a)));
    assert.match(byChild, /No background task or batch matches/);
    assert.deepEqual(cancelled, []);
    assert.match(String(await tool.execute({ task_id: "auto_1#3" } as never, context(PARENT))), /Cancelled the steps/);
  });

  it("while the host cannot list sessions, a session not known to be the user's reaches only what it launched itself", async () => {
    const { f, u, a, g1, assertUnknown } = await project();
    const { id: sub } = await f.host.createSession({ parentID: a, title: "subagent" });
    f.host.listSessions = async () => {
      throw new Error("connection refused");
    };
    assertUnknown("background_output", await f.call("background_output", { task_id: u }, { sessionID: sub }), u);
    assertUnknown("background_output", await f.call("background_output", { task_id: g1 }, { sessionID: sub }), g1);
    assert.match(await f.call("background_list", {}), new RegExp(u), "the user's session still lists its own tasks");
    assert.match(await f.call("background_output", { task_id: g1 }, { sessionID: a }), /grandchild G1/, "a task's own session needs no list");
  });

  it("the host's session list is read once per unknown session, not per call", async () => {
    const { f, a } = await project();
    const { id: sub } = await f.host.createSession({ parentID: a, title: "subagent" });
    let listings = 0;
    const list = f.host.listSessions.bind(f.host);
    f.host.listSessions = async () => (listings++, list());
    for (let i = 0; i < 3; i++) await f.call("background_list", {}, { sessionID: sub });
    for (let i = 0; i < 3; i++) await f.call("background_list", {});
    assert.ok(listings <= 2, `listed ${listings} times`);
  });
});
