/**
 * The whole stack for an integration test: the mock model, a real `opencode serve` with this
 * package loaded as a plugin, and the server's event stream; plus the few moves a user makes.
 */
import { fileURLToPath } from "node:url";
import { startMockModel, type MockModel, type Responder } from "./mock-model.ts";
import { startOpencode, type OpencodeServer, type StartOptions } from "./opencode-server.ts";
import { subscribeEvents, waitUntil, type EventLog } from "./events.ts";
import { openSqlite, type SqlValue } from "../../src/store/sqlite-driver.ts";

export const PACKAGE_DIR = fileURLToPath(new URL("../..", import.meta.url));
export const MOCK_MODEL = { providerID: "mock", modelID: "mock-model" };

export type Stack = {
  mock: MockModel;
  server: OpencodeServer;
  events: EventLog;
  newSession(title: string): Promise<string>;
  /** Sends a user prompt to a session and waits until that turn is over. */
  say(sessionID: string, text: string): Promise<void>;
  /** Every message of a session, with its parts. */
  messages(sessionID: string): Promise<Array<{ info: any; parts: any[] }>>;
  /** User messages of a session that carry a background-task notification, as text. */
  notifications(sessionID: string): Promise<string[]>;
  stop(): Promise<void>;
};

export type StackOptions = {
  /** The plugin package to load; this checkout by default. */
  pluginDir?: string;
  pluginOptions?: Record<string, unknown>;
  responder?: Responder;
  mock?: MockModel;
  reuse?: Pick<StartOptions, "homeDir" | "projectDir">;
  env?: Record<string, string>;
  /** Extra OpenCode config, shallow-merged over the harness's. */
  config?: Record<string, unknown>;
  /** The mock model's declared token limits (see StartOptions.modelLimit). */
  modelLimit?: StartOptions["modelLimit"];
  /** The mock model's price (see StartOptions.modelCost). */
  modelCost?: StartOptions["modelCost"];
};

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const mock = options.mock ?? (await startMockModel({ responder: options.responder }));
  const server = await startOpencode({
    model: mock.url,
    pluginDir: options.pluginDir ?? PACKAGE_DIR,
    pluginOptions: options.pluginOptions ?? {},
    env: options.env,
    config: options.config,
    modelLimit: options.modelLimit,
    modelCost: options.modelCost,
    ...options.reuse,
  });
  // The first request for a directory boots its instance (plugins included): allow for a slow machine.
  const events = await subscribeEvents(server.client, 30_000).catch(async (error) => {
    const log = (await server.logFile().catch(() => "")).split("\n").slice(-12).join("\n");
    await server.stop();
    throw new Error(`${error.message} (server ${server.url})\nlast server log lines:\n${log}`);
  });
  const client = server.client;

  const stack: Stack = {
    mock,
    server,
    events,
    async newSession(title) {
      const created = await client.session.create({ body: { title } });
      if (!created.data) throw new Error(`session.create failed: ${JSON.stringify(created.error)}`);
      return created.data.id;
    },
    async say(sessionID, text) {
      const result = await client.session.prompt({
        path: { id: sessionID },
        body: { agent: "build", model: MOCK_MODEL, parts: [{ type: "text", text }] },
      });
      if (result.error) {
        const log = await server.logFile().catch(() => "");
        const errors = log.split("\n").filter((line) => /ERROR/.test(line)).slice(-5).join("\n");
        throw new Error(`prompt failed: ${JSON.stringify(result.error)}\nserver errors:\n${errors}`);
      }
    },
    async messages(sessionID) {
      const result = await client.session.messages({ path: { id: sessionID } });
      return (result.data ?? []) as Array<{ info: any; parts: any[] }>;
    },
    async notifications(sessionID) {
      const all = await stack.messages(sessionID);
      return all
        .filter((m) => m.info.role === "user")
        .map((m) => m.parts.filter((p) => p.type === "text").map((p) => p.text).join("\n"))
        .filter((text) => text.includes("<background-task-notification"));
    },
    async stop() {
      events.close();
      await server.stop();
      if (!options.mock) await mock.close();
    },
  };
  return stack;
}

/** The task ids in a tool output ("task_id: ses_..."). */
export function taskIdsIn(text: string): string[] {
  return [...text.matchAll(/task_id: (ses_\w+)/g)].map((m) => m[1]);
}

/**
 * Has the parent's model call background_task once with these arguments (agent "general" unless
 * given) and returns the new task's id; throws with the tool's answer when it launched nothing.
 */
export async function launchTask(stack: Stack, parent: string, args: Record<string, unknown>): Promise<string> {
  const before = (await toolOutputs(stack, parent, "background_task")).length;
  await stack.say(parent, call("background_task", { agent: "general", ...args }));
  const [out] = (await toolOutputs(stack, parent, "background_task")).slice(before);
  const [id] = taskIdsIn(out ?? "");
  if (!id) throw new Error(`background_task launched nothing: ${out}`);
  return id;
}

/** A CALL directive line for the mock model. */
export function call(tool: string, args: Record<string, unknown>): string {
  return `CALL ${tool} ${JSON.stringify(args)}`;
}

/** Text of every tool result the parent's model has been given so far, for one tool name. */
export async function toolOutputs(stack: Stack, sessionID: string, tool: string): Promise<string[]> {
  const all = await stack.messages(sessionID);
  return all.flatMap((m) => m.parts)
    .filter((p) => p.type === "tool" && p.tool === tool && p.state?.status === "completed")
    .map((p) => String(p.state.output));
}

/** The plugin's database in a server's private home (the default dbPath). */
export function pluginDbPath(server: OpencodeServer): string {
  return `${server.homeDir}/.local/share/opencode-errands/errands.db`;
}

/** Rows of a query on the plugin's database, read on a connection of its own (the servers keep writing it). */
export function queryDb<T = any>(dbPath: string, sql: string, ...params: SqlValue[]): T[] {
  const db = openSqlite(dbPath, { readonly: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

export type PermissionRequest = { id: string; sessionID: string; permission: string; patterns: string[] };

/** The server's pending permission prompts, through its HTTP API (what the TUI shows the user). */
export async function pendingPermissions(stack: Stack): Promise<PermissionRequest[]> {
  const res = await fetch(`${stack.server.url}/permission?directory=${encodeURIComponent(stack.server.projectDir)}`);
  return (await res.json()) as PermissionRequest[];
}

/** Answers a permission prompt as the user would. */
export function answerPermission(stack: Stack, id: string, answer: "once" | "always" | "reject"): Promise<Response> {
  return fetch(`${stack.server.url}/permission/${id}/reply?directory=${encodeURIComponent(stack.server.projectDir)}`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ reply: answer }),
  });
}

export { waitUntil };
