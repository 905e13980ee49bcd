import type { Host, HostAgent, HostEvent, HostMessage, PromptInput, SessionActivity } from "../../src/host/host.ts";
import type { FakeClock } from "./fake-clock.ts";
import type { ForkMessage } from "../../src/fork/fork-types.ts";

type FakeSession = { id: string; parentID?: string; title: string; messages: HostMessage[]; activity: SessionActivity; createdAt?: number };

/**
 * An in-memory OpenCode for unit tests. Prompts are recorded and make a session busy; the test
 * decides when a run ends (`finishRun`) and which events the core hears (`emit`).
 */
export class FakeHost implements Host {
  sessions = new Map<string, FakeSession>();
  prompts: PromptInput[] = [];
  aborted: string[] = [];
  logs: { level: string; message: string }[] = [];
  toasts: string[] = [];
  statusCalls = 0;
  messageCalls = 0;
  agentList: HostAgent[] = [
    { name: "general", mode: "subagent" },
    { name: "explore", mode: "subagent", model: { providerID: "cheap", modelID: "small" } },
    { name: "build", mode: "primary" },
  ];
  failPrompt = false;
  /** Raw histories (with parts) a test sets; without one, sessionHistory derives it from the messages. Fork copies the parent's. */
  histories = new Map<string, ForkMessage[]>();
  forks: { sessionID: string; messageID?: string; childID: string }[] = [];
  private nextId = 1;
  /** The text parts of a message sent with more than one (a notice), by message id. */
  private partsOf = new Map<string, ForkMessage["parts"]>();
  private listener: (event: HostEvent) => void = () => {};

  constructor(private clock: FakeClock) {}

  onEvent(listener: (event: HostEvent) => void): void {
    this.listener = listener;
  }

  emit(event: HostEvent): void {
    this.listener(event);
  }

  addSession(id: string, activity: SessionActivity = "busy"): void {
    this.sessions.set(id, { id, title: id, messages: [], activity });
  }

  async createSession({ parentID, title }: { parentID?: string; title: string }) {
    const id = `ses_${String(this.nextId++).padStart(4, "0")}child${Math.random().toString(36).slice(2, 8)}`;
    this.sessions.set(id, { id, parentID, title, messages: [], activity: "idle", createdAt: this.clock.now() });
    return { id };
  }

  async forkSession({ sessionID, messageID, title }: { sessionID: string; messageID?: string; title: string }) {
    const child = await this.createSession({ title });
    this.histories.set(child.id, await this.sessionHistory(sessionID));
    this.forks.push({ sessionID, messageID, childID: child.id });
    return child;
  }

  async sessionHistory(sessionID: string): Promise<ForkMessage[]> {
    const stored = this.histories.get(sessionID) ?? this.sessions.get(sessionID)?.messages.map((m) => asForkMessage(m, this.partsOf.get(m.id))) ?? [];
    return structuredClone(stored);
  }

  async sessionExists(sessionID: string) {
    return this.sessions.has(sessionID);
  }

  async prompt(input: PromptInput) {
    if (this.failPrompt) throw new Error("prompt refused");
    const session = this.require(input.sessionID);
    this.prompts.push(input);
    // As OpenCode does, a user message records the agent and model the session runs with from it on,
    // and a notice is two text parts (the line a person sees, the synthetic payload): text joins them.
    const texts = input.visible === undefined ? [input.text] : [input.visible, input.text];
    const stored = { ...message("user", this.clock.now(), texts.join("\n")), agent: input.agent, ...(input.model ? { model: input.model } : {}) };
    if (input.visible !== undefined) this.partsOf.set(stored.id, [{ type: "text", text: input.visible }, { type: "text", text: input.text, synthetic: true }]);
    session.messages.push(stored);
    if (!input.noReply) session.activity = "busy";
  }

  async abort(sessionID: string) {
    this.aborted.push(sessionID);
    this.require(sessionID).activity = "idle";
  }

  async statuses() {
    this.statusCalls++;
    const out: Record<string, SessionActivity> = {};
    for (const s of this.sessions.values()) if (s.activity !== "idle") out[s.id] = s.activity;
    return out;
  }

  async recentMessages(sessionID: string, limit: number) {
    this.messageCalls++;
    return this.require(sessionID).messages.slice(-limit).map((m) => ({ ...m }));
  }

  async agents() {
    return this.agentList;
  }

  async listSessions() {
    return [...this.sessions.values()].map((s) => ({
      id: s.id, ...(s.parentID ? { parentID: s.parentID } : {}), updatedAt: Math.max(s.createdAt ?? 0, ...s.messages.map((m) => m.createdAt)),
    }));
  }

  async toast({ message }: { message: string }) {
    this.toasts.push(message);
  }

  async log(level: string, message: string) {
    this.logs.push({ level, message });
  }

  /** The child answers: an assistant message is stored and the session goes idle (no event unless `emitIdle`). */
  finishRun(sessionID: string, text: string, opts: { error?: string; emitIdle?: boolean } = {}): void {
    const session = this.require(sessionID);
    const now = this.clock.now();
    session.messages.push({ ...message("assistant", now, text), completedAt: now, error: opts.error });
    session.activity = "idle";
    if (opts.emitIdle !== false) this.emit({ type: "idle", sessionID });
  }

  setActivity(sessionID: string, activity: SessionActivity, emit = true): void {
    this.require(sessionID).activity = activity;
    if (emit) this.emit(activity === "idle" ? { type: "idle", sessionID } : { type: "status", sessionID, status: activity });
  }

  promptsTo(sessionID: string): PromptInput[] {
    return this.prompts.filter((p) => p.sessionID === sessionID);
  }

  private require(id: string): FakeSession {
    const session = this.sessions.get(id);
    if (!session) throw new Error(`no session ${id}`);
    return session;
  }
}

let messageSeq = 0;
function message(role: "user" | "assistant", at: number, text: string): HostMessage {
  return { id: `msg_${++messageSeq}`, role, createdAt: at, toolCallsPending: false, text };
}

function asForkMessage(m: HostMessage, parts?: ForkMessage["parts"]): ForkMessage {
  return { info: { id: m.id, role: m.role, time: { created: m.createdAt, completed: m.completedAt } }, parts: parts ?? (m.text ? [{ type: "text", text: m.text }] : []) };
}
