import { boundedJson } from "./bounded-json.ts";
import { isTextPart, isToolPart, toolResultText, type ForkMessage, type ForkPart, type ToolPart } from "./fork-types.ts";
import { countTextTokens, countTokensWithin, MAX_CHARS_PER_TOKEN } from "./token-count.ts";
import { isPrunedOutput } from "./truncate-tool-output.ts";

/** Role markers and separators around each message. */
export const MESSAGE_OVERHEAD_TOKENS = 4;
/** Framing of one tool call and its result. */
export const TOOL_CALL_OVERHEAD_TOKENS = 8;
/**
 * An attached file (image, PDF) is billed by the provider in its own units; a fixed estimate keeps
 * the count from reading its data URL.
 */
export const ATTACHMENT_TOKENS = 1000;

/** What OpenCode shows the model instead of a pruned tool output. */
const PRUNED_OUTPUT_TEXT = "[Old tool result content cleared]";
/** What OpenCode shows the model for a compaction request. */
const COMPACTION_REQUEST_TEXT = "What did we do so far?";
/** Bookkeeping parts OpenCode never sends to the model. */
const NOT_SENT_TO_MODEL = new Set(["step-start", "step-finish", "snapshot", "patch", "retry"]);

/** What the model reads of a part: one text to tokenize and a fixed number of tokens. */
export type PartCost = { text: string; fixedTokens: number };

/** The message's token count when it is at most `limit`, else undefined; work bounded by the limit. */
export function countMessageTokensWithin(message: ForkMessage, limit: number): number | undefined {
  let total = MESSAGE_OVERHEAD_TOKENS;
  for (const part of message.parts) {
    const cost = partCost(part, (limit - total + 1) * MAX_CHARS_PER_TOKEN);
    if (!cost) return undefined;
    total += cost.fixedTokens;
    const counted = countTokensWithin(cost.text, limit - total);
    if (counted === undefined) return undefined;
    total += counted;
  }
  return total <= limit ? total : undefined;
}

/** The same count with no bound: every part tokenized in full. */
export function countMessageTokens(message: ForkMessage): number {
  let total = MESSAGE_OVERHEAD_TOKENS;
  for (const part of message.parts) {
    const cost = partCost(part, Infinity)!;
    total += cost.fixedTokens + countTextTokens(cost.text);
  }
  return total;
}

/** Undefined when the part's text would exceed `maxChars` (it cannot fit the budget). */
export function partCost(part: ForkPart, maxChars: number): PartCost | undefined {
  if (isTextPart(part)) return { text: part.text, fixedTokens: 0 };
  if (isToolPart(part)) return toolPartCost(part, maxChars);
  if (NOT_SENT_TO_MODEL.has(part.type)) return { text: "", fixedTokens: 0 };
  switch (part.type) {
    case "file":
      return { text: stringField(part.filename), fixedTokens: ATTACHMENT_TOKENS };
    case "compaction":
      return { text: COMPACTION_REQUEST_TEXT, fixedTokens: 0 };
    case "agent":
      return { text: stringField(part.name), fixedTokens: 0 };
    case "subtask":
      return { text: [part.agent, part.description, part.prompt].map(stringField).join("\n"), fixedTokens: 0 };
  }
  // A part kind this code does not know: count all of it rather than guess.
  const json = boundedJson(part, maxChars);
  return json.complete ? { text: json.text, fixedTokens: 0 } : undefined;
}

function toolPartCost(part: ToolPart, maxChars: number): PartCost | undefined {
  const input = boundedJson(part.state.input, maxChars);
  if (!input.complete) return undefined;
  const result = isPrunedOutput(part.state) ? PRUNED_OUTPUT_TEXT : (toolResultText(part.state) ?? "");
  const attachments = part.state.status === "completed" ? (part.state.attachments?.length ?? 0) : 0;
  return {
    text: `${part.tool} ${part.callID} ${input.text}\n${result}`,
    fixedTokens: TOOL_CALL_OVERHEAD_TOKENS + attachments * ATTACHMENT_TOKENS,
  };
}

function stringField(value: unknown): string {
  return typeof value === "string" ? value : "";
}
