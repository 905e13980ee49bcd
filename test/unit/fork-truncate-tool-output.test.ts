import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { processForkContext } from "../../src/fork/process-fork-context.ts";
import { inputPreview, truncateMessageOutputs, truncateToolPart } from "../../src/fork/truncate-tool-output.ts";
import { assistantMessage, reasoningPart, textPart, toolPart, userMessage, type HostMessage } from "../helpers/synthetic-history.ts";

const LIMIT = 1_500;
const MARKER_WORDS = "output truncated in this forked context";

function readCall(output: string, input: Record<string, unknown> = { filePath: "/repo/src/big.ts" }) {
  return toolPart("msg_2", "prt_tool", { tool: "read", callID: "call_read_1", input, output });
}

function outputOf(message: HostMessage, index: number): string {
  const part = message.parts[index];
  assert.equal(part.type, "tool");
  if (part.type !== "tool") throw new Error("not a tool part");
  return part.state.status === "completed" ? part.state.output : part.state.status === "error" ? part.state.error : "";
}

describe("tool output truncation", () => {
  it("cuts a long completed output to the limit, keeping its head, tool, call id, input and original length", () => {
    const original = "A".repeat(5_000) + "TAIL_MARKER";
    const cut = truncateToolPart(readCall(original), LIMIT);
    assert.ok(cut && cut.state.status === "completed");
    const output = cut.state.output;
    assert.ok(output.length <= LIMIT, `length ${output.length}`);
    assert.ok(output.length >= LIMIT - 2, "the room left by the marker is filled with the head");
    assert.ok(output.startsWith("AAAA"));
    assert.ok(!output.includes("TAIL_MARKER"));
    assert.ok(output.includes(MARKER_WORDS));
    assert.ok(output.includes(`originally ${original.length} characters`));
    assert.ok(output.includes("tool: read"));
    assert.ok(output.includes("call id: call_read_1"));
    assert.ok(output.includes('input: {"filePath":"/repo/src/big.ts"}'));
    assert.equal(cut.callID, "call_read_1", "the call and its result stay one part");
    assert.equal(cut.state.title, "read", "other state fields are kept");
  });

  it("leaves outputs at or under the limit untouched", () => {
    assert.equal(truncateToolPart(readCall("x".repeat(LIMIT)), LIMIT), undefined);
    const message = assistantMessage("msg_2", "msg_1", [readCall("short")]);
    assert.equal(truncateMessageOutputs(message, LIMIT).message, message, "the same object comes back");
  });

  it("cuts the error text of a failed tool too", () => {
    const part = toolPart("msg_2", "prt_tool", { tool: "bash", callID: "call_b", input: { command: "make" }, output: "E".repeat(4_000), status: "error" });
    const cut = truncateToolPart(part, LIMIT);
    assert.ok(cut && cut.state.status === "error");
    assert.ok(cut.state.error.length <= LIMIT && cut.state.error.includes("originally 4000 characters"));
  });

  it("does not touch text, reasoning or any part other than a tool's result", () => {
    const huge = "word ".repeat(2_000);
    const message = assistantMessage("msg_2", "msg_1", [reasoningPart("msg_2", "prt_r", huge), textPart("msg_2", "prt_t", huge), readCall("B".repeat(3_000))]);
    const { message: out, truncated } = truncateMessageOutputs(message, LIMIT);
    assert.equal(truncated, 1);
    assert.equal(out.parts.length, message.parts.length);
    out.parts.forEach((part, index) => {
      if (part.type === "tool") assert.notEqual(part, message.parts[index]);
      else assert.equal(part, message.parts[index], `${part.type} part is the input's own`);
    });
    assert.equal(outputOf(message, 3).length, 3_000, "the input message is not changed");
  });

  it("leaves an output OpenCode already pruned alone (the model sees a placeholder)", () => {
    const part = readCall("C".repeat(9_000));
    if (part.state.status !== "completed") throw new Error("setup");
    const pruned = { ...part, state: { ...part.state, time: { start: 1, end: 2, compacted: 3 } } };
    assert.equal(truncateToolPart(pruned, LIMIT), undefined);
  });

  it("bounds the input preview to 200 characters, even for a huge input", () => {
    const input = { filePath: "/repo/a.ts", content: "z".repeat(1_000_000) };
    const preview = inputPreview(input);
    assert.equal(preview.length, 200);
    assert.ok(preview.startsWith('{"filePath":"/repo/a.ts","content":"zzz'));
    assert.ok(preview.endsWith("…"));
    const output = truncateToolPart(readCall("D".repeat(9_000), input), LIMIT)!.state;
    assert.ok(output.status === "completed" && output.output.length <= LIMIT);
  });

  it("never splits a surrogate pair when cutting", () => {
    const original = "😀".repeat(3_000);
    const cut = truncateToolPart(readCall(original), LIMIT)!;
    assert.ok(cut.state.status === "completed");
    const head = cut.state.output.split("\n[")[0];
    assert.equal(head.length % 2, 0);
    assert.equal(Buffer.from(head, "utf8").toString("utf8"), head, "no lone surrogate");
  });

  it("keeps the output within even a limit smaller than the marker, original length first", () => {
    const cut = truncateToolPart(readCall("E".repeat(9_000)), 80)!;
    assert.ok(cut.state.status === "completed");
    assert.equal(cut.state.output.length, 80);
    assert.ok(cut.state.output.includes("originally 9000"));
  });

  it("acts through processForkContext on every long output of a real-shaped history", () => {
    const history = [
      userMessage("msg_1", "Read the big files"),
      assistantMessage("msg_2", "msg_1", [readCall("F".repeat(9_000)), readCall("short one")], { finish: "tool-calls" }),
      assistantMessage("msg_3", "msg_1", [textPart("msg_3", "prt_t3", "done")]),
    ];
    const { messages, stats } = processForkContext(history, { toolOutputLimit: LIMIT });
    assert.equal(stats.truncatedOutputs, 1);
    assert.ok(outputOf(messages[1], 1).length <= LIMIT);
    assert.ok(outputOf(messages[1], 1).includes("originally 9000 characters"));
    assert.equal(outputOf(messages[1], 2), "short one");
  });
});
