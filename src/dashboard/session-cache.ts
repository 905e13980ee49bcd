import type { ForkMessage } from "../fork/fork-types.ts";
import type { SessionMessages } from "./request-rows.ts";

/** How long a task page waits for the host's messages before it shows the database's figures alone. */
const WAIT_MS = 3000;
/** A running task's messages are read again at most this often while nothing it records changed. */
const RUNNING_KEEP_MS = 2000;
const KEEP_MS = 60_000;
const KEPT_SESSIONS = 16;

/** What the page knows of a task that moves when its messages do: status, tool calls, requests recorded. */
export type SessionMark = { key: string; running: boolean };

type Kept = { mark: string; at: number; value: SessionMessages };

/**
 * A child session's messages from the host, for its task page. The page is fetched again on
 * every commit to the database while it is open (any task's), and a long session's messages are
 * megabytes, so they are kept per session until the task's mark moves (its status, tool calls or
 * recorded requests), for at most 2 s while it runs and a minute once it settled.
 */
export class SessionCache {
  private kept = new Map<string, Kept>();

  constructor(private read: (sessionID: string) => Promise<readonly ForkMessage[]>, private now: () => number = Date.now, private waitMs = WAIT_MS) {}

  async get(sessionID: string, mark: SessionMark): Promise<SessionMessages> {
    const hit = this.kept.get(sessionID);
    const age = hit ? this.now() - hit.at : Infinity;
    if (hit && hit.mark === mark.key && age >= 0 && age < (mark.running ? RUNNING_KEEP_MS : KEEP_MS)) return hit.value;
    const value = await this.fetch(sessionID);
    this.kept.delete(sessionID);
    this.kept.set(sessionID, { mark: mark.key, at: this.now(), value });
    if (this.kept.size > KEPT_SESSIONS) this.kept.delete(this.kept.keys().next().value!);
    return value;
  }

  private async fetch(sessionID: string): Promise<SessionMessages> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${this.waitMs / 1000} s`)), this.waitMs)));
    try {
      return { messages: await Promise.race([this.read(sessionID), late]) };
    } catch (error) {
      return { unavailable: error instanceof Error ? error.message : String(error) };
    } finally {
      clearTimeout(timer);
    }
  }
}
