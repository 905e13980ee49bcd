import type { createOpencodeClient } from "@opencode-ai/sdk";
import type { ForkMessage } from "../fork/fork-types.ts";
import { isAnswerText, toMessageInfo } from "./message-info.ts";
import type { Host, HostAgent, HostMessage, HostSession, PromptInput, SessionActivity } from "./host.ts";

type Client = ReturnType<typeof createOpencodeClient>;
type Result<T> = { data?: T; error?: unknown; response?: Response };

const SERVICE = "opencode-errands";

/**
 * The Host on OpenCode's v1 SDK client (`{ path, query, body }` calls returning `{ data, error }`).
 * With `directory`, every call goes to that directory's instance (a worktree's sessions live there).
 */
export function createOpencodeHost(client: Client, directory?: string): Host {
  const query = directory ? { directory } : undefined;
  return {
    async createSession({ parentID, title }) {
      const session = unwrap(await client.session.create({ body: { parentID, title }, query }), "create a child session");
      return { id: session.id };
    },
    async forkSession({ sessionID, messageID, title }) {
      const forked = unwrap(await client.session.fork({ path: { id: sessionID }, body: { messageID }, query }), "fork the session");
      unwrap(await client.session.update({ path: { id: forked.id }, body: { title }, query }), "title the forked session");
      return { id: forked.id };
    },
    async sessionExists(sessionID) {
      const result = (await client.session.get({ path: { id: sessionID }, query })) as Result<unknown>;
      if (result.response?.status === 404) return false;
      unwrap(result, "look up a session");
      return true;
    },
    async prompt(input: PromptInput) {
      const body = {
        parts: promptParts(input),
        agent: input.agent,
        model: input.model,
        noReply: input.noReply,
      };
      check(await client.session.promptAsync({ path: { id: input.sessionID }, body, query }), "send a prompt");
    },
    async abort(sessionID) {
      check(await client.session.abort({ path: { id: sessionID }, query }), "abort a session");
    },
    async statuses() {
      const all = unwrap(await client.session.status({ query }), "read session statuses") as Record<string, { type: string }>;
      const out: Record<string, SessionActivity> = {};
      for (const [id, status] of Object.entries(all ?? {})) {
        if (status?.type === "busy" || status?.type === "retry") out[id] = status.type;
      }
      return out;
    },
    async recentMessages(sessionID, limit) {
      const messages = unwrap(await client.session.messages({ path: { id: sessionID }, query: { ...query, limit } }), "read messages");
      // The server applies the limit too; cutting here keeps the contract whatever it answers.
      return (messages as RawMessage[]).slice(-limit).map(toHostMessage);
    },
    async sessionHistory(sessionID) {
      return unwrap(await client.session.messages({ path: { id: sessionID }, query }), "read the session history") as unknown as ForkMessage[];
    },
    async listSessions() {
      const sessions = unwrap(await client.session.list({ query }), "list sessions") as Array<{ id: string; parentID?: string; time: { created: number; updated?: number } }>;
      return (sessions ?? []).map((s): HostSession => ({ id: s.id, ...(s.parentID ? { parentID: s.parentID } : {}), updatedAt: s.time.updated ?? s.time.created }));
    },
    async agents() {
      const agents = unwrap(await client.app.agents(), "list agents") as Array<{ name: string; mode: string; model?: { providerID: string; modelID: string } }>;
      return agents.map((a): HostAgent => ({ name: a.name, mode: a.mode, model: a.model }));
    },
    async toast({ title, message, variant }) {
      await client.tui.showToast({ body: { title, message, variant, duration: 5000 } });
    },
    async log(level, message, extra) {
      await client.app.log({ body: { service: SERVICE, level, message, extra } });
    },
  };
}

/**
 * Has OpenCode boot its instance for `directory` now (config, plugins) and load its providers,
 * which a new instance otherwise does at its first prompt, so that a child started there later
 * does not wait for it (a spare worktree). A cheaper call (path.get) booted the instance only: the
 * parent's call to its answer stayed +0.4 s slower than a plain launch's; with this one +0.15 s.
 */
export async function warmDirectory(client: Client, directory: string): Promise<void> {
  unwrap(await client.config.providers({ query: { directory } }), "open the directory");
}

/** A notice is two text parts: the person's line, and the payload as a synthetic part the TUI does not show. */
function promptParts({ text, visible }: PromptInput): Array<{ type: "text"; text: string; synthetic?: boolean }> {
  if (visible === undefined) return [{ type: "text", text }];
  return [{ type: "text", text: visible }, { type: "text", text, synthetic: true }];
}

type RawMessage = { info: any; parts: Array<{ type: string; text?: string; ignored?: boolean }> };

function toHostMessage({ info, parts }: RawMessage): HostMessage {
  return { ...toMessageInfo(info), text: parts.filter(isAnswerText).map((p) => p.text ?? "").join("\n") };
}

/** For calls that answer with no body (204). */
function check(result: Result<unknown>, what: string): void {
  if (result.error !== undefined || (result.response && !result.response.ok)) unwrap({ ...result, data: undefined }, what);
}

function unwrap<T>(result: Result<T>, what: string): T {
  if (result.error !== undefined || result.data === undefined) {
    const status = result.response?.status;
    throw new Error(`OpenCode refused to ${what}${status ? ` (HTTP ${status})` : ""}: ${describe(result.error)}`);
  }
  return result.data;
}

function describe(error: unknown): string {
  if (error === undefined) return "no data returned";
  if (typeof error === "object" && error !== null) {
    const e = error as { data?: { message?: string }; message?: string; name?: string };
    return e.data?.message ?? e.message ?? e.name ?? JSON.stringify(error);
  }
  return String(error);
}
