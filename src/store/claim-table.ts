import { claimLive, mayTake, type Claim } from "../core/claims.ts";
import type { SqliteDatabase, SqliteStatement, SqlRow, SqlValue } from "./sqlite-driver.ts";
import { StatementCache } from "./statement-cache.ts";

/** Where a table keeps its rows' claims. Every name is the store's own constant, never input. */
export type ClaimSpec = {
  table: string;
  /** The row's key beside project_id. */
  key: string;
  /** The holder (`host:pid:nonce`, core/claims.ts) and when it took or last renewed the claim. */
  byColumn: string;
  atColumn: string;
  /** SQL condition of the rows that can be held at all (e.g. a task that runs); others are never claimed. */
  open: string;
  /** More to set when a row is claimed (e.g. `status = 'claimed'`); a constant of the store. */
  onClaim?: string;
  /**
   * False: a live claim of the claimer itself refuses it too (a webhook delivery whose run is
   * launching here must not fire twice). Default true: claiming what one holds renews it.
   */
  reentrant?: boolean;
};

const NAME = /^[a-z_]+$/;

/**
 * The one claim primitive of the store: claim, renew, release and take over the expired, on any
 * table that names a holder and a lease per row (graphile-worker's locked_by / locked_at). Every
 * claim is decided by the one rule (core/claims.ts `mayTake`) inside a write transaction, so of
 * several processes on one database exactly one holds a row; every change a holder makes
 * afterwards is `WHERE by = holder`, so a holder that was overtaken (its lease ran out) changes
 * nothing its successor now owns, and learns so from `renew`.
 */
export class ClaimTable<Key extends SqlValue = string> {
  private statements = new StatementCache();

  constructor(
    private db: SqliteDatabase,
    private spec: ClaimSpec,
    /** The project the rows belong to; undefined: a table that spans projects (the command inbox). */
    readonly projectId: string | undefined,
    /** How long a claim keeps others out without a renewal (core/claims.ts LEASES). */
    readonly leaseMs: number,
  ) {
    for (const name of [spec.table, spec.key, spec.byColumn, spec.atColumn]) if (!NAME.test(name)) throw new Error(`not a column or table name: ${name}`);
  }

  /** Takes the row for `by` when it is open and unclaimed, already `by`'s, or its claim is no longer live. True when `by` holds it now. */
  claim(key: Key, by: string, now: number, leaseMs = this.leaseMs): boolean {
    return this.db.transaction(() => {
      const row = this.sql(`SELECT ${this.spec.byColumn} AS by, ${this.spec.atColumn} AS at FROM ${this.spec.table}
        WHERE ${this.scope} AND ${this.spec.key} = ? AND (${this.spec.open})`).get(...this.scoped(key));
      const claim = row && claimOf(row);
      if (!row || !mayTake(claim, by, now, leaseMs)) return false;
      if (this.spec.reentrant === false && claim?.by === by && claimLive(claim, now, leaseMs)) return false;
      // Not `=== 1`: under Bun `changes` counts the rows a trigger wrote too (the tasks table's change stamp).
      return this.set(key, by, now) > 0;
    });
  }

  /** Extends every claim `by` has on open rows, in one write; returns the keys it still holds (a row taken over is not among them). */
  renew(by: string, now: number): Set<Key> {
    const { table, key, byColumn, atColumn, open } = this.spec;
    this.sql(`UPDATE ${table} SET ${atColumn} = ? WHERE ${this.scope} AND ${byColumn} = ? AND (${open})`).run(now, ...this.scoped(by));
    return new Set(this.sql(`SELECT ${key} AS key FROM ${table} WHERE ${this.scope} AND ${byColumn} = ? AND (${open})`)
      .all(...this.scoped(by)).map((row) => row.key as Key));
  }

  /** Lets go of `by`'s claim on the row; false when it was not `by`'s (taken over, or never). */
  release(key: Key, by: string): boolean {
    const { table, byColumn, atColumn } = this.spec;
    return this.sql(`UPDATE ${table} SET ${byColumn} = NULL, ${atColumn} = NULL WHERE ${this.scope} AND ${this.spec.key} = ? AND ${byColumn} = ?`)
      .run(...this.scoped(key, by)).changes > 0;
  }

  /** Lets go of every claim `by` has (its instance stops): the rows are free for others at once. */
  releaseAll(by: string): void {
    const { table, byColumn, atColumn } = this.spec;
    this.sql(`UPDATE ${table} SET ${byColumn} = NULL, ${atColumn} = NULL WHERE ${this.scope} AND ${byColumn} = ?`).run(...this.scoped(by));
  }

  /** The row's claim; undefined when it has none. */
  holder(key: Key): Claim | undefined {
    const row = this.sql(`SELECT ${this.spec.byColumn} AS by, ${this.spec.atColumn} AS at FROM ${this.spec.table} WHERE ${this.scope} AND ${this.spec.key} = ?`)
      .get(...this.scoped(key));
    return row ? claimOf(row) : undefined;
  }

  /** Open rows whose claim is held by nobody live at `now` (unclaimed included): the ones another process may take over. */
  expired(now: number, leaseMs = this.leaseMs): Key[] {
    const { table, key, byColumn, atColumn, open } = this.spec;
    return this.sql(`SELECT ${key} AS key, ${byColumn} AS by, ${atColumn} AS at FROM ${table} WHERE ${this.scope} AND (${open})`)
      .all(...this.scoped())
      .filter((row) => { const claim = claimOf(row); return !claim || !claimLive(claim, now, leaseMs); })
      .map((row) => row.key as Key);
  }

  private set(key: Key, by: string, now: number): number {
    const { table, byColumn, atColumn, onClaim } = this.spec;
    const more = onClaim ? `, ${onClaim}` : "";
    return this.sql(`UPDATE ${table} SET ${byColumn} = ?, ${atColumn} = ?${more} WHERE ${this.scope} AND ${this.spec.key} = ?`).run(by, now, ...this.scoped(key)).changes;
  }

  /** The rows' scope in a WHERE: this project's, or every project's. */
  private get scope(): string {
    return this.projectId === undefined ? "1 = 1" : "project_id = ?";
  }

  private scoped(...params: SqlValue[]): SqlValue[] {
    return this.projectId === undefined ? params : [this.projectId, ...params];
  }

  private sql(text: string): SqliteStatement {
    return this.statements.prepare(this.db, text);
  }
}

/** A row's claim; a holder written without a time (an earlier version) counts as taken at 0: expired. */
function claimOf(row: SqlRow): Claim | undefined {
  return row.by == null ? undefined : { by: String(row.by), at: Number(row.at ?? 0) };
}
