/**
 * Host conformance: what a real `opencode serve` sent a plugin (test/fixtures/host/events.json,
 * captured by scripts/capture-host-fixtures.ts) run through the event normaliser and the host
 * adapter, whose client replays the real HTTP answers. The Host contract (test/helpers/host-contract.ts)
 * runs against that adapter and against the FakeHost the unit tests use, so the fake cannot drift.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { normalizeEvent } from "../../src/host/normalize-event.ts";
import { createOpencodeHost } from "../../src/host/opencode-host.ts";
import type { HostEvent } from "../../src/host/host.ts";
import { FakeClock } from "../helpers/fake-clock.ts";
import { FakeHost } from "../helpers/fake-host.ts";
import { hostContract } from "../helpers/host-contract.ts";

type RawEvent = { type: string; properties: Record<string, any> };
type Answer = { data?: any; error?: unknown; status?: number };
type Fixture = {
  scenarios: Record<string, { sessionID: string; events: RawEvent[] }>;
  answers: Record<string, Answer>;
};

const fixture = JSON.parse(readFileSync(new URL("../fixtures/host/events.json", import.meta.url), "utf8")) as Fixture;
const { scenarios, answers } = fixture;
const MOCK = { providerID: "mock", modelID: "mock-model" };
/** Event types the core has no use for; any other type the host sends must be normalised. */
const IGNORED = new Set(["session.created", "session.updated", "session.diff"]);

const normalized = (name: string): HostEvent[] => scenarios[name].events.map(normalizeEvent).filter((e): e is HostEvent => e !== undefined);
const of = <T extends HostEvent["type"]>(events: HostEvent[], type: T) => events.filter((e): e is Extract<HostEvent, { type: T }> => e.type === type);
const messages = (events: HostEvent[]) => of(events, "message").map((e) => e.message);

describe("host conformance: real events through the normaliser", () => {
  it("every event type the host sent is either normalised or known to be of no use", () => {
    const dropped = new Set<string>();
    for (const { events } of Object.values(scenarios)) {
      for (const event of events) if (normalizeEvent(event) === undefined) dropped.add(event.type);
    }
    assert.deepEqual([...dropped].filter((type) => !IGNORED.has(type)), []);
  });

  it("every normalised event belongs to the session it was captured for", () => {
    for (const [name, { sessionID }] of Object.entries(scenarios)) {
      for (const event of normalized(name)) assert.equal(event.sessionID, sessionID, `${name}: ${JSON.stringify(event)}`);
    }
  });

  it("a text reply: busy, the user message with its agent and model, the answer text, a finished message, then idle once", () => {
    const events = normalized("reply");
    const [user] = messages(events).filter((m) => m.role === "user");
    assert.deepEqual({ agent: user.agent, model: user.model }, { agent: "build", model: MOCK });
    const done = messages(events).filter((m) => m.role === "assistant" && m.completedAt !== undefined);
    assert.equal(done.length, 1);
    assert.equal(done[0].toolCallsPending, false);
    assert.equal(done[0].error, undefined);
    const texts = of(events, "text").filter((t) => t.messageID === done[0].id);
    assert.equal(texts.at(-1)?.text, "Hello from the mock.");
    assert.ok(of(events, "activity").length > 0, "streaming deltas count as activity");
    const statuses = of(events, "status").map((s) => s.status);
    assert.equal(statuses[0], "busy");
    assert.equal(of(events, "idle").length, 1);
    const idleAt = events.findIndex((e) => e.type === "idle");
    assert.deepEqual(events[idleAt - 1], { type: "status", sessionID: scenarios.reply.sessionID, status: "idle" });
  });

  it("a tool call: the tool's three states under one call id, a step that ends in tool calls, then the answer", () => {
    const events = normalized("tool");
    const tools = of(events, "tool");
    assert.equal(tools.length, 3, "pending, running, completed");
    assert.deepEqual(new Set(tools.map((t) => `${t.tool} ${t.callID}`)).size, 1);
    assert.equal(tools[0].tool, "read");
    const done = messages(events).filter((m) => m.role === "assistant" && m.completedAt !== undefined);
    assert.deepEqual(done.map((m) => m.toolCallsPending), [true, false]);
    assert.equal(of(events, "idle").length, 1);
  });

  it("a model error: the error with the provider's message, two idles, and the failed message only after the first idle", () => {
    const events = normalized("error");
    assert.deepEqual(of(events, "error").map(({ name, message }) => ({ name, message })), [{ name: "APIError", message: "the model refused" }]);
    assert.equal(of(events, "idle").length, 2);
    const failedAt = events.findIndex((e) => e.type === "message" && e.message.error === "the model refused");
    assert.ok(failedAt > events.findIndex((e) => e.type === "idle"), "judge a run from a finished message, not from the first idle");
  });

  it("a retry: the attempt, the provider's message and when the next attempt is due", () => {
    const [retry] = of(normalized("retry"), "status").filter((s) => s.status === "retry");
    assert.equal(retry.retry?.attempt, 1);
    assert.equal(retry.retry?.message, "boom");
    assert.equal(typeof retry.retry?.nextAt, "number");
  });

  it("an abort: MessageAbortedError and two idles", () => {
    const events = normalized("abort");
    assert.deepEqual(of(events, "error").map(({ name, message }) => ({ name, message })), [{ name: "MessageAbortedError", message: "Aborted" }]);
    assert.equal(of(events, "idle").length, 2);
  });

  it("a permission: asked with what and for which pattern, then replied, while the tool runs", () => {
    const events = normalized("permission");
    const asked = events.findIndex((e) => e.type === "permission");
    const replied = events.findIndex((e) => e.type === "permission-replied");
    assert.deepEqual(events[asked], { type: "permission", sessionID: scenarios.permission.sessionID, title: "bash (echo guarded)" });
    assert.ok(replied > asked);
    assert.equal(of(events, "permission").length, 1);
  });

  it("a deleted session", () => {
    assert.deepEqual(normalized("deleted"), [{ type: "deleted", sessionID: scenarios.deleted.sessionID }]);
  });
});

