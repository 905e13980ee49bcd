import { maxForkPreambleTokens } from "./fork-preamble.ts";
import { countTextTokens } from "./token-count.ts";

export type ForkLimits = { toolOutputLimit: number; tokenCap: number };

/** Tokens kept free for the preamble and the task prompt; the same at launch and at every later request. */
export function reserveFor(taskPrompt: string): number {
  return maxForkPreambleTokens() + countTextTokens(taskPrompt) + 32;
}
