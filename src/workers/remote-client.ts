/**
 * A small fetch client for a worker's OpenCode server, shaped like the part of the v1 SDK client
 * that the host adapter (src/host/opencode-host.ts) calls: `{ path, query, body }` in,
 * `{ data, error, response }` out. The plugin cannot load @opencode-ai/sdk at run time.
 *
 * Like the SDK, a GET carries the worker's project directory as `?directory=`, other methods as
 * the `x-opencode-directory` header (URI-encoded). A 401 and a network failure reject with
 * WorkerUnauthorizedError / WorkerUnreachableError; other HTTP errors come back as `{ error }`.
 * The password is only ever put in the Authorization header.
 */
import { parseSse } from "./sse.ts";

export type RemoteClientOptions = {
  url: string;
  username: string;
  password?: string;
  directory: string;
  /** Names the worker in error messages. */
  name?: string;
  /** The variable the password comes from, named in the message for a refused password. */
  passwordEnv?: string;
  fetch?: typeof fetch;
  /** Longest wait for an answer (not for the event stream). Default 30 s. */
  timeoutMs?: number;
};

export type CallOptions = {
  path?: Record<string, string>;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  signal?: AbortSignal;
};

export type CallResult<T = any> = { data?: T; error?: unknown; response: Response };

/** The worker's server refused the credentials (HTTP 401), or none could be sent. */
export class WorkerUnauthorizedError extends Error {
  override name = "WorkerUnauthorizedError";
}

/** The worker's server did not answer: connection refused, DNS, TLS, or a timeout. */
export class WorkerUnreachableError extends Error {
  override name = "WorkerUnreachableError";
}

export type RemoteClient = ReturnType<typeof createRemoteClient>;

const DEFAULT_TIMEOUT_MS = 30_000;

export function createRemoteClient(options: RemoteClientOptions) {
  const request = requester(options);
  const call = (method: string, route: string) => (o: CallOptions = {}) => request(method, route, o);
  return {
    session: {
      create: call("POST", "/session"),
      get: call("GET", "/session/{id}"),
      list: call("GET", "/session"),
      status: call("GET", "/session/status"),
      promptAsync: call("POST", "/session/{id}/prompt_async"),
      abort: call("POST", "/session/{id}/abort"),
      messages: call("GET", "/session/{id}/message"),
    },
    app: { agents: call("GET", "/agent") },

    /** One cheap authenticated call; rejects unless the worker answers 2xx. */
    async ping(signal?: AbortSignal): Promise<void> {
      const result = await request("GET", "/session/status", { signal });
      if (!result.response.ok) throw new Error(`${label(options)} answered HTTP ${result.response.status} to a status check`);
    },

    /** Whether the worker can list its project directory (OpenCode accepts any path as a directory). */
    async checkoutExists(signal?: AbortSignal): Promise<boolean> {
      return (await listFolder(request, ".", signal)) !== undefined;
    },

    /** A file of the worker's checkout (path relative to it, or absolute there); undefined when there is none. */
    async fileContent(path: string): Promise<string | undefined> {
      const result = await request("GET", "/file/content", { query: { path } });
      if (result.response.status === 404) return undefined;
      const file = expect(result, `read ${path}`, options) as { type?: string; content?: string; encoding?: string };
      const content = file.encoding === "base64" ? Buffer.from(file.content ?? "", "base64").toString("utf8") : (file.content ?? "");
      // OpenCode answers a missing file like an empty one: look it up in its folder.
      if (content === "" && !(await fileListed(request, path))) return undefined;
      return content;
    },

    /** One subscription to the worker's `/event` stream: raw events until it ends or `signal` aborts. */
    async *events(signal: AbortSignal): AsyncIterable<unknown> {
      const result = await request("GET", "/event", { signal, stream: true });
      if (!result.response.ok || !result.response.body) throw new Error(`${label(options)} answered HTTP ${result.response.status} to the event stream`);
      yield* parseSse(result.response.body, signal);
    },
  };
}

type Request = (method: string, route: string, o: CallOptions & { stream?: boolean }) => Promise<CallResult>;

function requester(options: RemoteClientOptions): Request {
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return async (method, route, o) => {
    const { url, init } = buildRequest(options, method, route, o);
    const timeout = o.stream ? undefined : AbortSignal.timeout(timeoutMs);
    const signal = o.signal && timeout ? AbortSignal.any([o.signal, timeout]) : (o.signal ?? timeout);
    let response: Response;
    try {
      response = await doFetch(url, { ...init, signal });
    } catch (error) {
      if (o.signal?.aborted) throw o.signal.reason ?? error;
      throw unreachable(options, error, timeout?.aborted ? timeoutMs : undefined);
    }
    if (response.status === 401) {
      await response.body?.cancel();
      throw unauthorized(options);
    }
    if (o.stream) return { data: undefined, response };
    return readResult(response);
  };
}

