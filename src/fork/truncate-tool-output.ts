import { boundedJson } from "./bounded-json.ts";
import { isToolPart, toolResultText, type ForkMessage, type ForkPart, type ToolPart, type ToolState } from "./fork-types.ts";

export const INPUT_PREVIEW_CHARS = 200;
const NAME_CHARS = 80;

/** True when OpenCode pruned the output: the model is shown a placeholder, never the output. */
export function isPrunedOutput(state: ToolState): boolean {
  return state.status === "completed" && typeof state.time?.compacted === "number";
}

/** The message with every tool result longer than `limit` cut; the same object when none is. */
export function truncateMessageOutputs<M extends ForkMessage>(message: M, limit: number): { message: M; truncated: number } {
  let parts: ForkPart[] | undefined;
  let truncated = 0;
  for (let index = 0; index < message.parts.length; index++) {
    const part = message.parts[index];
    const cut = isToolPart(part) ? truncateToolPart(part, limit) : undefined;
    if (!cut) continue;
    parts ??= message.parts.slice();
    parts[index] = cut;
    truncated++;
  }
  if (!parts) return { message, truncated: 0 };
  return { message: { ...message, parts }, truncated };
}

/** A copy of the part with its output (or error text) cut to `limit`; undefined when it fits. */
export function truncateToolPart(part: ToolPart, limit: number): ToolPart | undefined {
  const result = toolResultText(part.state);
  if (result === undefined || result.length <= limit || isPrunedOutput(part.state)) return undefined;
  const text = truncatedResult(part, result, limit);
  const state = part.state.status === "completed" ? { ...part.state, output: text } : { ...part.state, error: text };
  return { ...part, state };
}

/** The head of the result and a marker, at most `limit` characters in all. */
export function truncatedResult(part: ToolPart, result: string, limit: number): string {
  const marker = truncationMarker(part, result.length);
  // The marker leads with the original length, so clipping a marker too long for a tiny limit keeps it.
  if (marker.length >= limit) return marker.slice(0, limit);
  return headOf(result, limit - marker.length) + marker;
}

export function truncationMarker(part: ToolPart, originalLength: number): string {
  return (
    `\n[output truncated in this forked context: originally ${originalLength} characters.` +
    ` tool: ${clip(part.tool, NAME_CHARS)}, call id: ${clip(part.callID, NAME_CHARS)},` +
    ` input: ${inputPreview(part.state.input)}.` +
    ` Run the tool again or re-read the file if you need the full content.]`
  );
}

/** The input as JSON, at most INPUT_PREVIEW_CHARS characters. */
export function inputPreview(input: unknown): string {
  const json = boundedJson(input, INPUT_PREVIEW_CHARS);
  return json.complete ? json.text : headOf(json.text, INPUT_PREVIEW_CHARS - 1) + "…";
}

function clip(text: unknown, maxChars: number): string {
  const value = typeof text === "string" ? text : String(text);
  return value.length <= maxChars ? value : headOf(value, maxChars - 1) + "…";
}

/** The first `chars` characters, one fewer when the cut would split a surrogate pair. */
function headOf(text: string, chars: number): string {
  if (chars <= 0) return "";
  const code = text.charCodeAt(chars - 1);
  const splitsPair = code >= 0xd800 && code <= 0xdbff;
  return text.slice(0, splitsPair ? chars - 1 : chars);
}
