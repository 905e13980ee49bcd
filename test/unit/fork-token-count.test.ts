import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { boundedJson } from "../../src/fork/bounded-json.ts";
import { countTextTokens, countTokensWithin } from "../../src/fork/token-count.ts";
import { countMessageTokens, countMessageTokensWithin } from "../../src/fork/message-tokens.ts";
import { generateHistory } from "../helpers/synthetic-history.ts";

describe("bounded JSON", () => {
  const values: unknown[] = [
    { filePath: "/a.ts", offset: 10, flags: [true, null, "x"], nested: { deep: [1, { e: "é\n\"q\"" }] } },
    [undefined, () => 1, "s"],
    { skip: undefined, keep: 0 },
    "plain",
    42,
    null,
  ];

  it("equals JSON.stringify when it fits", () => {
    for (const value of values) assert.deepEqual(boundedJson(value, 10_000), { text: JSON.stringify(value), complete: true });
  });

  it("stops at the limit and says it is incomplete", () => {
    const value = { content: "x".repeat(1_000_000), after: "never written" };
    const json = boundedJson(value, 50);
    assert.equal(json.complete, false);
    assert.equal(json.text, JSON.stringify(value).slice(0, 50));
  });
});

describe("token counting", () => {
  it("counts text containing special-token strings as plain text", () => {
    assert.ok(countTextTokens("a <|endoftext|> b") > 3);
  });

  it("gives the exact count within the limit and undefined over it", () => {
    const text = "The quick brown fox jumps over the lazy dog. ".repeat(400);
    const exact = countTextTokens(text);
    assert.equal(countTokensWithin(text, exact), exact);
    assert.equal(countTokensWithin(text, exact + 1_000_000), exact);
    assert.equal(countTokensWithin(text, exact - 1), undefined);
    assert.equal(countTokensWithin(text, -1), undefined);
    assert.equal(countTokensWithin("", 0), 0);
  });

  it("rejects a text far longer than the limit could hold without tokenizing it", () => {
    const huge = "abc ".repeat(5_000_000);
    const started = performance.now();
    assert.equal(countTokensWithin(huge, 1_000), undefined);
    assert.ok(performance.now() - started < 50, "no full tokenization of 20 MB");
  });

  it("counts a message the same, bounded or not, when it fits", () => {
    for (const message of generateHistory({ targetTokens: 40_000, seed: 2 })) {
      const full = countMessageTokens(message);
      assert.equal(countMessageTokensWithin(message, full), full);
      assert.equal(countMessageTokensWithin(message, full - 1), undefined);
    }
  });
});
