import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { buildForkPreamble, maxForkPreambleTokens } from "../../src/fork/fork-preamble.ts";
import type { ForkContextStats } from "../../src/fork/process-fork-context.ts";
import { countTextTokens } from "../../src/fork/token-count.ts";

const stats = (over: Partial<ForkContextStats> = {}): ForkContextStats => ({
  keptMessages: 40, droppedMessages: 12, truncatedOutputs: 3, tokens: 90_000, startedAtCompaction: false, ...over,
});

describe("fork preamble", () => {
  it("says the context is inherited and may be truncated, with the counts, and to re-read files", () => {
    const text = buildForkPreamble(stats());
    assert.match(text, /forked from a parent session/);
    assert.match(text, /inherited/);
    assert.match(text, /truncated/);
    assert.match(text, /12 earlier messages of the parent were left out/);
    assert.match(text, /3 tool outputs were cut/);
    assert.match(text, /re-read the file/);
    assert.doesNotMatch(text, /compaction summary/);
  });

  it("uses the singular for one, and says so when nothing was cut or dropped", () => {
    assert.match(buildForkPreamble(stats({ droppedMessages: 1, truncatedOutputs: 1 })), /1 earlier message of the parent was left out[^]*1 tool output was cut/);
    const none = buildForkPreamble(stats({ droppedMessages: 0, truncatedOutputs: 0 }));
    assert.match(none, /No earlier message of the parent was left out/);
    assert.match(none, /No tool output was cut/);
  });

  it("mentions the compaction when the history starts at one", () => {
    assert.match(buildForkPreamble(stats({ startedAtCompaction: true })), /latest compaction summary/);
  });

  it("is deterministic", () => {
    assert.equal(buildForkPreamble(stats()), buildForkPreamble(stats()));
  });

  it("never takes more tokens than maxForkPreambleTokens says", () => {
    const max = maxForkPreambleTokens();
    for (const dropped of [0, 1, 7, 123, 45_678, 1_234_567])
      for (const startedAtCompaction of [false, true]) {
        const tokens = countTextTokens(buildForkPreamble(stats({ droppedMessages: dropped, truncatedOutputs: dropped, startedAtCompaction })));
        assert.ok(tokens <= max, `${tokens} > ${max}`);
      }
    assert.ok(max < 300, `a preamble should stay short: ${max}`);
  });
});
