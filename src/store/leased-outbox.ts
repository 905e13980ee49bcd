import { claimHeldByOther, LEASES } from "../core/claims.ts";
import type { SqliteDatabase, SqliteStatement, SqlRow } from "./sqlite-driver.ts";
import { StatementCache } from "./statement-cache.ts";
import { ClaimTable } from "./claim-table.ts";

/** An outbox row's delivery state; the table's own columns come along in `row`. */
export type OutboxItem = {
  id: string;
  /** Attempts made so far, this one included once claimed. */
  attempts: number;
  nextAttemptAt: number;
  createdAt: number;
  claim?: { by: string; at: number };
  row: SqlRow;
};

const TABLE = /^[a-z_]+$/;

/**
 * Claim, lease, confirm and retry over one outbox table, for any way out (channel deliveries now),
 * deciding with the one claim rule (core/claims.ts). The table has these columns, scoped by project:
 *   project_id TEXT, id TEXT, status TEXT ('pending' | 'delivered' | 'failed'),
 *   attempts INTEGER, next_attempt_at INTEGER, claimed_by TEXT, claimed_at INTEGER,
 *   created_at INTEGER, ended_at INTEGER, last_error TEXT
 * A claim is taken in a transaction, so of several processes on one database one sends each item;
 * a claim older than the lease (LEASES.outboxMs), or of a process on this machine that is gone, is
 * taken over. Every change after a claim requires the claim still be ours: a claimer that was
 * overtaken (too slow) cannot confirm or reschedule what its successor now owns.
 */
export class LeasedOutbox {
  private statements = new StatementCache();
  /** The one claim primitive (claim-table.ts); confirming, rescheduling and releasing stay `WHERE claimed_by = claimer`. */
  private readonly claims: ClaimTable;

  constructor(
    private db: SqliteDatabase,
    private table: string,
    readonly projectId: string,
    /** This instance's name in claims (see newClaimer). */
    readonly claimer: string,
  ) {
    if (!TABLE.test(table)) throw new Error(`not a table name: ${table}`);
    this.claims = new ClaimTable(db, { table, key: "id", byColumn: "claimed_by", atColumn: "claimed_at", open: "status = 'pending'", onClaim: "attempts = attempts + 1" }, projectId, LEASES.outboxMs);
  }

  /** Pending items, soonest first. */
  pending(limit = 500): OutboxItem[] {
    return this.sql(`SELECT * FROM ${this.table} WHERE project_id = ? AND status = 'pending' ORDER BY next_attempt_at, created_at LIMIT ?`)
      .all(this.projectId, limit)
      .map(toItem);
  }

  /** True when another live claimer holds the item now. */
  heldByOther(item: OutboxItem, now: number): boolean {
    return item.claim !== undefined && claimHeldByOther(item.claim, this.claimer, now, LEASES.outboxMs);
  }

  /** When the item can next be claimed here: its next attempt, or the end of another's lease. */
  claimableAt(item: OutboxItem, now: number): number {
    return this.heldByOther(item, now) ? Math.max(item.nextAttemptAt, item.claim!.at + LEASES.outboxMs) : item.nextAttemptAt;
  }

  /**
   * In one transaction: claims up to `limit` due items that no other live claimer holds and that
   * `accept` takes, counting the attempt. Returns them as claimed.
   */
  claim(now: number, limit: number, accept: (item: OutboxItem) => boolean): OutboxItem[] {
    if (limit <= 0) return [];
    return this.db.transaction(() => {
      const due = this.sql(`SELECT * FROM ${this.table} WHERE project_id = ? AND status = 'pending' AND next_attempt_at <= ?
        ORDER BY next_attempt_at, created_at LIMIT 500`).all(this.projectId, now).map(toItem);
      const taken: OutboxItem[] = [];
      for (const item of due) {
        if (taken.length >= limit) break;
        if (!this.heldByOther(item, now) && accept(item) && this.claims.claim(item.id, this.claimer, now)) taken.push(item);
      }
      return taken.map((item) => ({ ...item, attempts: item.attempts + 1, claim: { by: this.claimer, at: now } }));
    });
  }

  /** Delivered. False when the claim was no longer ours (another claimer took it over). */
  confirm(id: string, now: number): boolean {
    return this.ownUpdate(id, "status = 'delivered', ended_at = ?, last_error = NULL", [now]);
  }

  /** Not this time: free again at `at`, with why. */
  retryAt(id: string, at: number, reason: string): boolean {
    return this.ownUpdate(id, "next_attempt_at = ?, last_error = ?", [at, reason]);
  }

  /** Given up: recorded as failed, with why. */
  fail(id: string, now: number, reason: string): boolean {
    return this.ownUpdate(id, "status = 'failed', ended_at = ?, last_error = ?", [now, reason]);
  }

  /** Lets go of a claim without a result (stopping mid-send): due again at once, here or elsewhere. */
  release(id: string): boolean {
    return this.ownUpdate(id, "", []);
  }

  private ownUpdate(id: string, set: string, params: (string | number)[]): boolean {
    const text = `UPDATE ${this.table} SET ${set ? `${set}, ` : ""}claimed_by = NULL, claimed_at = NULL
      WHERE project_id = ? AND id = ? AND status = 'pending' AND claimed_by = ?`;
    return this.sql(text).run(...params, this.projectId, id, this.claimer).changes > 0;
  }

  private sql(text: string): SqliteStatement {
    return this.statements.prepare(this.db, text);
  }
}

function toItem(row: SqlRow): OutboxItem {
  return {
    id: String(row.id),
    attempts: Number(row.attempts),
    nextAttemptAt: Number(row.next_attempt_at),
    createdAt: Number(row.created_at),
    ...(row.claimed_by != null ? { claim: { by: String(row.claimed_by), at: Number(row.claimed_at) } } : {}),
    row,
  };
}
