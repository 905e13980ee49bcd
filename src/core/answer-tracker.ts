import type { HostMessage } from "../host/host.ts";

type Snapshot = { message: Omit<HostMessage, "text">; texts: Map<string, string> };

/**
 * The newest message of each running child, built from message and text-part events, so that a
 * child's idle can usually be judged without reading its history from the host.
 */
export class AnswerTracker {
  private latest = new Map<string, Snapshot>();

  recordMessage(sessionID: string, message: Omit<HostMessage, "text">): void {
    const current = this.latest.get(sessionID);
    if (current && current.message.id === message.id) current.message = message;
    else if (!current || message.createdAt >= current.message.createdAt) this.latest.set(sessionID, { message, texts: new Map() });
  }

  recordText(sessionID: string, messageID: string, partID: string, text: string): void {
    const current = this.latest.get(sessionID);
    if (current?.message.id === messageID) current.texts.set(partID, text);
  }

  /** The newest message as the events told it, or an empty list when nothing was seen. */
  recent(sessionID: string): HostMessage[] {
    const current = this.latest.get(sessionID);
    if (!current) return [];
    return [{ ...current.message, text: [...current.texts.values()].join("\n") }];
  }

  release(sessionID: string): void {
    this.latest.delete(sessionID);
  }

  size(): number {
    return this.latest.size;
  }
}
