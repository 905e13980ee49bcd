import type { ModelRef } from "../core/task.ts";
import type { Host } from "../host/host.ts";
import { NOTIFICATION_TAG } from "../core/notification-text.ts";

/** The user's newest message in the project: when, in which session, with which agent and model. */
export type UserPresence = { lastMessageAt: number; sessionID: string; agent: string; model?: ModelRef };

/** Messages read per session: a long agent turn can put many after the user's message. */
const MESSAGES_PER_SESSION = 50;

/**
 * The newest message the user wrote in one of the project's top-level sessions within `windowMs`,
 * or undefined. The plugin's own notices arrive as user messages too; they do not count: their
 * tagged payload is a synthetic part, hidden from the person but in the message's text.
 */
export async function lastUserMessage(host: Host, now: number, windowMs: number): Promise<UserPresence | undefined> {
  const since = now - windowMs;
  const sessions = (await host.listSessions())
    .filter((s) => s.parentID === undefined && s.updatedAt >= since)
    .sort((a, b) => b.updatedAt - a.updatedAt);
  let newest: UserPresence | undefined;
  for (const session of sessions) {
    // A session last updated before the newest message found cannot hold a newer one.
    if (newest && session.updatedAt <= newest.lastMessageAt) break;
    const messages = await host.recentMessages(session.id, MESSAGES_PER_SESSION);
    const typed = messages.filter((m) => m.role === "user" && !m.text.includes(NOTIFICATION_TAG)).at(-1);
    if (!typed || typed.createdAt < since || (newest && typed.createdAt <= newest.lastMessageAt)) continue;
    newest = { lastMessageAt: typed.createdAt, sessionID: session.id, agent: typed.agent ?? "build", ...(typed.model ? { model: typed.model } : {}) };
  }
  return newest;
}
