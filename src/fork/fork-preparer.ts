import type { Host } from "../host/host.ts";
import type { ForkPreparer } from "../core/task-manager.ts";
import { processForkContext } from "./process-fork-context.ts";
import { buildForkPreamble } from "./fork-preamble.ts";
import { forkPromptText } from "./fork-notice.ts";
import { reserveFor, type ForkLimits } from "./fork-limits.ts";

/**
 * Forks the parent at the message that is calling background_task (the copy holds everything
 * before it), and builds the child's first prompt: the preamble, told what was cut, then the task.
 * The cutting itself happens on every model request of the child (see ForkContextTransform).
 */
export function createForkPreparer(host: Host, limits: ForkLimits): ForkPreparer {
  return async ({ parentSessionID, parentMessageID, prompt, title }) => {
    const { id } = await host.forkSession({ sessionID: parentSessionID, messageID: parentMessageID, title });
    const history = await host.sessionHistory(id);
    const { stats } = processForkContext(history, { ...limits, reserveTokens: reserveFor(prompt) });
    return { sessionID: id, promptText: forkPromptText(buildForkPreamble(stats), prompt) };
  };
}