const { reply, tool, error, abort, deleted } = scenarios;

/**
 * A v1 client whose calls answer with what the real server answered. A prompt to the reply
 * session is kept, as the server keeps it (its parts as sent), and read back after the captured messages.
 */
function replayClient(overrides: { status?: Answer } = {}) {
  const kept: Array<{ info: Record<string, unknown>; parts: unknown[] }> = [];
  const keep = async (call: (input: { path: { id: string } }) => Promise<unknown>, input: { path: { id: string }; body: { parts: unknown[]; agent?: string } }) => {
    const answer = await call(input);
    if (input.path.id === reply.sessionID) kept.push({ info: { id: `msg_kept${kept.length}`, sessionID: reply.sessionID, role: "user", time: { created: Date.now() }, agent: input.body.agent }, parts: input.body.parts });
    return answer;
  };
  const withKept = (call: (input: { path: { id: string } }) => Promise<{ data: any }>) => async (input: { path: { id: string } }) => {
    const answer = await call(input);
    return input.path.id === reply.sessionID ? { ...answer, data: [...answer.data, ...kept] } : answer;
  };
  const result = (a: Answer) => ({ data: a.data, error: a.error, response: { status: a.status, ok: a.status !== undefined && a.status < 300 } });
  const byId = (table: Record<string, Answer>) => async ({ path }: { path: { id: string } }) => {
    const a = table[path.id];
    if (!a) throw new Error(`no captured answer for ${path.id}`);
    return result(a);
  };
  return {
    session: {
      create: async () => result(answers.createSession),
      list: async () => result(answers.listSessions),
      get: byId({ [reply.sessionID]: answers.getSession, [deleted.sessionID]: answers.getDeletedSession }),
      promptAsync: (input: { path: { id: string }; body: { parts: unknown[] } }) => keep(byId({ [reply.sessionID]: answers.promptAsync, [deleted.sessionID]: answers.promptDeleted }), input),
      abort: byId({ [abort.sessionID]: answers.abort }),
      status: async () => result(overrides.status ?? answers.statusIdle),
      messages: withKept(byId({ [reply.sessionID]: answers.messagesReply, [tool.sessionID]: answers.messagesTool, [error.sessionID]: answers.messagesError })),
    },
    app: { agents: async () => result(answers.agents) },
  };
}
const hostOn = (client: ReturnType<typeof replayClient>) => createOpencodeHost(client as unknown as Parameters<typeof createOpencodeHost>[0]);

describe("host conformance: the adapter on real HTTP answers", () => {
  it("statuses: an idle server answers with none", async () => {
    assert.deepEqual(await hostOn(replayClient()).statuses(), {});
  });

  it("createSession returns the id the host gave the new session", async () => {
    const host = hostOn(replayClient());
    assert.deepEqual(await host.createSession({ parentID: reply.sessionID, title: "child" }), { id: answers.createSession.data.id });
    assert.match(answers.createSession.data.id, /^ses_/);
  });

  it("prompt resolves on 204, and a refused prompt names the host's reason", async () => {
    const host = hostOn(replayClient());
    await host.prompt({ sessionID: reply.sessionID, text: "stored only", agent: "build", model: MOCK, noReply: true });
    await assert.rejects(
      host.prompt({ sessionID: deleted.sessionID, text: "to nobody", agent: "build", model: MOCK }),
      /OpenCode refused to send a prompt \(HTTP 404\): Session not found/,
    );
  });

  it("recentMessages: texts, the user's agent and model, a step waiting on tool calls, and a provider error", async () => {
    const host = hostOn(replayClient());
    const [user, answer] = await host.recentMessages(reply.sessionID, 2);
    assert.deepEqual([user.role, user.text, user.agent, user.model], ["user", "Hello.\nREPLY Hello from the mock.", "build", MOCK]);
    assert.deepEqual([answer.role, answer.text, answer.toolCallsPending, answer.error], ["assistant", "Hello from the mock.", false, undefined]);
    assert.equal(typeof answer.completedAt, "number");
    const toolRun = await host.recentMessages(tool.sessionID, 3);
    assert.deepEqual(toolRun.map((m) => [m.role, m.toolCallsPending]), [["user", false], ["assistant", true], ["assistant", false]]);
    assert.equal(toolRun[1].text, "", "tool output is not answer text");
    const [, failed] = await host.recentMessages(error.sessionID, 2);
    assert.equal(failed.error, "the model refused");
  });

  it("agents: names and modes, primary and subagents", async () => {
    const agents = await hostOn(replayClient()).agents();
    const mode = Object.fromEntries(agents.map((a) => [a.name, a.mode]));
    assert.equal(mode.build, "primary");
    assert.equal(mode.general, "subagent");
  });
});

hostContract("the adapter on captured HTTP answers", async () => ({
  host: hostOn(replayClient({ status: answers.statusWhileBusy })),
  live: reply.sessionID,
  gone: deleted.sessionID,
  busy: abort.sessionID,
}));

hostContract("the FakeHost", async () => {
  const host = new FakeHost(new FakeClock());
  const { id: live } = await host.createSession({ title: "live" });
  await host.prompt({ sessionID: live, text: "Hello.", agent: "build" });
  host.finishRun(live, "Hello back.");
  host.addSession("ses_busy", "busy");
  await host.createSession({ parentID: live, title: "child" });
  return { host, live, gone: "ses_gone", busy: "ses_busy" };
});
