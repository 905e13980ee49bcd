import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { automationFixture, tempDb, MODEL } from "../helpers/automation-fixture.ts";
import { automationTools } from "../../src/tools/build-tools.ts";
import { Discovery, DISCOVERY_ID } from "../../src/discovery/discovery.ts";
import { parseDiscovery } from "../../src/discovery/discovery-config.ts";
import { parseOptions } from "../../src/options/options.ts";

const MIN = 60_000;
const USER = "ses_user";

function setup(dbPath = tempDb().path) {
  const f = automationFixture(dbPath);
  after(() => f.close());
  const discovery = new Discovery({
    automations: f.catalog, runs: f.runs, proposals: f.proposals, host: f.host, clock: f.clock, log: () => {},
    config: parseDiscovery({ every: "30m", idle: "10m", agent: "general" }).discovery!,
  });
  f.host.addSession(USER, "idle");
  /** The user writes; the turn it starts is over at once. */
  const say = async (text: string) => {
    await f.host.prompt({ sessionID: USER, text, agent: "build", model: MODEL });
    f.host.setActivity(USER, "idle");
  };
  const tools = automationTools(f.automations, () => {});
  /** A tool call made from inside a session (a discovery child). */
  const callFrom = async (sessionID: string, name: string, args: unknown) =>
    String(await tools[name]!.execute(args as never, { sessionID, messageID: "m", agent: "general", abort: new AbortController().signal } as never));
  const runs = () => f.runs.runs(DISCOVERY_ID, 50).filter((r) => r.runNo !== undefined);
  const child = () => f.manager.get(runs()[0]!.taskId!)!;
  return { f, discovery, say, callFrom, runs, child };
}

