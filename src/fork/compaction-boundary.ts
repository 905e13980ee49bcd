import type { ForkMessage } from "./fork-types.ts";

/**
 * Compaction leaves a user message holding a `compaction` part, answered by an assistant summary.
 * Like OpenCode itself, a request counts as a boundary only once a finished summary answers it:
 * a compaction that failed or is still running replaced nothing.
 */
export function isCompactionRequest(message: ForkMessage): boolean {
  return message.info.role === "user" && message.parts.some((part) => part.type === "compaction");
}

/** The id of the compaction request this message finished summarizing, if it is such a summary. */
export function summarizedRequestId(message: ForkMessage): string | undefined {
  const info = message.info;
  const finished = info.summary === true && Boolean(info.finish);
  return info.role === "assistant" && finished && typeof info.parentID === "string" ? info.parentID : undefined;
}
