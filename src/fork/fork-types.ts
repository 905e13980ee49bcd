/**
 * The minimal shapes of an OpenCode conversation that fork processing reads. Structural on purpose:
 * the host's own message and part types fit them, and every field not named here is carried along
 * untouched.
 */

export type ForkMessageInfo = {
  id: string;
  role: "user" | "assistant";
  /** An assistant message: `true` when it is a compaction summary. (A user message's is an object.) */
  summary?: unknown;
  /** An assistant message: the id of the user message it answers. */
  parentID?: string;
  [key: string]: unknown;
};

/** Any part. The kinds the processing acts on are narrowed with the guards below. */
export type ForkPart = { type: string; [key: string]: unknown };

export type ForkMessage = { info: ForkMessageInfo; parts: readonly ForkPart[] };

export type ToolInput = { [key: string]: unknown };

export type ToolState =
  | { status: "pending" | "running"; input: ToolInput; [key: string]: unknown }
  | {
      status: "completed";
      input: ToolInput;
      output: string;
      /** `time.compacted` is set when OpenCode pruned the output: the model sees a placeholder. */
      time?: { compacted?: number; [key: string]: unknown };
      attachments?: readonly unknown[];
      [key: string]: unknown;
    }
  | { status: "error"; input: ToolInput; error: string; [key: string]: unknown };

/** A tool call and its result: in OpenCode they are one part. */
export type ToolPart = ForkPart & { type: "tool"; callID: string; tool: string; state: ToolState };

export type TextPart = ForkPart & { type: "text" | "reasoning"; text: string };

export function isToolPart(part: ForkPart): part is ToolPart {
  return part.type === "tool" && typeof part.state === "object" && part.state !== null;
}

export function isTextPart(part: ForkPart): part is TextPart {
  return (part.type === "text" || part.type === "reasoning") && typeof part.text === "string";
}

/** What the tool gave back as text, when it has finished: its output, or its error. */
export function toolResultText(state: ToolState): string | undefined {
  if (state.status === "completed") return state.output;
  if (state.status === "error") return state.error;
  return undefined;
}
