/**
 * The webhook HTTP listener: `POST /hooks/<name>`, signed, size- and rate-limited. It holds no
 * state beyond the rate limits: which hooks exist (`lookup`) and what a delivery does (`accept`)
 * come from the caller. Secrets, signatures and bodies are never logged.
 *
 * The signature is checked first: a correctly signed delivery counts only against its hook's
 * limit, and requests that fail the check count against their source address's own limit, so a
 * flood of unsigned requests cannot crowd out the signed ones; a signed replay (`seen`) is answered
 * as a duplicate before it counts, so replays cannot crowd them out either. A name with no (active) hook is
 * checked against a random secret and answered exactly as a wrong signature: a stranger cannot
 * tell which names exist.
 */
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { WebhookRateLimit } from "./webhook-rate-limit.ts";
import { newWebhookSecret, verifySignedDelivery } from "./webhook-signature.ts";

export type WebhookDelivery = {
  name: string;
  /** `X-GitHub-Delivery` or `webhook-id`; the caller uses it to answer replays as duplicates. */
  deliveryId?: string;
  /** The `X-GitHub-Event` header, e.g. "push". */
  githubEvent?: string;
  contentType?: string;
  /** The raw body as UTF-8 text, at most maxBodyBytes. */
  body: string;
  /** sha256 of (hook, signature, body) in hex: the same signed content under any (or no) delivery id. */
  contentKey: string;
};

/** 202: stored (and maybe started: runId); 200: a delivery id already seen, not run again. */
export type AcceptAnswer = { status: 202; runId?: number | string; note?: string } | { status: 200; duplicate: true };

export type WebhookLog = (level: "debug" | "info" | "warn" | "error", message: string, extra?: Record<string, unknown>) => void | Promise<void>;

export type WebhookHandlerOptions = {
  /** The hook's secret, or undefined when no hook of that name takes deliveries (401, as a wrong signature). May be async. */
  lookup(name: string): { secret: string } | undefined | Promise<{ secret: string } | undefined>;
  /** Stores the delivery before it is answered. Throwing answers 500 (logged); the sender retries. */
  accept(delivery: WebhookDelivery): AcceptAnswer | Promise<AcceptAnswer>;
  /** Whether a signed delivery's id or content was stored already: a replay is answered 200 before it counts against the hook's limit. */
  seen?(delivery: Pick<WebhookDelivery, "name" | "deliveryId" | "contentKey">): boolean | Promise<boolean>;
  /**
   * Signed deliveries per hook, and refused requests per source address, in any 60 s window;
   * 0 turns the limits off. Default 60.
   */
  ratePerMinute?: number;
  /** Largest body accepted, in bytes (413 above it). Default 1 MB. */
  maxBodyBytes?: number;
  log?: WebhookLog;
  /** Milliseconds since 1970: the rate limit and Standard Webhooks timestamps use it. Default Date.now. */
  now?: () => number;
};

export type WebhookListenerOptions = WebhookHandlerOptions & { host: string; /** 0 picks a free port. */ port: number };

export type WebhookListener = { listening: true; /** e.g. http://127.0.0.1:4097 (no path). */ url: string; close(): Promise<void> } | { listening: false; reason: string };

const DEFAULT_MAX_BODY = 1_048_576;
const RATE_WARN_EVERY_MS = 60_000;
/** Source addresses the refusal limit (and the log's once-a-minute) keeps at most. */
const MAX_ADDRESSES = 10_000;

/**
 * Listens on host:port. Never throws: a port already taken (another OpenCode process listens
 * there) or any other listen failure resolves `{ listening: false, reason }`.
 */
