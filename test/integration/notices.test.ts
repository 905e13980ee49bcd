/**
 * Notices a person can read (issue 23), on the real host: a settled task's notice is one user
 * message in the parent with two text parts: a plain line (what the TUI shows) and a synthetic
 * part holding the tagged payload with its delivery key (hidden in the TUI, sent to the model).
 * A crash between claim and send: test/integration/notify-crash.test.ts.
 */
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { startStack, launchTask, waitUntil, type Stack } from "../harness/plugin-stack.ts";
import { lastUserText } from "../harness/mock-model.ts";

type Part = { type: string; text?: string; synthetic?: boolean };

describe("a notice on the real host: a line for the person, the payload for the model", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    await stack?.stop();
  });

  /** The parent's user message holding task `id`'s notice, read back through the SDK with its parts. */
  const noticeOf = (parent: string, id: string) =>
    waitUntil(async () => (await stack.messages(parent)).find((m) => m.info.role === "user" && JSON.stringify(m.parts).includes(`key=\\"${id}:0\\"`)),
      { timeoutMs: 20_000, what: `the notice of ${id} in the parent` });

  function split(parts: Part[]) {
    const texts = parts.filter((p) => p.type === "text");
    return { visible: texts.filter((p) => !p.synthetic).map((p) => p.text ?? ""), synthetic: texts.filter((p) => p.synthetic).map((p) => p.text ?? "") };
  }

  it("a completed task: the visible part is one plain line, the synthetic part the full payload, and the model's next request holds the payload", async () => {
    const parent = await stack.newSession("parent: notice");
    const id = await launchTask(stack, parent, { description: "find flaky tests", prompt: "REPLY Child A: the test suite has 3 flaky tests" });
    const notice = await noticeOf(parent, id);
    const { visible, synthetic } = split(notice.parts);
    assert.equal(visible.length, 1, JSON.stringify(notice.parts));
    assert.match(visible[0]!, /^✓ find flaky tests · \d+m?s · Child A: the test suite has 3 flaky tests$/);
    assert.doesNotMatch(visible[0]!, /</, "no tag for the person");
    assert.doesNotMatch(visible[0]!, /key="/, "no delivery key for the person");
    assert.equal(synthetic.length, 1);
    const payload = synthetic[0]!;
    assert.ok(payload.startsWith(`<background-task-notification key="${id}:0" task_id="${id}" status="completed">`), payload);
    assert.match(payload, /Result:\nChild A: the test suite has 3 flaky tests\n/);
    assert.ok(payload.trimEnd().endsWith("</background-task-notification>"), payload);

    // The notice woke the parent: the model's request carries the payload, key and all.
    const woken = await waitUntil(() => stack.mock.requests().find((r) => lastUserText(r).includes(`key="${id}:0"`)), { timeoutMs: 20_000, what: "the parent's turn on the notice" });
    assert.ok(lastUserText(woken).includes(payload), lastUserText(woken));
    assert.equal((await stack.notifications(parent)).filter((n) => n.includes(`key="${id}:0"`)).length, 1, "sent once");
  });

  it("a failed task: ✗, its duration and the error, still plain", async () => {
    const parent = await stack.newSession("parent: failed notice");
    const id = await launchTask(stack, parent, { description: "doomed probe", prompt: "FAIL 400 the model refused the probe" });
    const { visible, synthetic } = split((await noticeOf(parent, id)).parts);
    assert.match(visible[0] ?? "", /^✗ doomed probe · \d+m?s · .*the model refused the probe/);
    assert.doesNotMatch(visible[0]!, /<|key="/);
    assert.match(synthetic[0] ?? "", new RegExp(`key="${id}:0" task_id="${id}" status="error"[^]*Error: .*the model refused the probe`));
  });
});
