import type { LaunchInput } from "../core/task-launcher.ts";
import type { Host } from "../host/host.ts";
import { processForkContext } from "../fork/process-fork-context.ts";
import type { ForkMessage, ForkPart } from "../fork/fork-types.ts";

/**
 * A fork onto a worker, which has no copy of the parent: the parent's messages before the calling
 * one (tool outputs cut and the history fitted to the cap, as a local fork's requests are) go into
 * a new session on the worker as one stored message; the task prompt follows when the task starts.
 */
export async function forkOnto(local: Host, worker: Host, input: LaunchInput & { title: string }, limits: { toolOutputLimit: number; tokenCap: number }): Promise<string> {
  const history = await local.sessionHistory(input.parentSessionID);
  const cut = history.findIndex((m) => m.info.id === input.parentMessageID);
  const before = cut >= 0 ? history.slice(0, cut) : history;
  const { messages } = processForkContext(before, { ...limits, reserveTokens: 2000 });
  const { id } = await worker.createSession({ title: input.title });
  await worker.prompt({ sessionID: id, text: transcript(messages), agent: input.agent, model: input.model, noReply: true });
  return id;
}

/** The conversation as text: who said what, and each tool call with its (cut) output. */
export function transcript(messages: readonly ForkMessage[]): string {
  const lines = messages.map((m) => `--- ${m.info.role} ---\n${m.parts.map(partText).filter(Boolean).join("\n")}`);
  return [`[The conversation so far, copied from the parent session on the user's OpenCode (${messages.length} messages)]`, ...lines].join("\n\n");
}

function partText(part: ForkPart): string {
  if (part.type === "text" && typeof part.text === "string") return part.text;
  if (part.type !== "tool") return "";
  const state = part.state as { status?: string; input?: unknown; output?: unknown; error?: unknown } | undefined;
  const result = state?.status === "completed" ? String(state.output ?? "") : state?.status === "error" ? `error: ${String(state.error ?? "")}` : String(state?.status ?? "");
  return `[tool ${String(part.tool)}] ${JSON.stringify(state?.input ?? {})}\n${result}`;
}
