import type { ForkContextStats } from "./process-fork-context.ts";
import { countTextTokens } from "./token-count.ts";

/** What the forked child is told about the conversation it inherited. Deterministic. */
export function buildForkPreamble(stats: ForkContextStats): string {
  return [
    "You are a background task forked from a parent session. The conversation before this message is " +
      "the parent's, inherited so that you know what it knows; it may be incomplete or truncated.",
    ...omissionLines(stats),
    "When you need the full content of a file or of a tool result, re-read the file or run the tool " +
      "again instead of relying on the inherited copy.",
    "Work only on the task you are given; the inherited conversation is background.",
  ].join("\n");
}

function omissionLines(stats: ForkContextStats): string[] {
  const lines: string[] = [];
  if (stats.startedAtCompaction) lines.push("- It starts at the parent's latest compaction summary.");
  lines.push(
    stats.droppedMessages === 0
      ? "- No earlier message of the parent was left out."
      : `- ${count(stats.droppedMessages, "earlier message")} of the parent ${verb(stats.droppedMessages)} left out ` +
          "(older than the latest compaction, or dropped to fit the context limit).",
  );
  lines.push(
    stats.truncatedOutputs === 0
      ? "- No tool output was cut."
      : `- ${count(stats.truncatedOutputs, "tool output")} ${verb(stats.truncatedOutputs)} cut to ` +
          "the beginning; each cut one says its original length.",
  );
  return lines;
}

let largestPreambleTokens: number | undefined;

/** The most tokens buildForkPreamble takes for any counts below ten million: reserve it within the cap. */
export function maxForkPreambleTokens(): number {
  if (largestPreambleTokens !== undefined) return largestPreambleTokens;
  let largest = 0;
  for (const dropped of [0, 1, 9_999_999])
    for (const truncated of [0, 1, 9_999_999])
      for (const startedAtCompaction of [false, true]) {
        const stats = { keptMessages: 0, droppedMessages: dropped, truncatedOutputs: truncated, tokens: 0, startedAtCompaction };
        largest = Math.max(largest, countTextTokens(buildForkPreamble(stats)));
      }
  largestPreambleTokens = largest;
  return largest;
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

function verb(n: number): string {
  return n === 1 ? "was" : "were";
}
