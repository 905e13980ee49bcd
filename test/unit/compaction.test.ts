import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { coreFixture, PARENT } from "../helpers/core-fixture.ts";
import { evidenceFixture } from "../helpers/evidence-fixture.ts";
import { toMessageInfo } from "../../src/host/message-info.ts";
import type { HostMessage } from "../../src/host/host.ts";

/**
 * OpenCode compacts a session that nears its context limit right after the answer that filled it:
 * a user message with a compaction part, then an assistant summary (`summary: true`), then, unless
 * a plugin says no, a synthetic "Continue if you have next steps" turn.
 */
type Core = ReturnType<typeof coreFixture>;

/** Appends messages to a child's history as the host stores them. */
function append(f: Core, id: string, ...messages: Omit<HostMessage, "createdAt" | "toolCallsPending">[]): HostMessage[] {
  const added = messages.map((m, i) => ({ createdAt: f.clock.now() + i, toolCallsPending: false, ...m }));
  f.host.sessions.get(id)!.messages.push(...added);
  return added;
}

const answer = (id: string, text: string, more: Partial<HostMessage> = {}) => ({ id, role: "assistant" as const, text, completedAt: 1, ...more });
const compactionRequest = (id: string) => ({ id, role: "user" as const, text: "" });
const summary = (id: string) => answer(id, "Summary: the runs so far answered.", { summary: true });

describe("a compaction at the end of a run", () => {
  it("ends the run with its answer, not the host's summary, when the events show only the summary", async () => {
    const f = coreFixture();
    const id = await f.launch();
    f.host.setActivity(PARENT, "idle");
    const [, , last] = append(f, id, answer("msg_a1", "the run's answer"), compactionRequest("msg_c1"), summary("msg_s1"));
    const { text: _text, ...info } = last!;
    f.host.emit({ type: "message", sessionID: id, message: info });
    f.host.emit({ type: "text", sessionID: id, messageID: "msg_s1", partID: "prt_s1", text: last!.text });
    f.host.emit({ type: "idle", sessionID: id });
    await f.flush();
    assert.equal(f.store.get(id)!.status, "completed");
    assert.equal(f.store.get(id)!.result, "the run's answer");
  });

  it("stays pending when the summary is all there is after the prompt", async () => {
    const f = coreFixture();
    const id = await f.launch();
    append(f, id, compactionRequest("msg_c1"), summary("msg_s1"));
    f.host.emit({ type: "idle", sessionID: id });
    await f.flush();
    assert.equal(f.store.get(id)!.status, "running");
  });

  it("asks the host not to add its continue turn after a final answer, and to add it after a step that called tools", async () => {
    const f = coreFixture();
    const done = await f.launch();
    append(f, done, answer("msg_a1", "final"), compactionRequest("msg_c1"), summary("msg_s1"));
    assert.equal(await f.manager.continueAfterCompaction(done), false);
    const working = await f.launch({ description: "second" });
    append(f, working, answer("msg_a2", "", { toolCallsPending: true }), compactionRequest("msg_c2"), summary("msg_s2"));
    assert.equal(await f.manager.continueAfterCompaction(working), true);
    assert.equal(await f.manager.continueAfterCompaction("ses_not_ours"), true, "other sessions keep the host's default");
    f.host.finishRun(done, "over");
    f.host.emit({ type: "idle", sessionID: done });
    await f.flush();
    assert.equal(f.store.get(done)!.status, "completed");
    assert.equal(await f.manager.continueAfterCompaction(done), true, "a settled task is not ours to decide any more");
  });

  it("a summary is not an answer for the stalled-loop count", async () => {
    const f = evidenceFixture({ stalledLoopLimit: 3 });
    try {
      const id = await f.launch();
      const event = (n: number, more: Partial<HostMessage> = {}) =>
        f.host.emit({ type: "message", sessionID: id, message: { id: `msg_${n}`, role: "assistant", createdAt: n, completedAt: n + 1, toolCallsPending: false, ...more } });
      event(1);
      event(2, { summary: true });
      event(3);
      event(4, { summary: true });
      assert.equal(f.store.get(id)!.status, "running");
      event(5);
      assert.match(f.store.get(id)!.error ?? "", /^stalled_loop: the child repeated 3 answers in a row/);
    } finally {
      f.cleanup();
    }
  });

  it("the host adapter marks the summary", () => {
    const info = (summary?: boolean, role = "assistant") => toMessageInfo({ id: "m", role, summary, time: { created: 1, completed: 2 } });
    assert.equal(info(true).summary, true);
    assert.equal(info(undefined).summary, undefined);
    assert.equal(info(true, "user").summary, undefined);
  });
});

