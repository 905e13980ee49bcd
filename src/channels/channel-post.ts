import type { HttpRequest } from "./formats/channel-format.ts";
import { outcomeOfResponse, type AttemptOutcome } from "./retry-policy.ts";

export type Fetch = typeof fetch;

/**
 * One attempt: POSTs the request to its URL with plain fetch, cut off after `timeoutMs` (real time) or when
 * `stop` aborts. Never throws. The reason it gives never holds the URL: only a status code, an
 * error code or a timeout (fetch's own error texts can name the address).
 */
export async function postOnce(
  fetchFn: Fetch, request: HttpRequest, timeoutMs: number, stop: AbortSignal, now: () => number,
): Promise<AttemptOutcome> {
  const controller = new AbortController();
  const onStop = () => controller.abort();
  stop.addEventListener("abort", onStop);
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  timer.unref?.();
  try {
    // redirect: manual: a followed 301/302 would turn the POST into a GET that "succeeds" with no body.
    const response = await fetchFn(request.url, { method: "POST", headers: request.headers, body: request.body, signal: controller.signal, redirect: "manual" });
    await response.body?.cancel().catch(() => {});
    return outcomeOfResponse(response.status, response.headers.get("retry-after"), now());
  } catch (error) {
    if (controller.signal.aborted) return { kind: "retry", reason: stop.aborted ? "stopped before an answer" : `no answer within ${Math.round(timeoutMs / 1000)} s` };
    return { kind: "retry", reason: `network error (${errorCode(error)})` };
  } finally {
    clearTimeout(timer);
    stop.removeEventListener("abort", onStop);
  }
}

/** ECONNREFUSED, ENOTFOUND, ConnectionRefused (Bun), ...: the code alone, never the message. */
function errorCode(error: unknown): string {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | undefined;
  const code = e?.cause?.code ?? e?.code;
  return typeof code === "string" && /^[A-Za-z_]{1,40}$/.test(code) ? code : "no connection";
}