export async function startWebhookListener(options: WebhookListenerOptions): Promise<WebhookListener> {
  let handler: (req: IncomingMessage, res: ServerResponse) => void;
  try {
    handler = webhookHandler(options);
  } catch (error) {
    return { listening: false, reason: messageOf(error) };
  }
  const server = createServer(handler);
  // Short keep-alive and bounded waits: a slow or idle client cannot hold the listener, and close() is quick.
  server.keepAliveTimeout = 2_000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  const failure = await listen(server, options.port, options.host);
  if (failure) return { listening: false, reason: failure };
  server.on("error", (error) => safeLog(options.log, "error", "webhook listener error", { error: messageOf(error) }));
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    listening: true,
    url: `http://${options.host.includes(":") ? `[${options.host}]` : options.host}:${port}`,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}

/** The request handler alone (the benchmark mounts it beside an unsigned route). */
export function webhookHandler(options: WebhookHandlerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const ratePerMinute = options.ratePerMinute ?? 60;
  const signedLimit = new WebhookRateLimit(ratePerMinute);
  const refusedLimit = new WebhookRateLimit(ratePerMinute, MAX_ADDRESSES);
  const decoySecret = newWebhookSecret();
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY;
  if (!Number.isInteger(maxBody) || maxBody < 1) throw new Error(`maxBodyBytes must be a whole number of bytes >= 1, got ${maxBody}`);
  const now = options.now ?? Date.now;
  const lastWarning = new Map<string, number>();
  const log: WebhookLog = (level, message, extra) => safeLog(options.log, level, message, extra);
  /** One warning a minute per key: a flood of refusals does not flood OpenCode's log. */
  const warnOnce = (key: string, message: string, extra: Record<string, unknown>) => {
    if (now() - (lastWarning.get(key) ?? -Infinity) < RATE_WARN_EVERY_MS) return;
    if (lastWarning.size >= MAX_ADDRESSES) lastWarning.clear();
    lastWarning.set(key, now());
    log("warn", message, extra);
  };
  const tooMany = (req: IncomingMessage, res: ServerResponse, wait: number, error: string) =>
    reply(req, res, 429, { error }, { "retry-after": String(Math.ceil(wait / 1000)) });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const name = hookName(req.url);
    if (name === undefined) return reply(req, res, 404, { error: "not found: deliveries go to POST /hooks/<name>" });
    if (req.method !== "POST") return reply(req, res, 405, { error: "only POST is accepted" }, { allow: "POST" });
    const body = await readBody(req, maxBody);
    if (body === "gone") return void req.socket.destroy();
    if (body === "too large") {
      warnOnce(`413 ${name}`, `webhook delivery refused, body over ${maxBody} bytes (413)`, {});
      return reply(req, res, 413, { error: `body over ${maxBody} bytes` });
    }
    const hook = await options.lookup(name);
    const check = verifySignedDelivery(hook?.secret ?? decoySecret, req.headers, body, now());
    if (!hook || !check.ok) {
      const address = req.socket.remoteAddress ?? "unknown";
      const wait = refusedLimit.take(address, now());
      if (wait > 0) {
        warnOnce(`429 ${address}`, "webhook requests that fail the signature check are over the rate limit for their address; refused (429)", { from: address, ratePerMinute });
        return tooMany(req, res, wait, "too many unsigned or wrongly signed requests; retry later");
      }
      const reason = check.ok ? "the signature does not match the body" : check.reason;
      if (hook) warnOnce(`401 ${name}`, `webhook ${name}: delivery refused (401): ${reason}`, { hook: name, from: address });
      else warnOnce("401 unknown", "webhook request for a name with no active hook refused (401, as a wrong signature)", { from: address });
      return reply(req, res, 401, { error: reason });
    }
    const delivery = {
      name,
      deliveryId: check.deliveryId,
      githubEvent: single(req.headers["x-github-event"]),
      contentType: single(req.headers["content-type"]),
      body: body.toString("utf8"),
      contentKey: contentKey(name, check.signature, body),
    };
    // Whoever captured one signed delivery could replay it to spend the hook's limit and starve its real sender.
    if (await options.seen?.(delivery)) return reply(req, res, 200, { duplicate: true });
    const wait = signedLimit.take(name, now());
    if (wait > 0) {
      warnOnce(`429 ${name}`, `webhook ${name}: deliveries over the rate limit are refused (429)`, { hook: name, ratePerMinute });
      return tooMany(req, res, wait, "too many deliveries for this hook; retry later");
    }
    const answer = await options.accept(delivery);
    if (answer.status === 200) return reply(req, res, 200, { duplicate: true });
    reply(req, res, 202, { accepted: true, run: answer.runId ?? null, ...(answer.note ? { note: answer.note } : {}) });
  }

  return (req, res) => {
    handle(req, res).catch((error) => {
      log("error", "webhook delivery failed (500)", { hook: hookName(req.url), error: messageOf(error) });
      reply(req, res, 500, { error: "the delivery could not be handled; send it again" });
    });
  };
}

