import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { startedAutomations, PARENT, MODEL } from "../helpers/automation-fixture.ts";
import { automationTools } from "../../src/tools/build-tools.ts";
import { similarity, sameProposal } from "../../src/proposals/proposal-rules.ts";
import type { Options } from "../../src/options/options.ts";

const HOUR = 3600_000;

function setup(overrides: Partial<Options> = {}) {
  const f = startedAutomations(overrides);
  const tools = automationTools(f.automations, (m) => f.crashes.push(m));
  const asked: { permission: string; patterns: string[] }[] = [];
  let answer: "allow" | "reject" = "allow";
  async function call(name: string, args: unknown) {
    const ctx = {
      sessionID: PARENT, messageID: "msg_1", agent: "build", abort: new AbortController().signal,
      extra: { model: { id: MODEL.modelID, providerID: MODEL.providerID } },
      ask: async (input: { permission: string; patterns: string[] }) => { asked.push(input); if (answer === "reject") throw new Error("The user rejected permission"); },
    };
    return String(await tools[name]!.execute(args as never, ctx as never));
  }
  const propose = async (args: Record<string, unknown> = {}) =>
    call("task_propose", { title: "watch the deploy", reason: "You started a deploy; a failure would go unnoticed.", prompt: "Check the deploy status and report failures", triggers: [{ every: "10m" }], ...args });
  const idOf = (out: string) => out.match(/automation (au\w+)/)![1]!;
  return { f, call, asked, propose, idOf, setAnswer: (a: "allow" | "reject") => { answer = a; } };
}

