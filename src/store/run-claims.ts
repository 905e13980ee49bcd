import { LEASES, type Claim } from "../core/claims.ts";
import { ClaimTable } from "./claim-table.ts";
import type { SqliteDatabase, SqliteStatement } from "./sqlite-driver.ts";
import { StatementCache } from "./statement-cache.ts";

/**
 * Who holds each active automation run (migration 30): the process that claimed it `starting`
 * holds it until it ends, renewing it with its tasks; a run whose holder is gone or out of lease
 * is ended by the next process that looks (RunRecorder.endStrandedRuns), through the one claim
 * primitive (claim-table.ts).
 */
export class RunClaims {
  private readonly table: ClaimTable<number>;
  private statements = new StatementCache();

  constructor(private db: SqliteDatabase, readonly projectId: string) {
    const open = "status IN ('starting', 'running')";
    this.table = new ClaimTable<number>(db, { table: "automation_runs", key: "id", byColumn: "claimed_by", atColumn: "claimed_at", open }, projectId, LEASES.runMs);
  }

  claim(runId: number, by: string, now: number, leaseMs?: number): boolean {
    return this.table.claim(runId, by, now, leaseMs);
  }

  /** Renews `by`'s active runs in one write; returns the ids it still holds. */
  renew(by: string, now: number): Set<number> {
    return this.table.renew(by, now);
  }

  holder(runId: number): Claim | undefined {
    return this.table.holder(runId);
  }

  /** The automations (paused ones too) with a run starting or running: the only ones a sweep need look at. */
  automationsWithActiveRuns(): string[] {
    return this.sql("SELECT DISTINCT automation_id FROM automation_runs WHERE project_id = ? AND status IN ('starting', 'running')")
      .all(this.projectId).map((row) => String(row.automation_id));
  }

  private sql(text: string): SqliteStatement {
    return this.statements.prepare(this.db, text);
  }
}
