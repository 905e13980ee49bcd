import { LEASES } from "../core/claims.ts";
import { ClaimTable } from "./claim-table.ts";
import type { CommandKind, CommandSource, CommandStatus, InboxCommand } from "../inbox/inbox-command.ts";
import type { SqliteDatabase, SqliteStatement, SqlRow } from "./sqlite-driver.ts";
import { StatementCache } from "./statement-cache.ts";

/** How long a claimed command is left to its holder (core/claims.ts LEASES says why). */
export const COMMAND_LEASE_MS = LEASES.commandMs;

/**
 * The durable inbox (migrations 7 and 14): the dashboard and the command line insert commands, a
 * plugin instance of the command's project claims each one in a transaction (so with several
 * OpenCode processes on one database exactly one applies it) and records the outcome. A claim
 * whose holder is gone, or whose lease ran out, is taken over (core/claims.ts).
 */
export class CommandRepository {
  private statements = new StatementCache();
  /** The one claim primitive; the inbox spans projects (a command names its own). */
  private readonly claims: ClaimTable<number>;

  constructor(private readonly db: SqliteDatabase) {
    const open = "status IN ('pending', 'claimed')";
    this.claims = new ClaimTable<number>(db, { table: "dashboard_commands", key: "id", byColumn: "claimed_by", atColumn: "claimed_at", open, onClaim: "status = 'claimed'", reentrant: false }, undefined, COMMAND_LEASE_MS);
  }

  /** version: for approve, the proposalVersion() of the definition the user was shown (migration 16). */
  submit(projectId: string, kind: CommandKind, targetId: string, now: number, source: CommandSource = "dashboard", version?: string): InboxCommand {
    this.sql("INSERT INTO dashboard_commands (project_id, kind, target_id, status, created_at, source, version) VALUES (?, ?, ?, 'pending', ?, ?, ?)")
      .run(projectId, kind, targetId, now, source, version ?? null);
    return rowToCommand(this.sql("SELECT * FROM dashboard_commands WHERE id = last_insert_rowid()").get()!);
  }

  /** The project's commands not yet applied: pending, or claimed by an instance that may since have stopped. */
  open(projectId: string): InboxCommand[] {
    return this.sql("SELECT * FROM dashboard_commands WHERE project_id = ? AND status IN ('pending', 'claimed') ORDER BY id")
      .all(projectId).map(rowToCommand);
  }

  /** True when `by` won the command: pending, or claimed by a holder that is gone or out of lease. */
  claim(id: number, by: string, now: number): boolean {
    return this.claims.claim(id, by, now);
  }

  finish(id: number, status: "done" | "failed", outcome: string, now: number): void {
    this.sql("UPDATE dashboard_commands SET status = ?, outcome = ?, ended_at = ? WHERE id = ?").run(status, outcome, now, id);
  }

  get(id: number): InboxCommand | undefined {
    const row = this.sql("SELECT * FROM dashboard_commands WHERE id = ?").get(id);
    return row && rowToCommand(row);
  }

  private sql(text: string): SqliteStatement {
    return this.statements.prepare(this.db, text);
  }
}

export function rowToCommand(row: SqlRow): InboxCommand {
  const command: InboxCommand = {
    id: Number(row.id),
    projectId: String(row.project_id),
    kind: row.kind as CommandKind,
    targetId: String(row.target_id),
    source: row.source === "cli" ? "cli" : "dashboard", // NULL or missing before migration 14
    status: row.status as CommandStatus,
    createdAt: Number(row.created_at),
  };
  if (row.claimed_by != null) command.claimedBy = String(row.claimed_by);
  if (row.claimed_at != null) command.claimedAt = Number(row.claimed_at);
  if (row.ended_at != null) command.endedAt = Number(row.ended_at);
  if (row.outcome != null) command.outcome = String(row.outcome);
  if (row.version != null) command.version = String(row.version);
  return command;
}
