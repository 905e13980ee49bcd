import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { processForkContext } from "../../src/fork/process-fork-context.ts";
import { countMessageTokens } from "../../src/fork/message-tokens.ts";
import { truncateMessageOutputs } from "../../src/fork/truncate-tool-output.ts";
import type { ForkMessage } from "../../src/fork/fork-types.ts";
import { assistantMessage, generateHistory, textPart, toolPart, userMessage, type HostMessage } from "../helpers/synthetic-history.ts";

const LIMIT = 1_500;

/** What a message costs once its outputs are cut: the yardstick the cap is checked against. */
function cost(message: ForkMessage): number {
  return countMessageTokens(truncateMessageOutputs(message, LIMIT).message);
}

function total(messages: readonly ForkMessage[]): number {
  return messages.reduce((sum, message) => sum + cost(message), 0);
}

const ids = (messages: readonly ForkMessage[]) => messages.map((message) => message.info.id);

/** Turn n: a question, then one assistant message per entry of `answers` (text of that many words). */
function turn(n: number, answers: number[]): HostMessage[] {
  const user = userMessage(`msg_${n}00`, `Question ${n}?`);
  return [user, ...answers.map((words, i) => assistantMessage(`msg_${n}0${i + 1}`, user.info.id, [textPart(`msg_${n}0${i + 1}`, `prt_${n}_${i}`, "word ".repeat(words))]))];
}

describe("token cap", () => {
  const history = generateHistory({ targetTokens: 200_000, seed: 7 });

  for (const tokenCap of [5_000, 20_000, 60_000]) {
    it(`keeps at most ${tokenCap} tokens, and says exactly how many`, () => {
      const { messages, stats } = processForkContext(history, { tokenCap, toolOutputLimit: LIMIT });
      assert.ok(stats.tokens <= tokenCap, `${stats.tokens} > ${tokenCap}`);
      assert.equal(total(messages), stats.tokens, "the stated count is the real count of what is kept");
      assert.ok(stats.tokens > tokenCap * 0.8, `the cap is used, not wasted: ${stats.tokens}`);
      assert.equal(stats.keptMessages + stats.droppedMessages, history.length);
      assert.ok(stats.droppedMessages > 0);
    });
  }

  it("drops the oldest messages first: what is kept is the newest, in order", () => {
    const { messages } = processForkContext(history, { tokenCap: 20_000, toolOutputLimit: LIMIT });
    const newest = history.slice(history.length - (messages.length - 1));
    assert.deepEqual(ids(messages.slice(1)), ids(newest), "all but the opening user message are the newest run");
    const opening = messages[0];
    assert.equal(opening.info.role, "user");
    const nextOldest = history[history.length - messages.length];
    if (nextOldest.info.id !== opening.info.id) {
      // A partly kept turn: its question is kept with the answers that fit, the older answers go.
      assert.equal((messages[1].info as ForkMessage["info"]).parentID, opening.info.id);
      assert.ok(cost(nextOldest) > 20_000 - total(messages), "the next older message would not have fitted");
    } else {
      // Whole turns: the next older turn's question with its newest answer would not have fitted.
      const newestOlder = history.length - messages.length - 1;
      const question = history.slice(0, newestOlder).findLast((message) => message.info.role === "user")!;
      assert.ok(cost(history[newestOlder]) + cost(question) > 20_000 - total(messages));
    }
  });

  it("always starts the kept history at a user message", () => {
    for (const tokenCap of [1_000, 3_000, 7_000, 15_000, 40_000]) {
      const { messages } = processForkContext(history, { tokenCap, toolOutputLimit: LIMIT });
      assert.ok(messages.length > 0, `cap ${tokenCap} kept something`);
      assert.equal(messages[0].info.role, "user", `cap ${tokenCap}`);
    }
  });

  it("keeps whole turns while they fit, then the newest answers of the turn that does not", () => {
    const small = [...turn(1, [50]), ...turn(2, [400, 400, 400])];
    const all = total(small);
    const turnTwo = small.slice(2);
    const cap = total(turnTwo) - cost(turnTwo[1]) + 5; // room for turn 2 without its first answer
    const { messages, stats } = processForkContext(small, { tokenCap: cap });
    assert.deepEqual(ids(messages), ["msg_200", "msg_202", "msg_203"]);
    assert.equal(stats.droppedMessages, 3);
    assert.deepEqual(ids(processForkContext(small, { tokenCap: all }).messages), ids(small), "everything fits at its own size");
    assert.deepEqual(ids(processForkContext(small, { tokenCap: all - 1 }).messages), ids(turnTwo), "one token short: turn 1 goes whole");
  });

  it("never keeps a question whose answers were all dropped", () => {
    const small = [...turn(1, [20]), ...turn(2, [3_000])];
    const { messages } = processForkContext(small, { tokenCap: 1_000 });
    assert.deepEqual(messages, [], "the newest answer alone is over the cap, so nothing older can be kept");
  });

  it("drops assistant messages that have no user message before them", () => {
    const orphan = assistantMessage("msg_000", "msg_none", [textPart("msg_000", "prt_o", "left over")]);
    const { messages, stats } = processForkContext([orphan, ...turn(1, [10])]);
    assert.deepEqual(ids(messages), ["msg_100", "msg_101"]);
    assert.equal(stats.droppedMessages, 1);
  });

  it("keeps a tool call with its result, and cut outputs within the limit", () => {
    const { messages } = processForkContext(history, { tokenCap: 30_000, toolOutputLimit: LIMIT });
    let tools = 0;
    for (const part of messages.flatMap((message) => message.parts)) {
      if (part.type !== "tool") continue;
      tools++;
      assert.ok(part.callID && part.state.status === "completed");
      assert.ok(part.state.output.length <= LIMIT);
    }
    assert.ok(tools > 5);
  });

  it("leaves room for the reserve: history + reserve never exceeds the cap", () => {
    for (const reserveTokens of [0, 1_000, 9_000, 19_999, 20_000, 50_000]) {
      const { stats } = processForkContext(history, { tokenCap: 20_000, reserveTokens, toolOutputLimit: LIMIT });
      assert.ok(stats.tokens + reserveTokens <= 20_000 || stats.tokens === 0, `reserve ${reserveTokens}: ${stats.tokens}`);
    }
    assert.equal(processForkContext(history, { tokenCap: 20_000, reserveTokens: 20_000 }).stats.keptMessages, 0);
  });

  it("counts a huge text as over the cap without keeping it", () => {
    const huge = userMessage("msg_900", "lorem ipsum ".repeat(500_000));
    const { messages } = processForkContext([...turn(1, [10]), huge], { tokenCap: 10_000 });
    assert.deepEqual(messages, []);
  });

  it("rejects limits that are not positive integers", () => {
    assert.throws(() => processForkContext([], { tokenCap: 0 }), RangeError);
    assert.throws(() => processForkContext([], { toolOutputLimit: 1.5 }), RangeError);
    assert.throws(() => processForkContext([], { reserveTokens: -1 }), RangeError);
    assert.throws(() => processForkContext([], { tokenCap: Number.NaN }), RangeError);
  });
});

describe("tool parts in a real-shaped message", () => {
  it("counts the call, input and result of every tool part", () => {
    const output = "line of output\n".repeat(50);
    const withTool = assistantMessage("msg_2", "msg_1", [toolPart("msg_2", "prt_t", { tool: "bash", callID: "call_1", input: { command: "ls" }, output })]);
    const without = assistantMessage("msg_2", "msg_1", []);
    assert.ok(countMessageTokens(withTool) - countMessageTokens(without) > 100);
  });
});
