/**
 * The Host contract (src/host/host.ts) as one suite that any Host runs through: the OpenCode
 * adapter on captured HTTP answers, the FakeHost the unit tests use, and later hosts (a remote
 * worker) alike. A host under test supplies a world: a host and three sessions in known states.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Host } from "../../src/host/host.ts";
import type { ForkMessage } from "../../src/fork/fork-types.ts";

export type ContractWorld = {
  host: Host;
  /** An idle session holding a prompt and its finished answer (at least two messages). */
  live: string;
  /** A session the host says is gone. */
  gone: string;
  /** A session running a turn. */
  busy: string;
};

/** Registers the contract's tests; `world` is called once per test. */
export function hostContract(name: string, world: () => Promise<ContractWorld>): void {
  describe(`host contract: ${name}`, () => {
    it("createSession answers the new session's id", async () => {
      const { host, live } = await world();
      const { id } = await host.createSession({ parentID: live, title: "child" });
      assert.equal(typeof id, "string");
      assert.ok(id.length > 0);
    });

    it("sessionExists: true for a live session, false for a gone one", async () => {
      const { host, live, gone } = await world();
      assert.equal(await host.sessionExists(live), true);
      assert.equal(await host.sessionExists(gone), false);
    });

    it("prompt resolves once the host accepts it, without waiting for the turn", { timeout: 5_000 }, async () => {
      const { host, live } = await world();
      await host.prompt({ sessionID: live, text: "stored only", agent: "build", noReply: true });
      await host.prompt({ sessionID: live, text: "go on", agent: "build" });
    });

    it("a refused call rejects with an Error whose message a user can read", async () => {
      const { host, gone } = await world();
      const error = await host.prompt({ sessionID: gone, text: "to nobody", agent: "build" }).then(
        () => assert.fail("a prompt to a gone session was accepted"),
        (e: unknown) => e,
      );
      assert.ok(error instanceof Error, `rejected with ${String(error)}`);
      assert.match(error.message, /\w{3}/);
      assert.doesNotMatch(error.message, /\[object Object\]|undefined/);
    });

    it("statuses: one call for all sessions, busy or retry only; an idle session is absent", async () => {
      const { host, live, busy } = await world();
      const all = await host.statuses();
      assert.equal(all[busy], "busy");
      assert.equal(all[live], undefined);
      for (const status of Object.values(all)) assert.ok(status === "busy" || status === "retry", status);
    });

    it("abort accepts a busy session", async () => {
      const { host, busy } = await world();
      await host.abort(busy);
    });

    it("recentMessages: at most `limit` of the newest, oldest first, each with its fields", async () => {
      const { host, live } = await world();
      const two = await host.recentMessages(live, 2);
      assert.equal(two.length, 2);
      assert.ok(two[0].createdAt <= two[1].createdAt, "oldest first");
      const one = await host.recentMessages(live, 1);
      assert.deepEqual(one.map((m) => m.id), [two[1].id], "the newest");
      for (const m of two) {
        assert.ok(m.role === "user" || m.role === "assistant", m.role);
        assert.equal(typeof m.id, "string");
        assert.equal(typeof m.createdAt, "number");
        assert.equal(typeof m.toolCallsPending, "boolean");
        assert.equal(typeof m.text, "string");
      }
      assert.equal(two[1].role, "assistant");
      assert.equal(typeof two[1].completedAt, "number", "the answer finished");
    });

    it("sessionHistory: every message with its parts, oldest first, ending with the recent ones", async () => {
      const { host, live } = await world();
      const history = await host.sessionHistory(live);
      const recent = await host.recentMessages(live, 2);
      assert.ok(history.length >= 2);
      for (const m of history) assert.ok(Array.isArray(m.parts), "parts");
      assert.deepEqual(history.slice(-2).map((m) => [m.info.id, m.info.role]), recent.map((m) => [m.id, m.role]));
    });

    it("listSessions: the project's sessions with their last activity; a child names its parent", async () => {
      const { host, live } = await world();
      const all = await host.listSessions();
      const session = all.find((s) => s.id === live);
      assert.ok(session, "the live session is listed");
      assert.equal(session.parentID, undefined);
      assert.ok(session.updatedAt > 1_600_000_000_000, "a time in ms");
      assert.ok(all.some((s) => s.parentID === live), "its child is listed with its parent");
    });

    it("a notice: the visible line as a plain text part, the payload as a synthetic one; the message's text holds both", { timeout: 15_000 }, async () => {
      const { host, live } = await world();
      const line = "✓ contract probe · 1s · a line for the person";
      const payload = `<background-task-notification key="contract:${Date.now()}">\npayload for the model\n</background-task-notification>`;
      await host.prompt({ sessionID: live, visible: line, text: payload, agent: "build" });
      // A host may store an accepted prompt a moment later (docs/host-notes.md).
      let sent: ForkMessage | undefined;
      for (const end = Date.now() + 10_000; !sent && Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
        sent = (await host.sessionHistory(live)).find((m) => m.info.role === "user" && m.parts.some((p) => p.text === payload));
      }
      assert.ok(sent, "the notice is in the session");
      const texts = sent.parts.filter((p) => p.type === "text").map((p) => [p.text, p.synthetic === true]);
      assert.deepEqual(texts, [[line, false], [payload, true]]);
      const [read] = (await host.recentMessages(live, 10)).filter((m) => m.id === sent.info.id);
      assert.ok(read && read.text.includes(line) && read.text.includes(payload), read?.text);
    });

    it("agents: each has a name and a mode, a primary agent among them", async () => {
      const { host } = await world();
      const agents = await host.agents();
      for (const a of agents) assert.ok(typeof a.name === "string" && typeof a.mode === "string", JSON.stringify(a));
      assert.ok(agents.some((a) => a.mode === "primary"));
    });
  });
}
