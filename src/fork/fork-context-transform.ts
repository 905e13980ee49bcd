import type { ForkMessage } from "./fork-types.ts";
import { processForkContext } from "./process-fork-context.ts";
import { taskPromptOf } from "./fork-notice.ts";
import { reserveFor, type ForkLimits } from "./fork-limits.ts";

const CACHED_CHILDREN = 32;

/**
 * Rewrites a forked child's model request: the inherited messages (those before the marked fork
 * prompt) are replaced by their processed form; the child's own messages pass untouched. The
 * inherited part never changes, so the processed prefix is byte-identical on every request and a
 * provider's prompt cache keeps working. Results are cached per child; a restart recomputes the
 * same bytes because the processing is deterministic.
 */
export class ForkContextTransform {
  private cache = new Map<string, { key: string; messages: ForkMessage[] }>();

  constructor(private limits: ForkLimits) {}

  apply(messages: ForkMessage[]): void {
    const mark = findForkPrompt(messages);
    if (!mark) return;
    const inherited = messages.slice(0, mark.index);
    const sessionID = String(messages[0].info.sessionID ?? "");
    const key = `${inherited.length}:${inherited.at(-1)!.info.id}`;
    let cached = this.cache.get(sessionID);
    if (!cached || cached.key !== key) {
      const processed = processForkContext(inherited, { ...this.limits, reserveTokens: reserveFor(mark.taskPrompt) });
      cached = { key, messages: processed.messages };
      this.remember(sessionID, cached);
    }
    messages.splice(0, mark.index, ...cached.messages);
  }

  /** Drops a child's processed history (it settled): a resumed child recomputes the same bytes. */
  forget(sessionID: string): void {
    this.cache.delete(sessionID);
  }

  /** Children whose processed history is held. */
  size(): number {
    return this.cache.size;
  }

  private remember(sessionID: string, entry: { key: string; messages: ForkMessage[] }): void {
    this.cache.delete(sessionID);
    this.cache.set(sessionID, entry);
    if (this.cache.size > CACHED_CHILDREN) this.cache.delete(this.cache.keys().next().value!);
  }
}

function findForkPrompt(messages: ForkMessage[]): { index: number; taskPrompt: string } | undefined {
  // The last mark wins: a fork of a fork inherits its parent's marked message too.
  for (let index = messages.length - 1; index >= 1; index--) {
    const message = messages[index];
    if (message.info.role !== "user") continue;
    for (const part of message.parts) {
      if (part.type !== "text" || typeof part.text !== "string") continue;
      const taskPrompt = taskPromptOf(part.text);
      if (taskPrompt !== undefined) return { index, taskPrompt };
    }
  }
  return undefined;
}