describe("task_propose", () => {
  it("stores a disabled proposal without asking anything, and it never fires", async () => {
    const { f, asked, propose, idOf } = setup();
    const out = await propose();
    assert.match(out, /Proposed automation au\w+ "watch the deploy": stored disabled; nothing runs until the user approves it/);
    assert.match(out, /task_update \{ id: "au\w+", enabled: true \}/);
    assert.doesNotMatch(out, /proposals approve/, "the model is never handed the command that would approve its own proposal");
    assert.match(out, /The user decides: in this conversation .*, on the dashboard, or with the command line in their own terminal/);
    assert.equal(asked.length, 0, "no permission prompt now");
    const a = f.catalog.get(idOf(out))!;
    assert.equal(a.enabled, false);
    assert.deepEqual(a.proposal, { reason: "You started a deploy; a failure would go unnoticed.", proposedAt: a.createdAt, by: "conversation" });
    await f.clock.advance(60 * 60_000);
    assert.equal(f.children().length, 0, "a proposal never fires");
  });

  it("refuses a missing or blank reason, and the fields task_create refuses, storing nothing", async () => {
    const { f, call, propose } = setup();
    assert.match(await call("task_propose", { title: "x", prompt: "y" }), /task_propose: invalid arguments\. "reason"/);
    assert.match(await propose({ reason: "  " }), /reason must not be empty/);
    assert.match(await propose({ triggers: [{ every: "soon" }] }), /triggers\[0\]/);
    assert.match(await propose({ notify: "sometimes" }), /invalid arguments\. "notify"/);
    assert.match(await propose({ enabled: true }), /Unknown argument\(s\): enabled/);
    assert.equal(f.catalog.all().length, 0);
  });

  it("approving through task_update asks the user (and bash for its commands), then it fires", async () => {
    const { f, call, asked, propose, idOf } = setup();
    const id = idOf(await propose({ steps: [{ name: "status", run: "git status" }] }));
    assert.match(await call("task_run", { id }), /is a proposal; it runs once the user approves it/);
    const out = await call("task_update", { id, enabled: true });
    assert.match(out, /Approved proposal au\w+ "watch the deploy": enabled/);
    assert.deepEqual(asked.map((a) => a.permission), ["background_automation", "bash"]);
    assert.deepEqual(asked[1]!.patterns, ["git status"]);
    const a = f.catalog.get(id)!;
    assert.equal(a.enabled, true);
    assert.equal(a.proposal, undefined);
    assert.equal(f.proposals.store.decisions(0)[0]!.outcome, "approved");
  });

  it("a user who refuses the prompt leaves it a proposal", async () => {
    const { f, call, propose, idOf, setAnswer } = setup();
    const id = idOf(await propose());
    setAnswer("reject");
    assert.match(await call("task_update", { id, enabled: true }), /rejected automation "watch the deploy"; it stays a proposal, unchanged/);
    assert.ok(f.catalog.get(id)!.proposal);
  });

  it("task_delete rejects it; the same title, or the same triggers and a near-identical prompt, is refused during the cooldown", async () => {
    const { f, call, propose, idOf } = setup();
    const id = idOf(await propose());
    assert.match(await call("task_delete", { id }), /Rejected proposal au\w+ "watch the deploy": deleted; proposing the same again is refused for 24 h/);
    await f.clock.advance(3 * HOUR);
    assert.match(await propose(), /rejected 3 h ago \(via conversation\); it may be proposed again in 21 h/);
    assert.match(await propose({ title: "Watch the  DEPLOY", triggers: [{ every: "1h" }], prompt: "other" }), /rejected 3 h ago/);
    assert.match(await propose({ title: "deploy watcher", prompt: "Check the deploy status and report the failures." }), /rejected 3 h ago/);
    assert.match(await propose({ title: "deploy watcher", prompt: "Check the deploy status and report failures", triggers: [{ every: "1h" }] }), /Proposed automation/, "other triggers: another proposal");
    await f.clock.advance(21 * HOUR);
    assert.match(await propose(), /Proposed automation/, "after the cooldown it may be proposed again");
  });

  it("a fourth pending proposal is refused until one is decided; a repeat of a pending one is refused", async () => {
    const { call, propose, idOf } = setup();
    const first = idOf(await propose({ title: "one", prompt: "first job", triggers: [{ every: "1h" }] }));
    await propose({ title: "two", prompt: "second job entirely", triggers: [{ every: "2h" }] });
    assert.match(await propose({ title: "two", prompt: "zzz" }), /already proposed as au\w+ "two"/);
    await propose({ title: "three", prompt: "third job here", triggers: [{ every: "3h" }] });
    assert.match(await propose({ title: "four", prompt: "fourth", triggers: [{ every: "4h" }] }), /3 proposals already wait for the user's decision \(at most 3\)/);
    await call("task_update", { id: first, enabled: true });
    assert.match(await propose({ title: "four", prompt: "fourth", triggers: [{ every: "4h" }] }), /Proposed automation/);
  });

  it("expires after 7 days undecided, without a cooldown", async () => {
    const { f, propose, idOf } = setup();
    const id = idOf(await propose());
    await f.clock.advance(7 * 24 * HOUR + 1);
    assert.equal(f.proposals.pending().length, 0);
    assert.equal(f.catalog.get(id), undefined);
    assert.equal(f.proposals.store.decisions(0)[0]!.outcome, "expired");
    assert.match(await propose(), /Proposed automation/);
  });

  it("the hourly sweep removes an expired proposal with nobody touching it; stopped, it sweeps no more", async () => {
    const { f, propose, idOf } = setup();
    f.proposals.start();
    const first = idOf(await propose());
    await f.clock.advance(7 * 24 * HOUR + HOUR);
    assert.equal(f.autoStore.automation(first), undefined, "gone at the first sweep past its 7 days");
    assert.equal(f.proposals.store.decisions(0)[0]!.outcome, "expired");
    f.proposals.stop();
    const second = idOf(await propose({ title: "another", prompt: "something else entirely" }));
    await f.clock.advance(8 * 24 * HOUR);
    assert.ok(f.autoStore.automation(second), "no sweep after stop");
  });

  it("task_list shows proposals apart from automations", async () => {
    const { call, propose } = setup();
    await call("task_create", { title: "nightly", prompt: "summarise", triggers: [{ every: "1h" }] });
    await propose();
    const list = await call("task_list", {});
    const [automations, proposals] = list.split("Proposals waiting for the user");
    assert.match(automations!, /"nightly": enabled/);
    assert.doesNotMatch(automations!, /watch the deploy/);
    assert.match(proposals!, /\(1; task_update enabled: true approves, task_delete rejects\):\n- au\w+ "watch the deploy": every 10m; why: You started a deploy/);
  });
});

describe("proposal likeness", () => {
  it("prompts match by their words, punctuation and case ignored", () => {
    assert.equal(similarity("Run the tests.", "run THE tests"), 1);
    assert.ok(similarity("Run the tests and report failures", "Run the tests and report the failures") >= 0.9);
    assert.ok(similarity("Run the tests and report failures", "Deploy the site to production now") < 0.5);
    const shape = { title: "a", work: "check the build", triggers: ["every 1h"] };
    assert.equal(sameProposal(shape, { title: "b", work: "Check the build!", triggers: ["every 1h"] }), true);
    assert.equal(sameProposal(shape, { title: "b", work: "check the build", triggers: ["every 2h"] }), false);
    assert.equal(sameProposal(shape, { title: " A ", work: "x", triggers: [] }), true);
  });
});

describe("an expired proposal", () => {
  it("cannot be approved once past its 7 days, even before the hourly sweep", async () => {
    const { f, propose, idOf } = setup();
    const id = idOf(await propose());
    const a = f.catalog.get(id)!;
    f.autoStore.saveAutomation({ ...a, proposal: { ...a.proposal!, proposedAt: a.proposal!.proposedAt - 7 * 24 * HOUR } });
    assert.throws(() => f.proposals.approve(id, "dashboard"), /expired \(7 days undecided\) and is gone/);
    assert.equal(f.catalog.get(id), undefined);
    assert.equal(f.proposals.store.decisions(0)[0]!.outcome, "expired");
  });
});
