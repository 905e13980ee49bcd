import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { defaultResponder, type ChatMessage, type MockReply, type MockRequest } from "../harness/mock-model.ts";

const request = (messages: ChatMessage[]): MockRequest => ({ seq: 1, at: 0, body: { model: "m", messages }, isTitle: false, aborted: false });
const answer = (...messages: ChatMessage[]): MockReply => defaultResponder(request(messages));
const user = (content: string): ChatMessage => ({ role: "user", content });
const NOTICE = '<background-task-notification task_id="bg_1" status="completed">\nBackground task bg_1 "x" completed after 1s.\nResult:\nDONE\n</background-task-notification>';
const RUN_NOTICE = '<automation-run automation="au_1" run="1" status="completed">\nAutomation "x" run #1 completed:\nfine\n</automation-run>';
const CALL = 'CALL background_output {"task_id":"bg_2"}';
const called = { role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: { name: "background_output", arguments: "{}" } }] } satisfies ChatMessage;
const wrapped = (text: string) => `<system-reminder>\nThe user sent the following message:\n${text}\n\nPlease address this message and continue with your tasks.\n</system-reminder>`;

describe("mock model: which user message leads", () => {
  it("a prompt with directives keeps its turn when a plugin notice lands behind it unanswered", () => {
    for (const notice of [NOTICE, RUN_NOTICE, wrapped(NOTICE)]) {
      const reply = answer(user("REPLY earlier"), { role: "assistant", content: "earlier" }, user(CALL), user(notice));
      assert.deepEqual("toolCalls" in reply && reply.toolCalls, [{ name: "background_output", args: { task_id: "bg_2" } }]);
    }
    const twoNotices = answer(user(NOTICE), user(CALL), user(RUN_NOTICE), user(NOTICE));
    assert.ok("toolCalls" in twoNotices);
  });

  it("the continuation of that turn answers DONE with the prompt's own directives (usage, delay)", () => {
    const reply = answer(user(`${CALL}\nUSAGE {"input":7,"output":3}\nSLOW 5`), user(NOTICE), called, { role: "tool", tool_call_id: "c1", content: "out" });
    assert.deepEqual(reply, { delayMs: 5, usage: { input: 7, output: 3 }, text: "DONE\nout" });
  });

  it("a notice after an answered prompt is answered as itself (the echo), as before", () => {
    const reply = answer(user(CALL), called, { role: "tool", tool_call_id: "c1", content: "out" }, { role: "assistant", content: "DONE\nout" }, user(NOTICE));
    assert.deepEqual(reply, { text: "ok: <background-task-notification task_id=\"b" });
    const afterTools = answer(user(CALL), called, { role: "tool", tool_call_id: "c1", content: "out" }, user(NOTICE));
    assert.ok("text" in afterTools && afterTools.text?.startsWith("ok: <background-task-notification"), "tool results then a notice: unchanged");
  });

  it("only a notice gives way: a plain prompt behind a CALL, or a notice behind plain words, leads", () => {
    assert.deepEqual(answer(user(CALL), user("just words")), { text: "ok: just words" });
    assert.deepEqual(answer(user("plain words"), user(NOTICE)), { text: "ok: <background-task-notification task_id=\"b" });
    assert.deepEqual(answer(user("REPLY said in a notice?"), user(`${NOTICE}\nREPLY from the notice`)), { text: "from the notice" }, "a notice's own directives still count");
  });
});
