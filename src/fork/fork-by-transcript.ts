import type { LaunchInput } from "../core/task-launcher.ts";
import type { Host } from "../host/host.ts";
import { processForkContext } from "./process-fork-context.ts";
import type { ForkMessage, ForkPart } from "./fork-types.ts";

/**
 * A fork where the host cannot copy the parent: onto a worker (which has no copy of it), or into a
 * worktree (OpenCode 1.18.33 forks a session into the parent's own directory whatever the request
 * names). The parent's messages before the calling one (tool outputs cut and the history fitted to
 * the cap, as a local fork's requests are) go into a new session on `target`, in `directory` when
 * given, as one stored message; the task prompt follows when the task starts.
 */
export async function forkByTranscript(
  source: Host, target: Host, input: LaunchInput & { title: string; directory?: string }, limits: { toolOutputLimit: number; tokenCap: number },
): Promise<string> {
  const history = await source.sessionHistory(input.parentSessionID);
  const cut = history.findIndex((m) => m.info.id === input.parentMessageID);
  const before = cut >= 0 ? history.slice(0, cut) : history;
  const { messages } = processForkContext(before, { ...limits, reserveTokens: 2000 });
  const { id } = await target.createSession({ title: input.title, ...(input.directory ? { directory: input.directory } : {}) });
  await target.prompt({ sessionID: id, text: transcript(messages), agent: input.agent, model: input.model, noReply: true });
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
