import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { unifiedDiff } from "../../src/triggers/line-diff.ts";

/** Applies a unified diff to the old lines; throws if a context or removed line does not match. */
function applyDiff(before: string[], diff: string): string[] {
  const lines = diff.split("\n").slice(2, -1); // past the two header lines, before the final newline
  const out: string[] = [];
  let at = 0; // next old line not yet copied
  for (const line of lines) {
    const header = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$/.exec(line);
    if (header) {
      const len = header[2] === undefined ? 1 : Number(header[2]);
      const start = len === 0 ? Number(header[1]) : Number(header[1]) - 1;
      assert.ok(start >= at, "hunks are in order and do not overlap");
      out.push(...before.slice(at, start));
      at = start;
      assert.equal(Number(header[3]) - (Number(header[4] ?? 1) === 0 ? 0 : 1), out.length, "the new start matches");
    } else if (line.startsWith("+")) out.push(line.slice(1));
    else {
      assert.equal(before[at], line.slice(1), `old line ${at + 1} matches`);
      if (line.startsWith(" ")) out.push(before[at]!);
      at++;
    }
  }
  return [...out, ...before.slice(at)];
}

const text = (lines: string[]) => lines.map((l) => `${l}\n`).join("");

/** A small deterministic generator, so a failure can be replayed. */
function random(seed: number): () => number {
  return () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

describe("unifiedDiff", () => {
  it("writes hunks as GNU diff -u does, with three lines of context", () => {
    const before = text("abcdefghijk".split(""));
    const after = text("aBcdefghijkl".split(""));
    assert.deepEqual(unifiedDiff(before, after), {
      text: "--- previous output\n+++ new output\n@@ -1,5 +1,5 @@\n a\n-b\n+B\n c\n d\n e\n@@ -9,3 +9,4 @@\n i\n j\n k\n+l\n",
      added: 2,
      removed: 1,
    });
    assert.equal(unifiedDiff("", "x\n").text, "--- previous output\n+++ new output\n@@ -0,0 +1 @@\n+x\n");
    assert.equal(unifiedDiff("same\n", "same\n").text, "");
  });

  it("rebuilds the new text from the old for random edits, and counts minimal changes", () => {
    const next = random(42);
    for (let round = 0; round < 300; round++) {
      const before = Array.from({ length: Math.floor(next() * 40) }, () => `l${Math.floor(next() * 8)}`);
      const after = before.flatMap((line) => (next() < 0.2 ? [] : next() < 0.2 ? [line, `n${Math.floor(next() * 8)}`] : [line]));
      const diff = unifiedDiff(text(before), text(after));
      assert.deepEqual(applyDiff(before, diff.text), after, `round ${round}`);
      assert.equal(before.length - diff.removed, after.length - diff.added, "unchanged lines agree");
    }
  });

  it("stays correct and quick when the changed middle is too big for a minimal diff", () => {
    const before = Array.from({ length: 3_000 }, (_, i) => `old ${i}`);
    const after = Array.from({ length: 3_000 }, (_, i) => (i % 2 ? `old ${i}` : `new ${i}`));
    const started = performance.now();
    const diff = unifiedDiff(text(["head", ...before, "tail"]), text(["head", ...after, "tail"]));
    const ms = performance.now() - started;
    assert.deepEqual(applyDiff(["head", ...before, "tail"], diff.text), ["head", ...after, "tail"]);
    assert.equal(diff.removed, 2_999, "the whole middle is replaced, not diffed line by line");
    assert.ok(ms < 2_000, `took ${ms} ms`);
  });
});
