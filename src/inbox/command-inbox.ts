import type { SqliteDatabase } from "../store/sqlite-driver.ts";
import { rowToCommand, type CommandKind, type CommandSource, type InboxCommand } from "./inbox-command.ts";

/**
 * The durable inbox (migrations 7 and 14): the dashboard and the command line insert commands, a plugin instance of the
 * command's project claims each one in a transaction (so with several OpenCode processes on
 * one database exactly one applies it) and records the outcome.
 */
export class CommandInbox {
  constructor(private readonly db: SqliteDatabase) {}

  /** version: for approve, the proposalVersion() of the definition the user was shown (migration 16). */
  submit(projectId: string, kind: CommandKind, targetId: string, now: number, source: CommandSource = "dashboard", version?: string): InboxCommand {
    this.db.prepare("INSERT INTO dashboard_commands (project_id, kind, target_id, status, created_at, source, version) VALUES (?, ?, ?, 'pending', ?, ?, ?)")
      .run(projectId, kind, targetId, now, source, version ?? null);
    const row = this.db.prepare("SELECT * FROM dashboard_commands WHERE id = last_insert_rowid()").get()!;
    return rowToCommand(row);
  }

  pending(projectId: string): InboxCommand[] {
    return this.db.prepare("SELECT * FROM dashboard_commands WHERE project_id = ? AND status = 'pending' ORDER BY id")
      .all(projectId).map(rowToCommand);
  }

  /** True when this caller won the command; false when another instance already has it. */
  claim(id: number, by: string, now: number): boolean {
    return this.db.transaction(() =>
      this.db.prepare("UPDATE dashboard_commands SET status = 'claimed', claimed_by = ?, claimed_at = ? WHERE id = ? AND status = 'pending'")
        .run(by, now, id).changes === 1,
    );
  }

  finish(id: number, status: "done" | "failed", outcome: string, now: number): void {
    this.db.prepare("UPDATE dashboard_commands SET status = ?, outcome = ?, ended_at = ? WHERE id = ?").run(status, outcome, now, id);
  }

  get(id: number): InboxCommand | undefined {
    const row = this.db.prepare("SELECT * FROM dashboard_commands WHERE id = ?").get(id);
    return row && rowToCommand(row);
  }
}
