import type { HostMessage, MessageUsage } from "./host.ts";

/** The message info fields the core needs, from the host's message info (API answer or event). */
export function toMessageInfo(info: any): Omit<HostMessage, "text"> {
  return {
    id: info.id,
    role: info.role,
    createdAt: info.time.created,
    completedAt: info.time.completed,
    toolCallsPending: info.finish === "tool-calls",
    error: info.error ? info.error.data?.message || info.error.name || "unknown error" : undefined,
    ...(info.error?.name === "MessageAbortedError" ? { aborted: true } : {}),
    ...(info.role === "assistant" && info.summary === true ? { summary: true } : {}),
    ...(info.role === "user" && typeof info.agent === "string" && info.model?.providerID && info.model?.modelID
      ? { agent: info.agent, model: { providerID: info.model.providerID, modelID: info.model.modelID } }
      : {}),
    ...(info.role === "assistant" && info.tokens ? { usage: toUsage(info) } : {}),
  };
}

function toUsage(info: any): MessageUsage {
  const t = info.tokens;
  const n = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : 0);
  return {
    input: n(t.input), output: n(t.output), reasoning: n(t.reasoning),
    cacheRead: n(t.cache?.read), cacheWrite: n(t.cache?.write), costUsd: n(info.cost),
  };
}

/** Text parts that the model produced and that count as its answer. */
export function isAnswerText(part: { type: string; ignored?: boolean }): boolean {
  return part.type === "text" && !part.ignored;
}
