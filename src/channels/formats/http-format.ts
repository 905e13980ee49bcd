/** What the formats that POST to a URL share: the url check and the common headers. */
import { checkHttpUrl } from "../../core/option-checks.ts";
import type { HttpRequest, RequestContext } from "./channel-format.ts";

/** The channel's url, checked (problems pushed when it is missing or unsafe). */
export function checkUrl(at: string, input: Record<string, unknown>, problems: string[], example: string): string | undefined {
  return checkHttpUrl(at, input.url, problems, { what: "the http(s) URL to POST to", example, credentials: "use a URL whose token is in its path" })?.href;
}

export function httpRequest(url: string | undefined, ctx: RequestContext, headers: Record<string, string>, body: string): HttpRequest {
  return { kind: "http", url: url ?? "", headers: { "User-Agent": "opencode-errands", "Idempotency-Key": ctx.deliveryId, ...headers }, body };
}

/** The JSON body of an http request, for limits measured inside it. */
export function jsonBodyOf(request: { kind: string; body?: string }): any {
  return request.kind === "http" && request.body ? JSON.parse(request.body) : {};
}
