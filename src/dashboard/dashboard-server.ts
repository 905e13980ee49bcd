import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { networkInterfaces } from "node:os";
import type { CommandRepository } from "../store/command-repository.ts";
import { SharedStore } from "../store/shared-store.ts";
import { APP_CSS, APP_JS } from "./assets.ts";
import { DashboardAuth } from "./dashboard-auth.ts";
import { LazyReader } from "./lazy-reader.ts";
import { routePage } from "./dashboard-routes.ts";
import { readCommandForm } from "./command-form.ts";
import { LiveFeed } from "./live-feed.ts";
import { waitingPage } from "./waiting-page.ts";
import type { ForkMessage } from "../fork/fork-types.ts";
import type { SessionMessages } from "./request-rows.ts";
import { SessionCache } from "./session-cache.ts";
import { UNSETTLED_STATUSES } from "../core/task.ts";
import type { ReadModel } from "../store/reads/read-model.ts";
import { spendKey } from "../store/reads/spend-reads.ts";

export type DashboardOptions = {
  dbPath: string;
  /** 0 picks a free port. */
  port: number;
  host: string;
  /** Fixed token (tests); random by default. */
  token?: string;
  now?: () => number;
  livePollMs?: number;
  /**
   * A session's messages, when OpenCode serves the dashboard (it has the host): a task page then
   * lists each request's model, time and tool calls. The command line has none.
   */
  sessionMessages?: (sessionID: string) => Promise<readonly ForkMessage[]>;
  /** The serving OpenCode's option dailyBudgetUsd: home says when today's spend reached it. */
  dailyBudgetUsd?: number;
};

export type Dashboard = {
  /** The URL to open: carries the token. */
  url: string;
  origin: string;
  token: string;
  close(): Promise<void>;
};

const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

/**
 * Serves the dashboard on host:port from the database at dbPath (read-only; commands go to the
 * inbox). The database may not exist yet: the pages say how to get one until the plugin creates it.
 */
export async function startDashboard(options: DashboardOptions): Promise<Dashboard> {
  const reader = new LazyReader(options.dbPath);
  const auth = new DashboardAuth(options.token);
  const now = options.now ?? Date.now;
  const feed = new LiveFeed(() => reader.dataVersion(), options.livePollMs);
  const sessions = options.sessionMessages && new SessionCache(options.sessionMessages, now);
  let writer: SharedStore | undefined;
  // Opened at the first command, and only into a database the plugin made: the dashboard never creates one.
  const inbox = (): CommandRepository | undefined => {
    if (!reader.get()) return undefined;
    writer ??= SharedStore.open(options.dbPath);
    return writer.commands;
  };
  const server = createServer((req, res) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    handle(req, res).catch((error) => fail(res, 500, `The dashboard failed: ${error instanceof Error ? error.message : String(error)}`));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!auth.hostAllowed(req)) return fail(res, 403, "Unknown Host header: open the dashboard by the address it printed.");
    const url = new URL(req.url ?? "/", "http://localhost");
    if (req.method !== "GET" && req.method !== "POST") {
      res.setHeader("allow", "GET, POST");
      return fail(res, 405, "Only GET and POST.");
    }
    if (req.method === "GET" && url.searchParams.has("token")) return exchangeToken(url, res);
    if (!auth.hasCookie(req)) return fail(res, 401, "Not signed in: open the URL the dashboard command printed (it carries the token).");
    if (req.method === "POST") {
      if (!auth.originAllowed(req)) return fail(res, 403, "Refused: a change must come from the dashboard's own page (Origin header).");
      if (url.pathname !== "/command") return fail(res, 404, "No such action.");
      const form = await readCommandForm(req);
      if ("error" in form) return fail(res, 400, form.error);
      const target = inbox();
      if (!target) return fail(res, 409, "There is no database yet, so there is nothing to command: OpenCode creates it when it starts with the plugin.");
      target.submit(form.project, form.kind, form.target, now(), "dashboard", form.version);
      res.writeHead(303, { location: form.back }).end();
      return;
    }
    if (url.pathname === "/events") return feed.add(res);
    if (url.pathname === "/app.js") return send(res, 200, "text/javascript; charset=utf-8", APP_JS);
    if (url.pathname === "/app.css") return send(res, 200, "text/css; charset=utf-8", APP_CSS);
    const ready = reader.get();
    const session = ready && url.pathname === "/task" ? await readSession(ready, sessions, url) : undefined;
    const page = ready ? routePage(ready, url, now(), { session, dailyBudgetUsd: options.dailyBudgetUsd }) : waitingPage(reader.path, reader.problem, url);
    send(res, page.status, "text/html; charset=utf-8", page.body);
  }

  function exchangeToken(url: URL, res: ServerResponse): void {
    if (!auth.matches(url.searchParams.get("token") ?? "")) return fail(res, 401, "Wrong token: open the URL the dashboard command printed.");
    url.searchParams.delete("token");
    res.writeHead(303, { "set-cookie": auth.setCookieHeader(), location: url.pathname + url.search }).end();
  }

  await listen(server, options.port, options.host);
  const port = (server.address() as AddressInfo).port;
  const names = hostNames(options.host, port);
  auth.listening(names, port);
  const origin = `http://${names[0]}`;
  return {
    url: `${origin}/?token=${auth.token}`,
    origin,
    token: auth.token,
    close: async () => {
      feed.close();
      server.closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      reader.close();
      writer?.close();
    },
  };
}

/** A task page's child session's messages from the host, or why not; undefined without a host (the command line) or such a task. */
async function readSession(reader: ReadModel, sessions: SessionCache | undefined, url: URL): Promise<SessionMessages | undefined> {
  const task = sessions && reader.tasks.get(url.searchParams.get("project") ?? "", url.searchParams.get("id") ?? "");
  if (!sessions || !task) return undefined;
  const requests = reader.spend.own([task]).get(spendKey(task.projectId, task.id))?.requests ?? 0;
  return sessions.get(task.id, { key: `${task.status}:${task.progress.toolCalls}:${requests}`, running: UNSETTLED_STATUSES.includes(task.status) });
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

/**
 * The Host header values this server answers to: the address it listens on (every interface's
 * address for 0.0.0.0 or ::), and the loopback names when those reach it. Anything else (a DNS
 * name rebound to this machine) is refused.
 */
function hostNames(host: string, port: number): string[] {
  const wildcard = host === "0.0.0.0" || host === "::";
  const loopback = wildcard || host === "127.0.0.1" || host === "localhost" || host === "::1";
  const own = wildcard ? interfaceAddresses() : [host];
  const names = [...own, ...(loopback ? ["127.0.0.1", "localhost", "::1"] : [])];
  return [...new Set(names)].map((name) => `${name.includes(":") ? `[${name}]` : name}:${port}`);
}

/** External addresses first, so the printed URL works from another machine. */
function interfaceAddresses(): string[] {
  const all = Object.values(networkInterfaces()).flat().filter((i) => i !== undefined);
  return [...all.filter((i) => !i.internal), ...all.filter((i) => i.internal)].map((i) => i.address);
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body) }).end(body);
}

function fail(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) return void res.end();
  send(res, status, "text/plain; charset=utf-8", `${message}\n`);
}
