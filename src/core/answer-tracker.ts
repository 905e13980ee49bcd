import type { HostMessage } from "../host/host.ts";

/** `earlier`: the text of the newest earlier message that had one (a tool-call step may have none). */
type Snapshot = { message: Omit<HostMessage, "text">; texts: Map<string, string>; earlier?: string };

/**
 * The newest message of each running child, built from message and text-part events, so that a
 * child's idle can usually be judged without reading its history from the host.
 */
export class AnswerTracker {
  private latest = new Map<string, Snapshot>();

  recordMessage(sessionID: string, message: Omit<HostMessage, "text">): void {
    const current = this.latest.get(sessionID);
    if (current && current.message.id === message.id) current.message = message;
    else if (!current || message.createdAt >= current.message.createdAt) {
      this.latest.set(sessionID, { message, texts: new Map(), earlier: current && (answerOf(current) || current.earlier) });
    }
  }

  recordText(sessionID: string, messageID: string, partID: string, text: string): void {
    const current = this.latest.get(sessionID);
    if (current?.message.id === messageID) current.texts.set(partID, text);
  }

  /** The newest message as the events told it, or an empty list when nothing was seen. */
  recent(sessionID: string): HostMessage[] {
    const current = this.latest.get(sessionID);
    if (!current) return [];
    return [{ ...current.message, text: textOf(current) }];
  }

  /** The latest assistant text the events showed (a task stopped mid-run hands it back); undefined when none. */
  lastAnswer(sessionID: string): string | undefined {
    const current = this.latest.get(sessionID);
    if (!current) return undefined;
    return answerOf(current) || current.earlier;
  }

  release(sessionID: string): void {
    this.latest.delete(sessionID);
  }

  size(): number {
    return this.latest.size;
  }
}

function textOf(snapshot: Snapshot): string {
  return [...snapshot.texts.values()].join("\n");
}

function answerOf(snapshot: Snapshot): string {
  return snapshot.message.role === "assistant" ? textOf(snapshot).trim() : "";
}
