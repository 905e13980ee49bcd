/** When a delivery is tried again, and when it is given up. Pure: times come in, times go out. */

export type RetryPolicy = {
  /** Wait after the first failed attempt, in ms; it doubles with each further one. Default 5,000. */
  firstDelayMs: number;
  /** The longest wait between attempts, in ms. Default 1,800,000 (30 minutes). */
  maxDelayMs: number;
  /** How long after it was queued a delivery is still tried, in ms. Default 86,400,000 (24 h). */
  windowMs: number;
};

export const DEFAULT_RETRY: RetryPolicy = { firstDelayMs: 5000, maxDelayMs: 30 * 60_000, windowMs: 24 * 3_600_000 };

/** What one attempt came to. `afterMs`: the receiver's Retry-After; `quiet`: already said in the log. */
export type AttemptOutcome =
  | { kind: "delivered" }
  | { kind: "retry"; reason: string; afterMs?: number }
  | { kind: "fail"; reason: string; quiet?: boolean };

export type NextStep = { kind: "confirm" } | { kind: "retry"; at: number; reason: string } | { kind: "fail"; reason: string };

/** An HTTP answer: 2xx delivered; 408, 425, 429 and 5xx tried again; anything else will not get better by itself. */
export function outcomeOfResponse(status: number, retryAfter: string | null, now: number): AttemptOutcome {
  if (status >= 200 && status < 300) return { kind: "delivered" };
  if (status === 408 || status === 425 || status === 429 || status >= 500) {
    const afterMs = status === 429 || status === 503 ? retryAfterMs(retryAfter, now) : undefined;
    return { kind: "retry", reason: `HTTP ${status}`, ...(afterMs !== undefined ? { afterMs } : {}) };
  }
  if (status >= 300 && status < 400) return { kind: "fail", reason: `HTTP ${status}: the channel's URL redirects; put the URL it redirects to in the options` };
  return { kind: "fail", reason: `HTTP ${status}, not retried: check the channel's URL and format in the options` };
}

/** Retry-After in seconds or as an HTTP date, in ms from now; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now: number): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Wait before the next attempt after `attempts` failed ones: 5 s, 10 s, 20 s, ... up to the cap. */
export function backoffMs(attempts: number, policy: RetryPolicy): number {
  return Math.min(policy.maxDelayMs, policy.firstDelayMs * 2 ** Math.max(0, Math.min(attempts - 1, 30)));
}

/**
 * After an attempt: confirm, try again (never before a Retry-After; the last try falls at the end
 * of the window), or give up once the window is over.
 */
export function nextStep(outcome: AttemptOutcome, item: { attempts: number; createdAt: number }, now: number, policy: RetryPolicy): NextStep {
  if (outcome.kind === "delivered") return { kind: "confirm" };
  if (outcome.kind === "fail") return outcome;
  const deadline = item.createdAt + policy.windowMs;
  const tries = `${item.attempts} attempt${item.attempts === 1 ? "" : "s"}`;
  if (now >= deadline) return { kind: "fail", reason: `gave up after ${tries} over ${hours(policy.windowMs)}; last: ${outcome.reason}` };
  if (outcome.afterMs !== undefined) {
    const at = now + Math.max(1000, outcome.afterMs);
    if (at > deadline) return { kind: "fail", reason: `gave up after ${tries}: the receiver asked to wait past the ${hours(policy.windowMs)} retry window (${outcome.reason})` };
    return { kind: "retry", at, reason: `${outcome.reason}, Retry-After ${Math.round(outcome.afterMs / 1000)} s` };
  }
  return { kind: "retry", at: Math.min(now + backoffMs(item.attempts, policy), deadline), reason: outcome.reason };
}

function hours(ms: number): string {
  return ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : `${Math.round(ms / 1000)} s`;
}
