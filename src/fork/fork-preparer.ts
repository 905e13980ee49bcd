import type { Host } from "../host/host.ts";
import type { ForkSupport } from "../core/task-manager.ts";
import { processForkContext } from "./process-fork-context.ts";
import { buildForkPreamble } from "./fork-preamble.ts";
import { forkPromptText } from "./fork-notice.ts";
import { reserveFor, type ForkLimits } from "./fork-limits.ts";
import { forkByTranscript } from "./fork-by-transcript.ts";

/**
 * Forks the parent at the message that is calling background_task (the copy holds everything
 * before it), and builds the child's first prompt: the preamble, told what was cut, then the task.
 * The cutting itself happens on every model request of the child (see ForkContextTransform).
 */
export function createForkSupport(host: Host, limits: ForkLimits): ForkSupport {
  return {
    async fork(input) {
      // The host forks into the parent's own directory: a fork into a new worktree is a transcript.
      if (input.directory) return forkByTranscript(host, host, input, limits);
      return (await host.forkSession({ sessionID: input.parentSessionID, messageID: input.parentMessageID, title: input.title })).id;
    },
    // Called when the task starts (it may have waited in the queue); nothing is added to the fork
    // before that, so the statistics, and the text, are the same whenever it is built.
    async firstPrompt(sessionID, prompt) {
      const history = await host.sessionHistory(sessionID);
      const { stats } = processForkContext(history, { ...limits, reserveTokens: reserveFor(prompt) });
      return forkPromptText(buildForkPreamble(stats), prompt);
    },
  };
}
