export type LineDiff = { text: string; added: number; removed: number };

type Op = { kind: " " | "-" | "+"; line: string };

/**
 * Above this many cells (changed lines before × changed lines after) the changed middle is shown
 * as all removed then all added instead of a minimal diff: still a correct diff, at bounded cost.
 */
const MAX_LCS_CELLS = 1_000_000;

/** A unified diff of two texts by lines, with `context` unchanged lines around each change. */
export function unifiedDiff(before: string, after: string, context = 3): LineDiff {
  const ops = diffLines(splitLines(before), splitLines(after));
  const added = ops.filter((op) => op.kind === "+").length;
  const removed = ops.filter((op) => op.kind === "-").length;
  if (added + removed === 0) return { text: "", added, removed };
  const hunks = hunksOf(ops, context).join("");
  return { text: `--- previous output\n+++ new output\n${hunks}`, added, removed };
}

function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/** Common head and tail are kept as they are; the middle gets a longest-common-subsequence diff. */
function diffLines(a: string[], b: string[]): Op[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const same = (lines: string[]): Op[] => lines.map((line) => ({ kind: " ", line }));
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  return [...same(a.slice(0, head)), ...diffMiddle(midA, midB), ...same(a.slice(a.length - tail))];
}

function diffMiddle(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  if (n * m > MAX_LCS_CELLS) {
    return [...a.map((line): Op => ({ kind: "-", line })), ...b.map((line): Op => ({ kind: "+", line }))];
  }
  // lcs[i * (m + 1) + j]: length of the longest common subsequence of a[i..] and b[j..].
  // It never exceeds min(n, m) <= 1000 under the cell cap, so 16 bits are enough.
  const width = m + 1;
  const lcs = new Uint16Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * width + j] = a[i] === b[j] ? lcs[(i + 1) * width + j + 1]! + 1 : Math.max(lcs[(i + 1) * width + j]!, lcs[i * width + j + 1]!);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      ops.push({ kind: " ", line: a[i++]! });
      j++;
    } else if (j >= m || (i < n && lcs[(i + 1) * width + j]! >= lcs[i * width + j + 1]!)) {
      ops.push({ kind: "-", line: a[i++]! });
    } else {
      ops.push({ kind: "+", line: b[j++]! });
    }
  }
  return ops;
}

/** Groups the changes into hunks; changes closer than 2 × context share one. */
function hunksOf(ops: Op[], context: number): string[] {
  // Line numbers (0-based) in the old and new text where each op stands.
  const oldAt: number[] = [];
  const newAt: number[] = [];
  let o = 0;
  let n = 0;
  for (const op of ops) {
    oldAt.push(o);
    newAt.push(n);
    if (op.kind !== "+") o++;
    if (op.kind !== "-") n++;
  }
  const changed = ops.flatMap((op, index) => (op.kind === " " ? [] : [index]));
  const hunks: string[] = [];
  let first = 0;
  while (first < changed.length) {
    let last = first;
    while (last + 1 < changed.length && changed[last + 1]! - changed[last]! <= 2 * context + 1) last++;
    const from = Math.max(0, changed[first]! - context);
    const to = Math.min(ops.length, changed[last]! + context + 1);
    hunks.push(hunkText(ops.slice(from, to), oldAt[from]!, newAt[from]!));
    first = last + 1;
  }
  return hunks;
}

function hunkText(body: Op[], oldAt: number, newAt: number): string {
  const oldLen = body.filter((op) => op.kind !== "+").length;
  const newLen = body.filter((op) => op.kind !== "-").length;
  const range = (at: number, len: number) => (len === 1 ? `${at + 1}` : `${len === 0 ? at : at + 1},${len}`);
  const lines = body.map((op) => `${op.kind}${op.line}\n`).join("");
  return `@@ -${range(oldAt, oldLen)} +${range(newAt, newLen)} @@\n${lines}`;
}
