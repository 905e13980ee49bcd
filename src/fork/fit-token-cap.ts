import { isCompactionRequest, summarizedRequestId } from "./compaction-boundary.ts";
import type { ForkMessage } from "./fork-types.ts";
import { countMessageTokensWithin } from "./message-tokens.ts";
import { truncateMessageOutputs } from "./truncate-tool-output.ts";

export type FitOptions = { budget: number; toolOutputLimit: number };

export type FitResult<M> = {
  /** Chronological; starts at a user message (or is empty). */
  messages: M[];
  tokens: number;
  truncatedOutputs: number;
  startedAtCompaction: boolean;
};

type Prepared<M> = { message: M; tokens: number; truncated: number };
type FittedTurn<M> = { kept: Prepared<M>[]; whole: boolean };

/**
 * The newest messages that fit `budget` tokens, tool outputs cut first. Walks back one turn (a user
 * message and the assistant messages answering it) at a time and stops at the first message that
 * does not fit, or at the latest finished compaction request: nothing older than that turn is read.
 */
export function fitTokenCap<M extends ForkMessage>(history: readonly M[], options: FitOptions): FitResult<M> {
  const keptNewestFirst: Prepared<M>[] = [];
  const summarized = new Set<string>();
  let remaining = options.budget;
  let end = history.length;
  let startedAtCompaction = false;
  while (end > 0 && remaining > 0) {
    const start = findTurnStart(history, end, summarized);
    if (start < 0) break; // assistant messages with no user message before them cannot start a history
    const turn = fitTurn(history, start, end, remaining, options.toolOutputLimit);
    keptNewestFirst.push(...turn.kept);
    remaining -= sumTokens(turn.kept);
    if (turn.kept.length > 0 && summarized.has(history[start].info.id) && isCompactionRequest(history[start])) {
      startedAtCompaction = true;
      break;
    }
    if (!turn.whole) break;
    end = start;
  }
  const kept = keptNewestFirst.reverse();
  return {
    messages: kept.map((item) => item.message),
    tokens: options.budget - remaining,
    truncatedOutputs: kept.reduce((sum, item) => sum + item.truncated, 0),
    startedAtCompaction,
  };
}

/** Index of the user message that opens the turn ending before `end`; notes summaries passed. */
function findTurnStart(history: readonly ForkMessage[], end: number, summarized: Set<string>): number {
  for (let index = end - 1; index >= 0; index--) {
    const message = history[index];
    if (message.info.role === "user") return index;
    const requestId = summarizedRequestId(message);
    if (requestId !== undefined) summarized.add(requestId);
  }
  return -1;
}

/**
 * The turn's user message is counted first so it always comes with any assistant message kept;
 * then its assistant messages, newest first, as long as they fit. Newest first in the result.
 */
function fitTurn<M extends ForkMessage>(
  history: readonly M[],
  start: number,
  end: number,
  budget: number,
  toolOutputLimit: number,
): FittedTurn<M> {
  const user = prepare(history[start], budget, toolOutputLimit);
  if (!user) return { kept: [], whole: false };
  let left = budget - user.tokens;
  const kept: Prepared<M>[] = [];
  let index = end - 1;
  for (; index > start; index--) {
    const answer = prepare(history[index], left, toolOutputLimit);
    if (!answer) break;
    kept.push(answer);
    left -= answer.tokens;
  }
  const whole = index === start;
  // A user message whose answers were all dropped would leave the child a question with no reply.
  if (!whole && kept.length === 0) return { kept: [], whole: false };
  kept.push(user);
  return { kept, whole };
}

function prepare<M extends ForkMessage>(message: M, budget: number, toolOutputLimit: number): Prepared<M> | undefined {
  const cut = truncateMessageOutputs(message, toolOutputLimit);
  const tokens = countMessageTokensWithin(cut.message, budget);
  return tokens === undefined ? undefined : { message: cut.message, tokens, truncated: cut.truncated };
}

function sumTokens(items: readonly Prepared<unknown>[]): number {
  return items.reduce((sum, item) => sum + item.tokens, 0);
}
