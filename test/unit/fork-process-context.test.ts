import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { processForkContext } from "../../src/fork/process-fork-context.ts";
import { countMessageTokens } from "../../src/fork/message-tokens.ts";
import type { ForkMessage } from "../../src/fork/fork-types.ts";
import { generateHistory, type HostMessage } from "../helpers/synthetic-history.ts";

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

/** The history behind a proxy that records which messages were read. */
function watched(history: HostMessage[]): { messages: HostMessage[]; read: Set<number> } {
  const read = new Set<number>();
  const messages = new Proxy(history, {
    get(target, key, receiver) {
      if (typeof key === "string" && /^\d+$/.test(key)) read.add(Number(key));
      return Reflect.get(target, key, receiver);
    },
  });
  return { messages, read };
}

describe("processForkContext", () => {
  const history = generateHistory({ targetTokens: 300_000, seed: 11 });

  it("is deterministic: the same input, or a copy of it, gives byte-identical output", () => {
    const first = JSON.stringify(processForkContext(history, { tokenCap: 50_000 }));
    const again = JSON.stringify(processForkContext(history, { tokenCap: 50_000 }));
    const fromCopy = JSON.stringify(processForkContext(structuredClone(history), { tokenCap: 50_000 }));
    assert.equal(again, first);
    assert.equal(fromCopy, first);
  });

  it("never mutates its input", () => {
    const input = deepFreeze(structuredClone(history));
    const before = JSON.stringify(input);
    const { stats } = processForkContext(input, { tokenCap: 50_000 }); // a write to a frozen object throws here
    assert.ok(stats.truncatedOutputs > 0, "there was something to change");
    assert.equal(JSON.stringify(input), before);
  });

  it("keeps unknown fields of the messages and parts it copies", () => {
    const tagged = history.map((message) => ({ ...message, extra: "kept", parts: message.parts.map((part) => ({ ...part, custom: 1 })) }));
    const { messages } = processForkContext(tagged, { tokenCap: 50_000 });
    assert.ok(messages.every((message) => message.extra === "kept" && message.parts.every((part) => part.custom === 1)));
    assert.ok(messages.every((message) => typeof message.info.time === "object"));
  });

  it("processes a 1M-token generated history to within the cap with no long tool output", () => {
    const large = generateHistory({ targetTokens: 1_000_000, seed: 5 });
    const { messages, stats } = processForkContext(large);
    assert.ok(stats.tokens <= 100_000 && stats.tokens > 90_000, `${stats.tokens}`);
    assert.equal(messages.reduce((sum, message) => sum + countMessageTokens(message as ForkMessage), 0), stats.tokens);
    for (const part of messages.flatMap((message) => message.parts)) {
      if (part.type === "tool" && part.state.status === "completed") assert.ok(part.state.output.length <= 1_500);
    }
  });

  it("reads only the messages near the cap, however long the history", () => {
    const large = generateHistory({ targetTokens: 2_000_000, seed: 6 });
    const { messages, read } = watched(large);
    const { stats } = processForkContext(messages, { tokenCap: 20_000 });
    assert.ok(read.size <= stats.keptMessages + 8, `read ${read.size} of ${large.length} to keep ${stats.keptMessages}`);
    assert.ok(Math.min(...read) > large.length - stats.keptMessages - 8);
  });

  it("returns nothing for an empty history", () => {
    assert.deepEqual(processForkContext([]), {
      messages: [],
      stats: { keptMessages: 0, droppedMessages: 0, truncatedOutputs: 0, tokens: 0, startedAtCompaction: false },
    });
  });
});
