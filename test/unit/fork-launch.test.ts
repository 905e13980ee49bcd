import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { coreFixture, PARENT } from "../helpers/core-fixture.ts";
import { MemoryTaskStore } from "../../src/core/memory-task-store.ts";
import { createForkSupport } from "../../src/fork/fork-preparer.ts";
import type { ForkSupport } from "../../src/core/task-manager.ts";
import { ForkContextTransform } from "../../src/fork/fork-context-transform.ts";
import { forkPromptText } from "../../src/fork/fork-notice.ts";
import type { ForkMessage } from "../../src/fork/fork-types.ts";
import type { Host } from "../../src/host/host.ts";

const LIMITS = { toolOutputLimit: 1500, tokenCap: 100_000 };

function turn(n: number, output: string): ForkMessage[] {
  return [
    { info: { id: `msg_u${n}`, sessionID: "ses_c", role: "user" }, parts: [{ type: "text", text: `question ${n}` }] },
    {
      info: { id: `msg_a${n}`, sessionID: "ses_c", role: "assistant", parentID: `msg_u${n}` },
      parts: [{ type: "tool", callID: `call_${n}`, tool: "bash", state: { status: "completed", input: { command: `cat f${n}` }, output, title: "", metadata: {}, time: { start: 1, end: 2 } } }],
    },
  ];
}

function forkFixture() {
  let forks: ForkSupport | undefined;
  const f = coreFixture({}, new MemoryTaskStore(), {
    forks: {
      fork: (input) => forks!.fork(input),
      firstPrompt: (id, prompt) => forks!.firstPrompt(id, prompt),
    },
  });
  forks = createForkSupport(f.host as unknown as Host, LIMITS);
  f.host.histories.set(PARENT, [...turn(1, "x".repeat(9000)), ...turn(2, "short")]);
  return f;
}

describe("fork launch", () => {
  it("forks at the calling message and tells the child what was cut, before the task prompt", async () => {
    const f = forkFixture();
    const id = await f.launch({ fork: true, prompt: "fix the bug" }, { messageID: "msg_calling" });
    assert.deepEqual(f.host.forks, [{ sessionID: PARENT, messageID: "msg_calling", childID: id }]);
    const text = f.host.promptsTo(id)[0].text;
    assert.match(text, /^<forked-context-notice>/);
    assert.match(text, /1 tool output was cut/);
    assert.match(text, /No earlier message of the parent was left out/);
    assert.ok(text.endsWith("\n\nfix the bug"));
    assert.equal(f.store.get(id)!.isForked, true);
    assert.match(await f.call("background_list", {}), /\(forked\)/);
  });

  it("a forked task can be resumed like any other", async () => {
    const f = forkFixture();
    const id = await f.launch({ fork: true });
    f.host.finishRun(id, "first");
    await f.flush();
    await f.clock.advance(5);
    assert.match(await f.call("background_task", { description: "d", prompt: "more", agent: "general", resume: id }), /Resumed/);
    assert.match(await f.call("background_list", {}), /\(forked\) \(resumed\)/);
  });
});

describe("fork context transform", () => {
  const inherited = [...turn(1, "y".repeat(9000)), ...turn(2, "ok")];
  const marked: ForkMessage = { info: { id: "msg_m", sessionID: "ses_c", role: "user" }, parts: [{ type: "text", text: forkPromptText("preamble", "do it") }] };

  it("processes the inherited messages and leaves the child's own untouched", () => {
    const own: ForkMessage = { info: { id: "msg_own", sessionID: "ses_c", role: "assistant" }, parts: [{ type: "tool", callID: "c9", tool: "read", state: { status: "completed", input: {}, output: "z".repeat(5000) } }] };
    const request = structuredClone([...inherited, marked, own]);
    new ForkContextTransform(LIMITS).apply(request);
    const outputs = request.flatMap((m) => m.parts).filter((p) => p.type === "tool").map((p) => (p.state as { output: string }).output);
    assert.ok(outputs[0].length < 2500, `first output is ${outputs[0].length} chars`);
    assert.match(outputs[0], /9000/);
    assert.equal(outputs.at(-1), "z".repeat(5000));
  });

  it("gives byte-identical leading messages on consecutive requests, across instances (restart)", () => {
    const first = structuredClone([...inherited, marked]);
    new ForkContextTransform(LIMITS).apply(first);
    const reply: ForkMessage = { info: { id: "msg_r", sessionID: "ses_c", role: "assistant" }, parts: [{ type: "text", text: "working" }] };
    const second = structuredClone([...inherited, marked, reply]);
    const transform = new ForkContextTransform(LIMITS);
    transform.apply(second);
    assert.equal(JSON.stringify(second.slice(0, first.length)), JSON.stringify(first));
    const third = structuredClone([...inherited, marked, reply]);
    transform.apply(third);
    assert.equal(JSON.stringify(third), JSON.stringify(second));
  });

  it("holds a child's processed history until told the child settled", () => {
    const transform = new ForkContextTransform(LIMITS);
    transform.apply(structuredClone([...inherited, marked]));
    assert.equal(transform.size(), 1);
    transform.forget("ses_other");
    assert.equal(transform.size(), 1);
    transform.forget("ses_c");
    assert.equal(transform.size(), 0);
  });

  it("leaves sessions that are not forked children alone", () => {
    const request = structuredClone(inherited);
    new ForkContextTransform(LIMITS).apply(request);
    assert.deepEqual(request, inherited);
  });
});
