/** What the dashboard or the command line can ask of the plugin: cancel a task, act on an automation, decide on a proposal. */
export type CommandKind = "cancel_task" | "pause" | "resume" | "run_now" | "delete" | "approve" | "reject";
export const COMMAND_KINDS: readonly CommandKind[] = ["cancel_task", "pause", "resume", "run_now", "delete", "approve", "reject"];

/** Who wrote the command (migration 14); a proposal's decision records it. */
export type CommandSource = "dashboard" | "cli";

/** pending → claimed (by one plugin instance) → done | failed (outcome says why). */
export type CommandStatus = "pending" | "claimed" | "done" | "failed";

export type InboxCommand = {
  id: number;
  projectId: string;
  kind: CommandKind;
  /** The task id (cancel_task) or the automation id (a proposal's, for approve and reject). */
  targetId: string;
  source: CommandSource;
  status: CommandStatus;
  createdAt: number;
  claimedBy?: string;
  claimedAt?: number;
  endedAt?: number;
  /** What happened, or why it failed. */
  outcome?: string;
  /** approve: the version of the proposal the user was shown (proposalVersion); another version is refused. */
  version?: string;
};

export function isCommandKind(value: string): value is CommandKind {
  return (COMMAND_KINDS as readonly string[]).includes(value);
}
