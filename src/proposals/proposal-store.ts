import type { SqliteDatabase, SqliteStatement, SqlRow } from "../store/sqlite-driver.ts";
import { StatementCache } from "../store/statement-cache.ts";
import type { ProposalShape } from "./proposal-rules.ts";

export type ProposalOutcome = "approved" | "rejected" | "expired";
export type DecidedVia = "conversation" | "dashboard" | "cli" | "expiry";

/** What became of a proposal: kept after the proposal itself is gone, for the cooldown and discovery. */
export type ProposalDecision = ProposalShape & {
  proposalId: string;
  reason: string;
  outcome: ProposalOutcome;
  via: DecidedVia;
  decidedAt: number;
};

/** The last message the user sent in one of the project's sessions. */
export type UserActivity = { lastMessageAt: number; sessionId: string };

/** Proposal decisions and the user's last activity, in the plugin's SQLite database (migration 13), for one project. */
export class ProposalStore {
  private statements = new StatementCache();

  constructor(private db: SqliteDatabase, readonly projectId: string) {}

  record(d: ProposalDecision): void {
    this.sql(`INSERT INTO proposal_decisions (project_id, proposal_id, title, work, triggers, reason, outcome, via, decided_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
      this.projectId, d.proposalId, d.title, d.work, JSON.stringify(d.triggers), d.reason, d.outcome, d.via, d.decidedAt,
    );
  }

  /** Decisions after a time, newest first. */
  decisions(since: number, outcome?: ProposalOutcome, limit = 100): ProposalDecision[] {
    const rows = outcome
      ? this.sql("SELECT * FROM proposal_decisions WHERE project_id = ? AND decided_at > ? AND outcome = ? ORDER BY decided_at DESC, id DESC LIMIT ?").all(this.projectId, since, outcome, limit)
      : this.sql("SELECT * FROM proposal_decisions WHERE project_id = ? AND decided_at > ? ORDER BY decided_at DESC, id DESC LIMIT ?").all(this.projectId, since, limit);
    return rows.map(rowToDecision);
  }

  /** Keeps the newest message time of the project's sessions (several processes may write). */
  noteUserMessage(at: number, sessionId: string): void {
    this.sql(`INSERT INTO user_activity (project_id, last_message_at, session_id) VALUES (?, ?, ?)
      ON CONFLICT (project_id) DO UPDATE SET last_message_at = excluded.last_message_at, session_id = excluded.session_id
      WHERE excluded.last_message_at >= user_activity.last_message_at`).run(this.projectId, at, sessionId);
  }

  userActivity(): UserActivity | undefined {
    const row = this.sql("SELECT * FROM user_activity WHERE project_id = ?").get(this.projectId);
    return row && { lastMessageAt: Number(row.last_message_at), sessionId: String(row.session_id) };
  }

  private sql(text: string): SqliteStatement {
    return this.statements.prepare(this.db, text);
  }
}

function rowToDecision(row: SqlRow): ProposalDecision {
  return {
    proposalId: String(row.proposal_id),
    title: String(row.title),
    work: String(row.work),
    triggers: JSON.parse(String(row.triggers)) as string[],
    reason: String(row.reason),
    outcome: row.outcome as ProposalOutcome,
    via: row.via as DecidedVia,
    decidedAt: Number(row.decided_at),
  };
}