describe("discovery", () => {
  it("runs only once the user has been idle, never while the user is active or long gone", async () => {
    const { f, discovery, say, runs, child } = setup();
    assert.equal(await discovery.check(), "nobody wrote in the project in the last 2 h");
    await say("fix the login bug");
    await f.clock.advance(5 * MIN);
    assert.equal(await discovery.check(), "the user is active");
    await f.clock.advance(6 * MIN);
    assert.equal(await discovery.check(), "started");
    assert.equal(runs().length, 1);
    const task = child();
    assert.equal(task.agent, "general");
    assert.equal(task.parentSessionID, USER, "the run belongs to the user's most recent session");
    const prompt = f.host.promptsTo(task.id)[0]!.text;
    assert.match(prompt, /fired by idle: the user has written nothing for 11 min/);
    assert.match(prompt, /only through task_propose/);
    assert.match(prompt, /Automations:\n- none/);
    assert.equal(await discovery.check(), "a discovery run is running");
  });

  it("a session still answering the user's last message is not idle", async () => {
    const { f, discovery } = setup();
    await f.host.prompt({ sessionID: USER, text: "refactor everything", agent: "build", model: MODEL });
    await f.clock.advance(11 * MIN);
    assert.equal(await discovery.check(), "the user's session is working");
    f.host.setActivity(USER, "idle");
    assert.equal(await discovery.check(), "started");
  });

  it("a long-gone user (no message in 2 hours) is not 'around': no run", async () => {
    const { f, discovery, say } = setup();
    await say("hello");
    await f.clock.advance(2 * 60 * MIN + 1);
    assert.equal(await discovery.check(), "nobody wrote in the project in the last 2 h");
  });

  it("the plugin's own notices and child sessions do not count as the user writing", async () => {
    const { f, discovery, say } = setup();
    await say("start the deploy");
    await f.clock.advance(11 * MIN);
    await f.host.prompt({ sessionID: USER, text: "<background-task-notification id=\"n1\">\ndone\n</background-task-notification>", agent: "build" });
    f.host.setActivity(USER, "idle"); // the turn the notice woke has ended
    const { id: sub } = await f.host.createSession({ parentID: USER, title: "a child" });
    await f.host.prompt({ sessionID: sub, text: "work", agent: "general" });
    assert.equal(await discovery.check(), "started");
  });

  it("its proposals report to the user's session and are told once it ends; with none, nobody is told", async () => {
    const { f, discovery, say, callFrom, runs, child } = setup();
    await say("deploying now");
    await f.clock.advance(11 * MIN);
    assert.equal(await discovery.check(), "started");
    const first = child();
    assert.match(await callFrom(first.id, "task_create", { title: "x", prompt: "y" }), /A discovery run only proposes: use task_propose/);
    const out = await callFrom(first.id, "task_propose", { title: "watch CI", reason: "CI failed twice this week.", prompt: "check CI", triggers: [{ every: "1h" }] });
    assert.match(out, /Proposed automation (au\w+)/);
    const proposal = f.catalog.all().find((a) => a.title === "watch CI")!;
    assert.equal(proposal.reportTo, USER);
    assert.equal(proposal.proposal!.by, "discovery");
    const before = f.host.promptsTo(USER).length;
    f.host.finishRun(first.id, "Proposed watch CI.");
    await f.flush();
    const told = f.host.promptsTo(USER).slice(before).map((p) => p.text).join("\n");
    assert.match(told, /discovery proposed 1 automation\(s\)[\s\S]*"watch CI" \(every 1h\): CI failed twice this week\./);
    assert.equal(runs()[0]!.notified, true);
    f.host.setActivity(USER, "idle"); // the turn the notice woke has ended

    await f.clock.advance(30 * MIN);
    assert.equal(await discovery.check(), "started", "due again after `every`; the user is still around (41 min ago)");
    const second = child();
    assert.match(f.host.promptsTo(second.id)[0]!.text, /Proposals waiting for the user:\n- "watch CI": every 1h; why: CI failed twice/);
    const told2 = f.host.promptsTo(USER).length;
    f.host.finishRun(second.id, "Nothing to propose.");
    await f.flush();
    assert.equal(f.host.promptsTo(USER).length, told2, "nothing proposed: nobody is told");
    assert.equal(runs()[0]!.notified, false);
  });

  it("never more often than `every`, and a paused discovery automation does not run", async () => {
    const { f, discovery, say, child } = setup();
    await say("hi");
    await f.clock.advance(11 * MIN);
    await discovery.check();
    f.host.finishRun(child().id, "Nothing to propose.");
    await f.flush();
    assert.equal(await discovery.check(), "the last run was less than `every` ago");
    f.catalog.update(DISCOVERY_ID, { enabled: false });
    await f.clock.advance(30 * MIN);
    assert.equal(await discovery.check(), "the discovery automation is paused");
  });

  it("two processes on one database: one run", async () => {
    const db = tempDb();
    const one = setup(db.path);
    const two = setup(db.path);
    await Promise.all([one.say("hi"), two.say("hi")]);
    await Promise.all([one.f.clock.advance(11 * MIN), two.f.clock.advance(11 * MIN)]);
    const outcomes = await Promise.all([one.discovery.check(), two.discovery.check()]);
    assert.equal(outcomes.filter((o) => o === "started").length, 1, outcomes.join(", "));
    assert.equal(one.runs().length, 1);
  });
});

describe("the discovery option", () => {
  it("is off by default; true takes the defaults; bad fields are named", () => {
    assert.equal(parseOptions({}).discovery, false);
    assert.deepEqual(parseOptions({ discovery: true }).discovery, { every: "30m", everyMs: 30 * MIN, idle: "10m", idleMs: 10 * MIN, agent: "plan" });
    assert.deepEqual((parseOptions({ discovery: { every: "1h", model: "p/m" } }).discovery as { model?: unknown }).model, { providerID: "p", modelID: "m" });
    assert.throws(() => parseOptions({ discovery: { every: "soon", colour: 1 } }), /unknown "discovery" field "colour".*"discovery.every": "soon" is not a duration/);
    assert.throws(() => parseOptions({ discovery: "yes" }), /"discovery" must be false, true or an object/);
  });
});
