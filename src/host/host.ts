import type { ModelRef } from "../core/task.ts";
import type { ForkMessage } from "../fork/fork-types.ts";

/** A message as the core needs it: who said it, when, whether it finished, and its text. */
export type HostMessage = {
  id: string;
  role: "user" | "assistant";
  createdAt: number;
  completedAt?: number;
  /** True for an assistant message that ended in a tool call (the run goes on). */
  toolCallsPending: boolean;
  /** The provider's error message, when the assistant message failed. */
  error?: string;
  /** The run was aborted (MessageAbortedError): by a user, or by OpenCode disposing the instance. */
  aborted?: boolean;
  /** The message's text parts joined, synthetic ones too: what the model reads (no tool output, no reasoning). */
  text: string;
  /** The host's compaction summary of older history (an assistant message nobody asked for): never a run's answer. */
  summary?: boolean;
  /** A user message: the agent and model the session runs with from it on. */
  agent?: string;
  model?: ModelRef;
  /** An assistant message's tokens and cost as the host reports them (zeros until the request ends). */
  usage?: MessageUsage;
};

/** One model request's tokens by kind and cost in USD (0 for a model without a price). */
export type MessageUsage = { input: number; output: number; reasoning: number; cacheRead: number; cacheWrite: number; costUsd: number };

/** A session of the project as a list shows it. */
export type HostSession = { id: string; parentID?: string; updatedAt: number };

export type HostAgent = { name: string; mode: string; model?: ModelRef };

export type SessionActivity = "busy" | "retry" | "idle";

/** What a tool part says about one call, as far as the host tells it (see docs/host-notes.md). */
export type ToolCallInfo = {
  status: "pending" | "running" | "completed" | "error";
  /** Files the call writes, as the model named them (write/edit: filePath; a patch: every file it names). */
  files: { path: string; action: "written" | "edited" | "patched" | "created" | "deleted" }[];
  /** bash: the command line. */
  command?: string;
  exitCode?: number;
  startedAt?: number;
  endedAt?: number;
  /** status error: the first line of the error. */
  error?: string;
  /** edit: lines added and removed, when the host reports them. */
  additions?: number;
  deletions?: number;
  /** The call's input, serialised and capped: equal inputs give equal keys (loop detection). */
  inputKey: string;
};

/** What the core hears from the host, already normalised from the host's event shapes. */
export type HostEvent =
  | { type: "idle"; sessionID: string }
  | { type: "status"; sessionID: string; status: SessionActivity; retry?: { attempt: number; message: string; nextAt?: number } }
  | { type: "permission"; sessionID: string; title: string }
  | { type: "permission-replied"; sessionID: string }
  | { type: "error"; sessionID: string; name: string; message: string }
  | { type: "deleted"; sessionID: string }
  | { type: "tool"; sessionID: string; callID: string; tool: string; call?: ToolCallInfo }
  | { type: "message"; sessionID: string; message: Omit<HostMessage, "text"> }
  | { type: "text"; sessionID: string; messageID: string; partID: string; text: string }
  | { type: "activity"; sessionID: string };

export type PromptInput = {
  sessionID: string;
  /** What the model reads. With `visible`, it is sent as a synthetic part: the TUI does not show it. */
  text: string;
  /** A plugin notice: the line a person sees (its own text part); `text` then holds the payload for the model. */
  visible?: string;
  agent: string;
  model?: ModelRef;
  /** Store the message without starting a turn. */
  noReply?: boolean;
};

/**
 * The one seam between the plugin and OpenCode. The core only talks to the host through this.
 *
 * Contract:
 * - Every method rejects with an Error whose message is fit to show a user when the host refuses.
 * - `prompt` returns as soon as the host has accepted the message; it never waits for the turn.
 *   With `visible`, the message holds two text parts: `visible` as a plain part, then `text` as a
 *   synthetic one (hidden from the person, read by the model); both come back in the message's text.
 * - `statuses` answers for all sessions in one call; a session missing from it is idle.
 * - `recentMessages` returns at most `limit` of the newest messages, oldest first.
 * - `sessionExists` is false only when the host says the session is gone, never on other errors.
 * - `listSessions` returns the project's sessions, children too (with their parentID).
 * test/helpers/host-contract.ts checks this for every Host (the adapter, the tests' FakeHost).
 */
export interface Host {
  /** `directory`: where the session works (a worktree); absent: this instance's directory. */
  createSession(input: { parentID?: string; title: string; directory?: string }): Promise<{ id: string }>;
  forkSession(input: { sessionID: string; messageID?: string; title: string; directory?: string }): Promise<{ id: string }>;
  sessionExists(sessionID: string): Promise<boolean>;
  prompt(input: PromptInput): Promise<void>;
  abort(sessionID: string): Promise<void>;
  statuses(): Promise<Record<string, SessionActivity>>;
  recentMessages(sessionID: string, limit: number): Promise<HostMessage[]>;
  /** Every message of a session with its parts, as the host stores them, oldest first. */
  sessionHistory(sessionID: string): Promise<ForkMessage[]>;
  agents(): Promise<HostAgent[]>;
  listSessions(): Promise<HostSession[]>;
  toast(input: { title: string; message: string; variant: "info" | "success" | "warning" | "error" }): Promise<void>;
  log(level: "debug" | "info" | "warn" | "error", message: string, extra?: Record<string, unknown>): Promise<void>;
}