function buildRequest(options: RemoteClientOptions, method: string, route: string, o: CallOptions) {
  const path = route.replace(/\{(\w+)\}/g, (_, key: string) => encodeURIComponent(o.path?.[key] ?? ""));
  const url = new URL(options.url + path);
  for (const [key, value] of Object.entries(o.query ?? {})) if (value !== undefined) url.searchParams.set(key, String(value));
  const headers: Record<string, string> = { accept: "application/json" };
  if (method === "GET") url.searchParams.set("directory", options.directory);
  else headers["x-opencode-directory"] = encodeURIComponent(options.directory);
  if (options.password !== undefined) headers.authorization = basicAuth(options.username, options.password);
  let body: string | undefined;
  if (o.body !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(o.body);
  }
  return { url, init: { method, headers, body } };
}

async function readResult(response: Response): Promise<CallResult> {
  const text = await response.text();
  const parsed = parseJson(text);
  if (response.ok) return { data: text === "" ? {} : parsed, response };
  return { error: parsed ?? (text || {}), response };
}

function parseJson(text: string): unknown {
  try {
    return text === "" ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function fileListed(request: Request, path: string): Promise<boolean> {
  const slash = path.replace(/\/+$/, "").lastIndexOf("/");
  const folder = slash < 0 ? "." : slash === 0 ? "/" : path.slice(0, slash);
  const name = path.slice(slash + 1);
  const entries = await listFolder(request, folder);
  return entries?.some((entry) => entry.name === name && entry.type === "file") ?? false;
}

/** The folder's entries; undefined when the worker cannot list it (it answers 500 for a missing one). */
async function listFolder(request: Request, folder: string, signal?: AbortSignal): Promise<Array<{ name?: string; type?: string }> | undefined> {
  const result = await request("GET", "/file", { query: { path: folder }, signal });
  return result.response.ok && Array.isArray(result.data) ? result.data : undefined;
}

function expect<T = any>(result: CallResult<T>, what: string, options: RemoteClientOptions): T {
  if (result.response.ok && result.data !== undefined) return result.data;
  const error = result.error as { data?: { message?: string }; message?: string } | undefined;
  const reason = error?.data?.message ?? error?.message ?? "no data returned";
  throw new Error(`${label(options)} refused to ${what} (HTTP ${result.response.status}): ${reason}`);
}

function basicAuth(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, "utf8").toString("base64")}`;
}

function label(options: RemoteClientOptions): string {
  return `worker ${options.name ? `"${options.name}" ` : ""}(${options.url})`;
}

function unauthorized(options: RemoteClientOptions): WorkerUnauthorizedError {
  const fix = options.passwordEnv
    ? options.password === undefined
      ? `the environment variable ${options.passwordEnv} is not set; set it to that server's OPENCODE_SERVER_PASSWORD`
      : `the password in ${options.passwordEnv} is wrong; set it to that server's OPENCODE_SERVER_PASSWORD`
    : `it wants a password: name the environment variable that holds its OPENCODE_SERVER_PASSWORD with "passwordEnv"`;
  const user = options.username !== "opencode" ? ` (or the user name "${options.username}" is)` : "";
  return new WorkerUnauthorizedError(`${label(options)} refused the credentials (HTTP 401): ${fix}${user}`);
}

function unreachable(options: RemoteClientOptions, error: unknown, timedOutAfterMs?: number): WorkerUnreachableError {
  const reason = timedOutAfterMs !== undefined ? `no answer within ${timedOutAfterMs / 1000} s` : networkReason(error);
  return new WorkerUnreachableError(`${label(options)} is unreachable: ${reason}`);
}

/**
 * Node's fetch says "fetch failed" and puts why in `cause` ("connect ECONNREFUSED 10.0.0.5:4096",
 * "other side closed"); Bun's says it in the error itself, with a `code` ("ConnectionRefused").
 */
function networkReason(error: unknown): string {
  const { cause, code, message } = (error ?? {}) as { cause?: { code?: string; message?: string }; code?: string; message?: string };
  if (cause?.message || cause?.code) return cause.message || cause.code!;
  if (message && code) return `${message} (${code})`;
  return message || String(error);
}
