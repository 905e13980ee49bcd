import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { processForkContext } from "../../src/fork/process-fork-context.ts";
import { assistantMessage, compactionPair, generateHistory, textPart, userMessage, type HostMessage } from "../helpers/synthetic-history.ts";

const ids = (messages: readonly { info: { id: string } }[]) => messages.map((message) => message.info.id);

function exchange(n: number): HostMessage[] {
  const user = userMessage(`msg_${n}0`, `Question ${n}`);
  return [user, assistantMessage(`msg_${n}1`, user.info.id, [textPart(`msg_${n}1`, `prt_${n}`, `Answer ${n}`)])];
}

describe("compaction boundary", () => {
  it("starts the history at the latest compaction request", () => {
    const history = [...exchange(1), ...compactionPair("msg_20", "msg_21", "Summary one"), ...exchange(3), ...compactionPair("msg_40", "msg_41", "Summary two"), ...exchange(5)];
    const { messages, stats } = processForkContext(history);
    assert.deepEqual(ids(messages), ["msg_40", "msg_41", "msg_50", "msg_51"]);
    assert.equal(stats.startedAtCompaction, true);
    assert.equal(stats.droppedMessages, 6);
    assert.equal(messages[1].info.summary, true);
  });

  it("reports no compaction when there is none", () => {
    const { messages, stats } = processForkContext([...exchange(1), ...exchange(2)]);
    assert.equal(messages.length, 4);
    assert.equal(stats.startedAtCompaction, false);
  });

  it("ignores a compaction whose summary never finished (it replaced nothing)", () => {
    const [request, summary] = compactionPair("msg_20", "msg_21", "Half a summ");
    const unfinished = { ...summary, info: { ...summary.info, finish: undefined } };
    const { messages, stats } = processForkContext([...exchange(1), request, unfinished, ...exchange(3)]);
    assert.equal(stats.startedAtCompaction, false);
    assert.deepEqual(ids(messages).slice(0, 2), ["msg_10", "msg_11"]);
  });

  it("ignores a compaction request nothing answered", () => {
    const [request] = compactionPair("msg_20", "msg_21", "unused");
    const { stats } = processForkContext([...exchange(1), request, ...exchange(3)]);
    assert.equal(stats.startedAtCompaction, false);
    assert.equal(stats.keptMessages, 5);
  });

  it("finds the boundary inside a large generated history, without reading what is before it", () => {
    const history = generateHistory({ targetTokens: 60_000, seed: 3, compactionBeforeTurn: 6 });
    const boundary = history.findIndex((message) => message.parts.some((part) => part.type === "compaction"));
    assert.ok(boundary > 0);
    const { messages, stats } = processForkContext(history);
    assert.equal(stats.startedAtCompaction, true);
    assert.equal(messages[0].info.id, history[boundary].info.id);
    assert.equal(stats.droppedMessages, boundary);
  });

  it("lets the cap cut after the compaction: then the history does not start at it", () => {
    const history = generateHistory({ targetTokens: 200_000, seed: 3, compactionBeforeTurn: 2 });
    const { messages, stats } = processForkContext(history, { tokenCap: 10_000 });
    assert.equal(stats.startedAtCompaction, false);
    assert.ok(!messages.some((message) => message.parts.some((part) => part.type === "compaction")));
    assert.equal(messages[0].info.role, "user");
  });
});
