import type { MessageUsage } from "../host/host.ts";

/** Tokens by kind, as the host counts them (input excludes cache reads, output excludes reasoning). */
export type Tokens = { input: number; output: number; reasoning: number; cacheRead: number; cacheWrite: number };

/** What model requests cost: tokens by kind, USD (0 for a model without a price) and the number of requests. */
export type Spend = { tokens: Tokens; costUsd: number; requests: number };

export const NO_SPEND: Spend = Object.freeze({
  tokens: Object.freeze({ input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 }),
  costUsd: 0,
  requests: 0,
}) as Spend;

/** One assistant message (= one model request) as a Spend; undefined while it reports nothing yet (the host's first update is all zeros). */
export function messageSpend(usage: MessageUsage): Spend | undefined {
  const { input, output, reasoning, cacheRead, cacheWrite, costUsd } = usage;
  if (input + output + reasoning + cacheRead + cacheWrite === 0 && costUsd === 0) return undefined;
  return { tokens: { input, output, reasoning, cacheRead, cacheWrite }, costUsd, requests: 1 };
}

export function addSpend(a: Spend, b: Spend): Spend {
  return {
    tokens: {
      input: a.tokens.input + b.tokens.input,
      output: a.tokens.output + b.tokens.output,
      reasoning: a.tokens.reasoning + b.tokens.reasoning,
      cacheRead: a.tokens.cacheRead + b.tokens.cacheRead,
      cacheWrite: a.tokens.cacheWrite + b.tokens.cacheWrite,
    },
    costUsd: a.costUsd + b.costUsd,
    requests: a.requests + b.requests,
  };
}

/** a − b, field by field: what a message's newer numbers add to its older ones. */
export function subtractSpend(a: Spend, b: Spend): Spend {
  const t = a.tokens, u = b.tokens;
  return {
    tokens: { input: t.input - u.input, output: t.output - u.output, reasoning: t.reasoning - u.reasoning, cacheRead: t.cacheRead - u.cacheRead, cacheWrite: t.cacheWrite - u.cacheWrite },
    costUsd: a.costUsd - b.costUsd,
    requests: a.requests - b.requests,
  };
}

export function sumSpend(spends: Iterable<Spend>): Spend {
  let total = NO_SPEND;
  for (const spend of spends) total = addSpend(total, spend);
  return total;
}

/** The tokens a spend is shown (and later budgeted) by: input + output + reasoning; cache reads and writes are not counted. */
export function countedTokens(spend: Spend): number {
  return spend.tokens.input + spend.tokens.output + spend.tokens.reasoning;
}

export function sameSpend(a: Spend, b: Spend): boolean {
  const t = a.tokens, u = b.tokens;
  return a.costUsd === b.costUsd && a.requests === b.requests && t.input === u.input && t.output === u.output &&
    t.reasoning === u.reasoning && t.cacheRead === u.cacheRead && t.cacheWrite === u.cacheWrite;
}
