/**
 * Fork processing on histories captured from a real `opencode serve` (scripts/capture-fork-fixtures.ts
 * wrote them; see docs/host-notes.md, "Real histories"). The synthetic histories of the other fork
 * tests are shaped after the SDK's types; these are what the host really stores.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { processForkContext } from "../../src/fork/process-fork-context.ts";
import { countMessageTokens, partCost } from "../../src/fork/message-tokens.ts";
import type { Part, ToolPart } from "@opencode-ai/sdk";
import type { HostMessage } from "../helpers/synthetic-history.ts";

type Fixture = { capturedWith: string; messages: HostMessage[]; modelView?: HostMessage[] };

function fixtureText(name: string): string {
  return readFileSync(new URL(`../fixtures/histories/${name}.json`, import.meta.url), "utf8");
}

function load(name: "tool-outputs" | "compacted"): Fixture {
  return JSON.parse(fixtureText(name)) as Fixture;
}

const BIG = 9_000;
const LIMIT = 1_500;

const allParts = (messages: readonly HostMessage[]): Part[] => messages.flatMap((message) => message.parts);
const ids = (messages: readonly HostMessage[]): string[] => messages.map((message) => message.info.id);
const partTypes = (messages: readonly HostMessage[]): string[] => [...new Set(allParts(messages).map((part) => part.type))].sort();
const toolParts = (messages: readonly HostMessage[]): ToolPart[] =>
  allParts(messages).filter((part): part is ToolPart => part.type === "tool");

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

/**
 * The kept history is the newest messages, except that a turn cut in the middle keeps its user
 * message and drops its oldest assistant messages: everything after the first message is a suffix
 * of the input, and the first is a user message (the one the next message answers, if that one is
 * an assistant message).
 */
function assertNewestKept(messages: readonly HostMessage[], input: readonly HostMessage[], what: string): void {
  const [first, ...rest] = messages;
  assert.ok(first, `${what}: something is kept`);
  assert.equal(first.info.role, "user", `${what}: starts at a user message`);
  assert.deepEqual(ids(rest), ids(input).slice(input.length - rest.length), `${what}: the newest are kept`);
  if (rest[0]?.info.role === "assistant") assert.equal(rest[0].info.parentID, first.info.id, `${what}: a cut turn keeps its own user message`);
}

/** The index of the compaction request: a user message with a compaction part. */
function compactionIndex(messages: readonly HostMessage[]): number {
  return messages.findIndex((message) => message.info.role === "user" && message.parts.some((part) => part.type === "compaction"));
}

function tailStartId(request: HostMessage): string | undefined {
  // The SDK's CompactionPart type has no tail_start_id; the host stores one.
  const part = request.parts.find((p) => p.type === "compaction") as { tail_start_id?: unknown } | undefined;
  return typeof part?.tail_start_id === "string" ? part.tail_start_id : undefined;
}

