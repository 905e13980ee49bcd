import type { HostEvent, SessionActivity } from "./host.ts";
import { isAnswerText, toMessageInfo } from "./message-info.ts";
import { toolCallInfo } from "./tool-call-info.ts";

type RawEvent = { type?: string; properties?: Record<string, any> };

/**
 * Turns a host event into the core's HostEvent, or undefined for events the core ignores.
 * The hook is typed with the v1 shapes, but the host sends the v2 ones; this reads both.
 */
export function normalizeEvent(raw: unknown): HostEvent | undefined {
  const { type, properties: p = {} } = (raw ?? {}) as RawEvent;
  switch (type) {
    case "session.idle":
      return p.sessionID ? { type: "idle", sessionID: p.sessionID } : undefined;
    case "session.status":
      return p.sessionID ? statusEvent(p.sessionID, p.status) : undefined;
    case "permission.asked":
    case "permission.updated":
      return p.sessionID ? { type: "permission", sessionID: p.sessionID, title: permissionTitle(p) } : undefined;
    case "permission.replied":
      return p.sessionID ? { type: "permission-replied", sessionID: p.sessionID } : undefined;
    case "session.error":
      return p.sessionID ? sessionError(p.sessionID, p.error) : undefined;
    case "session.deleted": {
      const sessionID = p.sessionID ?? p.info?.id;
      return sessionID ? { type: "deleted", sessionID } : undefined;
    }
    case "message.part.updated":
      return partEvent(p.part);
    case "message.updated":
      return messageEvent(p.info);
    case "message.part.delta":
      return p.sessionID ? { type: "activity", sessionID: p.sessionID } : undefined;
    default:
      return undefined;
  }
}

function activity(type: unknown): SessionActivity {
  return type === "busy" || type === "retry" ? type : "idle";
}

function statusEvent(sessionID: string, status: any): HostEvent {
  const type = activity(status?.type);
  if (type !== "retry") return { type: "status", sessionID, status: type };
  const retry = { attempt: Number(status.attempt ?? 0), message: String(status.message ?? ""), nextAt: typeof status.next === "number" ? status.next : undefined };
  return { type: "status", sessionID, status: type, retry };
}

/** v2 `permission.asked` has `permission` and `patterns`; v1 `permission.updated` has `title` and `pattern`. */
function permissionTitle(p: any): string {
  if (typeof p.title === "string" && p.title) return p.title;
  const what = String(p.permission ?? p.type ?? "a permission");
  const patterns = [p.patterns ?? p.pattern ?? []].flat().filter(Boolean).join(", ");
  return patterns ? `${what} (${patterns})` : what;
}

function sessionError(sessionID: string, error: any): HostEvent {
  const name = typeof error?.name === "string" ? error.name : "UnknownError";
  const message = typeof error?.data?.message === "string" ? error.data.message : name;
  return { type: "error", sessionID, name, message };
}

function partEvent(part: any): HostEvent | undefined {
  if (!part?.sessionID) return undefined;
  if (part.type === "tool" && typeof part.callID === "string") {
    return { type: "tool", sessionID: part.sessionID, callID: part.callID, tool: String(part.tool), call: toolCallInfo(part) };
  }
  if (isAnswerText(part) && typeof part.text === "string") {
    return { type: "text", sessionID: part.sessionID, messageID: part.messageID, partID: part.id, text: part.text };
  }
  return { type: "activity", sessionID: part.sessionID };
}

function messageEvent(info: any): HostEvent | undefined {
  if (!info?.sessionID || !info.id || !info.time) return undefined;
  return { type: "message", sessionID: info.sessionID, message: toMessageInfo(info) };
}