/**
 * The body, or "too large" as soon as it passes maxBytes (by its Content-Length, or while it
 * streams: what came is dropped and the rest is not read), or "gone" if the client left.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | "too large" | "gone"> {
  if (Number(req.headers["content-length"]) > maxBytes) return Promise.resolve("too large");
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (result: Buffer | "too large" | "gone") => {
      req.off("data", onData).off("end", onEnd).off("close", onClose).off("error", onClose);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) settle("too large");
      else chunks.push(chunk);
    };
    const onEnd = () => settle(Buffer.concat(chunks, size));
    const onClose = () => settle("gone");
    req.on("data", onData).on("end", onEnd).on("close", onClose).on("error", onClose);
  });
}

/**
 * A small JSON answer. A body not read to its end (an early answer, or too large) is read on and
 * dropped, not kept, and the connection stays usable: closing a connection with unread data
 * resets it, and a client still sending then sees EPIPE or ECONNRESET instead of this answer
 * (measured under Node and Bun). requestTimeout bounds how long a sender can keep that up.
 */
function reply(req: IncomingMessage, res: ServerResponse, status: number, payload: object, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return void res.end();
  const text = JSON.stringify(payload);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    ...headers,
  });
  res.end(text);
  if (!req.complete) req.resume();
}

/** The <name> of /hooks/<name> (query ignored), or undefined for any other path. */
function hookName(url: string | undefined): string | undefined {
  const match = /^\/hooks\/([^/?#]+)\/?(?:[?#]|$)/.exec(safePath(url));
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1]!);
  } catch {
    return undefined;
  }
}

/** The path part of the request target (also for absolute-form targets), query included. */
function safePath(url: string | undefined): string {
  const target = url ?? "/";
  if (target.startsWith("/")) return target;
  try {
    const parsed = new URL(target);
    return parsed.pathname + parsed.search;
  } catch {
    return "/";
  }
}

function listen(server: Server, port: number, host: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const onError = (error: NodeJS.ErrnoException) => {
      resolve(
        error.code === "EADDRINUSE"
          ? `port ${port} on ${host} is in use (another OpenCode process may be listening for webhooks there)`
          : `cannot listen on ${host}:${port}: ${messageOf(error)}`,
      );
    };
    server.once("error", onError);
    try {
      server.listen(port, host, () => {
        server.off("error", onError);
        resolve(undefined);
      });
    } catch (error) {
      onError(error as NodeJS.ErrnoException);
    }
  });
}

/** Logging never throws into the listener, and a rejected async log is not left unhandled. */
function safeLog(log: WebhookLog | undefined, level: Parameters<WebhookLog>[0], message: string, extra?: Record<string, unknown>): void {
  try {
    void Promise.resolve(log?.(level, message, extra)).catch(() => {});
  } catch {
    // A logger that throws has nowhere else to report to.
  }
}

/** The dedupe key of a signed delivery's content: its hook, its verified signature and its body. */
function contentKey(name: string, signature: string, body: Buffer): string {
  return createHash("sha256").update(`${name}\n${signature}\n`).update(body).digest("hex");
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
