import { maskSecrets } from "../core/mask-secrets.ts";
import { messageSpend, type Spend } from "../cost/spend.ts";
import { isToolPart, toolResultText, type ForkMessage, type ToolPart } from "../fork/fork-types.ts";
import { toMessageInfo } from "../host/message-info.ts";
import type { SpentRequest } from "../store/reads/spend-reads.ts";

/** The most requests a task page lists (the newest): a page costs the same however long a child ran. */
export const REQUESTS_SHOWN = 200;
/** A tool call's input or output is cut here on the page (after masking, so a cut never uncovers part of a secret). */
const TEXT_LIMIT = 4000;
/** Input keys whose values are hidden whatever they look like. */
const SECRET_KEY = /secret|token|passw|api_?key|credential|authorization/i;

export type ToolCallRow = { callID: string; tool: string; status: string; input: string; output?: string };
/** One model request of the child; without a spend while it runs (the host reports it at the end), or when it ended reporting none (an error, an abort). */
export type RequestRow = { messageId: string; at?: number; model?: string; spend?: Spend; ended?: boolean; tools: ToolCallRow[]; compaction?: boolean };

/** A task's requests for its page: from its session's messages, or from the store (tokens and cost only), with why. */
export type ChildRequests = { rows: RequestRow[]; earlier: number; from: "session" | "store"; note?: string };

/** The child session's messages as the host keeps them, or why they could not be read. */
export type SessionMessages = { messages: readonly ForkMessage[] } | { unavailable: string };

/** Each assistant message of the session (one model request), oldest first, with the tool calls it made, secrets masked. */
export function requestsFromSession(messages: readonly ForkMessage[]): ChildRequests {
  const assistant = messages.filter((m) => m.info.role === "assistant");
  const earlier = Math.max(0, assistant.length - REQUESTS_SHOWN);
  return { rows: assistant.slice(earlier).map(toRow), earlier, from: "session" };
}

/** The store's newest rows (of `total`): tokens and cost per request, in order; no model, time or tool calls. */
export function requestsFromStore(requests: readonly SpentRequest[], total: number, note: string): ChildRequests {
  const rows = requests.map((r) => ({ messageId: r.messageId, spend: r.spend, ended: true, tools: [] }));
  return { rows, earlier: Math.max(0, total - rows.length), from: "store", note };
}

function toRow(message: ForkMessage): RequestRow {
  const info = message.info as ForkMessage["info"] & { modelID?: unknown; providerID?: unknown };
  const known = safeInfo(message.info);
  const spend = known?.usage && messageSpend(known.usage);
  return {
    messageId: info.id,
    ...(known ? { at: known.createdAt } : {}),
    ...(typeof info.modelID === "string" ? { model: typeof info.providerID === "string" ? `${info.providerID}/${info.modelID}` : info.modelID } : {}),
    ...(spend ? { spend } : {}),
    ...(known && (known.completedAt !== undefined || known.error !== undefined) ? { ended: true } : {}),
    ...(info.summary === true ? { compaction: true } : {}),
    tools: message.parts.filter(isToolPart).map(toolRow),
  };
}

function safeInfo(info: ForkMessage["info"]): ReturnType<typeof toMessageInfo> | undefined {
  try {
    return toMessageInfo(info);
  } catch {
    return undefined; // a message shape this version does not know: listed without its figures
  }
}

function toolRow(part: ToolPart): ToolCallRow {
  const output = toolResultText(part.state);
  return { callID: part.callID, tool: part.tool, status: part.state.status, input: shown(JSON.stringify(hideSecretKeys(part.state.input), null, 2) ?? ""), ...(output !== undefined ? { output: shown(output) } : {}) };
}

/** Masked first, then cut. */
function shown(text: string): string {
  const masked = maskSecrets(text);
  return masked.length <= TEXT_LIMIT ? masked : `${masked.slice(0, TEXT_LIMIT)}\n… (${masked.length - TEXT_LIMIT} more characters)`;
}

/** A copy of a tool's input with the values of secret-named keys (`password`, `api_key`, `GITHUB_TOKEN`) masked. */
function hideSecretKeys(value: unknown, depth = 0): unknown {
  if (depth > 20 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => hideSecretKeys(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_KEY.test(k) && typeof v === "string" ? "[MASKED]" : hideSecretKeys(v, depth + 1)]));
}
