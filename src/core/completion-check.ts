import type { Task } from "./task.ts";
import type { HostMessage } from "../host/host.ts";

export type CompletionVerdict =
  | { kind: "pending" }
  | { kind: "completed"; result: string }
  | { kind: "error"; error: string };

export const EMPTY_RESULT = "(the task finished without a text answer)";

/**
 * Decides from the child's newest messages whether the run started by the task's latest prompt
 * is over. An idle that comes before any answer (the last message is still the prompt, or an
 * answer older than the prompt) is not a completion. A compaction summary the host wrote after
 * the answer ends the run but is not its result; when the answer is not among `recent`, pending
 * (the caller then reads more from the host).
 */
export function judgeCompletion(task: Task, recent: HostMessage[]): CompletionVerdict {
  const answers = recent.filter((m) => m.role === "assistant" && m.createdAt >= task.promptedAt);
  const last = recent.at(-1);
  if (!last || last.role !== "assistant" || !answers.includes(last)) return { kind: "pending" };
  if (last.error) return { kind: "error", error: last.error };
  if (last.completedAt === undefined || last.toolCallsPending) return { kind: "pending" };
  const spoken = answers.filter((m) => !m.summary);
  if (last.summary && spoken.length === 0) return { kind: "pending" };
  const texts = spoken.map((m) => m.text.trim()).filter((t) => t.length > 0);
  return { kind: "completed", result: spoken.at(-1)!.text.trim() || texts.at(-1) || EMPTY_RESULT };
}
