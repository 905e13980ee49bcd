import type { SqliteDatabase, SqliteStatement, SqlRow } from "./sqlite-driver.ts";
import { StatementCache } from "./statement-cache.ts";
import type { ProposalShape } from "../proposals/proposal-rules.ts";

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

/** Proposal decisions, in the plugin's SQLite database (migration 13), for one project. */
export class ProposalRepository {
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
