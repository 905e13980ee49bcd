import { fitTokenCap } from "./fit-token-cap.ts";
import type { ForkMessage } from "./fork-types.ts";

/** Tool outputs (or error texts) longer than this many characters are cut. */
export const DEFAULT_TOOL_OUTPUT_LIMIT = 1_500;
/** The most tokens (gpt-tokenizer, o200k_base) the inherited history and the reserve may take. */
export const DEFAULT_TOKEN_CAP = 100_000;

export type ForkContextOptions = {
  /** Default DEFAULT_TOOL_OUTPUT_LIMIT (1,500 characters). */
  toolOutputLimit?: number;
  /** Default DEFAULT_TOKEN_CAP (100,000 tokens). */
  tokenCap?: number;
  /** Tokens kept free inside the cap for what is sent with the history (preamble, task prompt). Default 0. */
  reserveTokens?: number;
};

export type ForkContextStats = {
  keptMessages: number;
  /** Every input message not kept: older than the latest compaction, or dropped to fit the cap. */
  droppedMessages: number;
  truncatedOutputs: number;
  /** Tokens of the kept history; at most tokenCap - reserveTokens. */
  tokens: number;
  /** True when the kept history starts at the parent's latest finished compaction. */
  startedAtCompaction: boolean;
};

export type ForkContext<M> = { messages: M[]; stats: ForkContextStats };

/**
 * What a forked child inherits of its parent's conversation (chronological, as the host lists it):
 * tool outputs cut, history started at the latest compaction, oldest messages dropped to fit the
 * cap, always starting at a user message. Pure and deterministic. The input is never mutated:
 * changed messages and parts are copies, unchanged ones are the input's own objects.
 */
export function processForkContext<M extends ForkMessage>(
  messages: readonly M[],
  options: ForkContextOptions = {},
): ForkContext<M> {
  const toolOutputLimit = positiveInteger("toolOutputLimit", options.toolOutputLimit ?? DEFAULT_TOOL_OUTPUT_LIMIT);
  const tokenCap = positiveInteger("tokenCap", options.tokenCap ?? DEFAULT_TOKEN_CAP);
  const reserveTokens = nonNegativeInteger("reserveTokens", options.reserveTokens ?? 0);
  const fitted = fitTokenCap(messages, { budget: Math.max(0, tokenCap - reserveTokens), toolOutputLimit });
  return {
    messages: fitted.messages,
    stats: {
      keptMessages: fitted.messages.length,
      droppedMessages: messages.length - fitted.messages.length,
      truncatedOutputs: fitted.truncatedOutputs,
      tokens: fitted.tokens,
      startedAtCompaction: fitted.startedAtCompaction,
    },
  };
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}

function nonNegativeInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer, got ${value}`);
  return value;
}