describe("fork processing on histories captured from the real host", () => {
  const tools = load("tool-outputs");
  const compacted = load("compacted");

  describe("what the host stores", () => {
    it("holds only the part types OpenCode produced, each one the token count knows", () => {
      assert.deepEqual(partTypes(tools.messages), ["step-finish", "step-start", "text", "tool"]);
      assert.deepEqual(partTypes(compacted.messages), ["compaction", "step-finish", "step-start", "text", "tool"]);
      assert.deepEqual(partTypes(compacted.modelView!), ["compaction", "step-finish", "step-start", "text", "tool"]);
      for (const part of allParts([...tools.messages, ...compacted.messages])) {
        // An unknown kind would be counted as its whole JSON: none of the real ones is.
        assert.notEqual(partCost(part, Infinity)!.text, JSON.stringify(part), `part type ${part.type}`);
      }
    });

    it("frames each assistant message in step-start and step-finish, with tool results in state.output or state.error", () => {
      for (const message of [...tools.messages, ...compacted.messages]) {
        const types = message.parts.map((part) => part.type);
        if (message.info.role === "user") {
          assert.ok(types.every((type) => type === "text" || type === "compaction"), types.join(","));
          continue;
        }
        assert.equal(types[0], "step-start");
        assert.equal(types.at(-1), "step-finish");
      }
      const states = toolParts(tools.messages).map((part) => `${part.tool}:${part.state.status}`);
      assert.deepEqual(states, ["bash:completed", "bash:completed", "read:completed", "read:error"]);
      const [big] = toolParts(tools.messages);
      assert.ok(big.state.status === "completed");
      assert.equal(big.state.output.length, BIG);
      assert.equal(big.state.metadata.output, big.state.output, "bash keeps a second copy of its output in metadata.output");
    });
  });

  describe("tool outputs", () => {
    const input = tools.messages;
    const result = processForkContext(input);
    const big = toolParts(input).find((part) => part.state.status === "completed" && part.state.output.length === BIG)!;

    it("cuts the 9,000-character bash output, naming its original length, tool, call id and input", () => {
      assert.ok(big, "the fixture holds the big output");
      assert.equal(result.stats.truncatedOutputs, 1);
      const cut = toolParts(result.messages).find((part) => part.id === big.id)!;
      assert.ok(cut.state.status === "completed");
      const output = cut.state.output;
      assert.ok(output.length <= LIMIT, `cut output is ${output.length} characters`);
      assert.ok(output.startsWith("x".repeat(100)), "the head of the output is kept");
      assert.match(output, new RegExp(`originally ${BIG} characters`));
      assert.ok(output.includes("tool: bash"));
      assert.ok(output.includes(`call id: ${big.callID}`));
      assert.ok(output.includes(`input: {"command":"head -c ${BIG} /dev/zero`), "the input preview");
      assert.equal(cut.callID, big.callID);
      assert.deepEqual(cut.state.input, big.state.input);
      // Everything but the output is carried along, metadata.output's full copy included: OpenCode
      // sends only state.output to the model (docs/host-notes.md).
      assert.ok(big.state.status === "completed");
      assert.equal(cut.state.title, big.state.title);
      assert.deepEqual(cut.state.metadata, big.state.metadata);
      assert.equal(big.state.output.length, BIG, "the input was not changed");
    });

    it("leaves the short outputs, the tool error and every text as they were", () => {
      assert.equal(result.stats.keptMessages, input.length);
      assert.equal(result.stats.startedAtCompaction, false);
      result.messages.forEach((message, index) => {
        const original = input[index];
        const holdsBig = original.parts.includes(big);
        if (!holdsBig) return assert.equal(message, original, `message ${index} is the input's own object`);
        message.parts.forEach((part, p) => (part.id === big.id ? assert.notEqual(part, original.parts[p]) : assert.equal(part, original.parts[p])));
      });
      const error = toolParts(result.messages).find((part) => part.state.status === "error")!;
      assert.ok(error.state.status === "error");
      assert.match(error.state.error, /^File not found: .*missing\.txt$/);
      const texts = allParts(result.messages).flatMap((part) => (part.type === "text" ? [part.text] : []));
      assert.deepEqual(texts, allParts(input).flatMap((part) => (part.type === "text" ? [part.text] : [])));
    });

    it("drops the oldest messages first under a small token cap and always starts at a user message", () => {
      let previous = input.length;
      for (const tokenCap of [1_000, 400, 300, 200, 100, 50]) {
        const { messages, stats } = processForkContext(input, { tokenCap });
        assert.ok(stats.tokens <= tokenCap, `cap ${tokenCap}: ${stats.tokens} tokens`);
        assert.equal(stats.tokens, messages.reduce((sum, message) => sum + countMessageTokens(message), 0));
        assertNewestKept(messages, input, `cap ${tokenCap}`);
        assert.equal(stats.droppedMessages, input.length - messages.length);
        assert.ok(messages.length <= previous, `cap ${tokenCap} keeps no more than a larger cap`);
        previous = messages.length;
      }
      assert.ok(previous < input.length - 4, "the smallest caps dropped whole turns");
      // At 400 tokens the turn with the big output is cut in the middle: its user message and its
      // final answer stay, the older step that holds the tool call goes.
      const bigTurn = input.findIndex((message) => message.parts.includes(big));
      const tight = ids(processForkContext(input, { tokenCap: 400 }).messages);
      assert.deepEqual(tight.slice(0, 2), [input[bigTurn - 1].info.id, input[bigTurn + 1].info.id]);
      assert.ok(!tight.includes(input[bigTurn].info.id), "the message with the big output went first");
    });
  });

  describe("compaction", () => {
    const input = compacted.messages;
    const at = compactionIndex(input);

    it("has a manual compaction request answered by a finished summary", () => {
      assert.ok(at > 0, "the fixture holds a compaction request after some turns");
      const [request, summary] = [input[at], input[at + 1]];
      assert.deepEqual(request.parts.map((part) => part.type), ["compaction"]);
      assert.ok(summary.info.role === "assistant");
      assert.equal(summary.info.summary, true);
      assert.equal(summary.info.mode, "compaction");
      assert.equal(summary.info.parentID, request.info.id);
      assert.equal(summary.info.finish, "stop");
      assert.ok(at + 2 < input.length, "turns follow the compaction");
    });

    it("starts the kept history at the compaction and keeps nothing before it", () => {
      const { messages, stats } = processForkContext(input);
      assert.equal(stats.startedAtCompaction, true);
      assert.deepEqual(ids(messages), ids(input.slice(at)));
      assert.equal(stats.droppedMessages, at);
      assert.equal(stats.truncatedOutputs, 0, "the 9,000-character output was before the compaction");
      assert.ok(!toolParts(messages).some((part) => part.state.status === "completed" && part.state.output.length >= BIG));
    });

    it("on the messages the model request carries, starts at the compaction and keeps OpenCode's tail after it", () => {
      const view = compacted.modelView!;
      const tail = tailStartId(input[at]);
      assert.ok(tail, "the compaction part names where the kept tail starts");
      const tailIndex = ids(input).indexOf(tail);
      assert.ok(tailIndex >= 0 && tailIndex < at, "the tail starts before the compaction request");
      // OpenCode sends the request and its summary first, then the tail, then what came after.
      const expected = [...input.slice(at, at + 2), ...input.slice(tailIndex, at), ...input.slice(at + 2, -1)];
      assert.deepEqual(ids(view), ids(expected));

      const { messages, stats } = processForkContext(view);
      assert.equal(stats.startedAtCompaction, true);
      assert.equal(messages[0].info.id, input[at].info.id);
      assert.deepEqual(ids(messages), ids(view), "the tail stays");
    });

    it("with a cap too small for the summary, starts at the newest user messages instead", () => {
      const { messages, stats } = processForkContext(input, { tokenCap: 150 });
      assert.equal(stats.startedAtCompaction, false);
      assertNewestKept(messages, input, "cap 150");
      assert.ok(messages.length < input.length - at, "the compaction request and summary are dropped");
    });
  });

  it("is deterministic and leaves its input alone: the same bytes twice, and from a fresh parse", () => {
    for (const [name, pick] of [
      ["tool-outputs", (f: Fixture) => f.messages],
      ["compacted", (f: Fixture) => f.messages],
      ["compacted", (f: Fixture) => f.modelView!],
    ] as const) {
      for (const tokenCap of [100_000, 300]) {
        const frozen = deepFreeze(pick(load(name)));
        const first = JSON.stringify(processForkContext(frozen, { tokenCap })); // a write to the frozen input throws
        const again = JSON.stringify(processForkContext(frozen, { tokenCap }));
        const fresh = JSON.stringify(processForkContext(pick(JSON.parse(fixtureText(name)) as Fixture), { tokenCap }));
        assert.equal(again, first, `${name} cap ${tokenCap}`);
        assert.equal(fresh, first, `${name} cap ${tokenCap}`);
        assert.equal(JSON.stringify(frozen), JSON.stringify(pick(load(name))), "the input is unchanged");
      }
    }
  });
});
