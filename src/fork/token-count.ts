import { createRequire } from "node:module";

type Tokenizer = typeof import("gpt-tokenizer");

// Text that merely contains "<|endoftext|>" must be counted as text, not rejected.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * A string longer than this many characters per allowed token is taken as not fitting without
 * being tokenized. Ordinary text and code run at 3 to 5 characters a token; only long runs of one
 * repeated character go beyond, and treating those as too big is the price of a bounded count.
 */
export const MAX_CHARS_PER_TOKEN = 32;

/** Every token covers at least one UTF-8 byte, and a UTF-16 unit is at most three of them. */
const MAX_TOKENS_PER_CHAR = 3;

let loaded: Tokenizer | undefined;

/**
 * gpt-tokenizer, loaded at the first count: its rank table takes ~190 MB under Bun, which an
 * OpenCode that never forks must not pay. Loaded synchronously because a dynamic import blocks
 * the event loop just as long (the table is built while the module evaluates) and would make
 * every counting caller async.
 */
function tokenizer(): Tokenizer {
  loaded ??= createRequire(import.meta.url)("gpt-tokenizer") as Tokenizer;
  return loaded;
}

export function countTextTokens(text: string): number {
  return text.length === 0 ? 0 : tokenizer().countTokens(text, PLAIN_TEXT);
}

/**
 * The token count of `text` when it is at most `limit`, else undefined. The work is bounded by
 * the limit, not by the text: tokenizing stops as soon as the limit is passed.
 */
export function countTokensWithin(text: string, limit: number): number | undefined {
  if (limit < 0) return undefined;
  if (text.length === 0) return 0;
  if (text.length * MAX_TOKENS_PER_CHAR <= limit) return tokenizer().countTokens(text, PLAIN_TEXT);
  if (text.length > (limit + 1) * MAX_CHARS_PER_TOKEN) return undefined;
  const count = tokenizer().isWithinTokenLimit(text, limit, PLAIN_TEXT);
  return count === false ? undefined : count;
}
