import { randomUUID } from "node:crypto";
import { LeasedOutbox, type OutboxItem } from "./leased-outbox.ts";
import type { SqliteDatabase, SqliteStatement, SqlRow } from "./sqlite-driver.ts";
import { StatementCache } from "./statement-cache.ts";

export const CHANNEL_TABLE = "channel_deliveries";

/** What may be shown of one run's delivery to one channel: its name and host, never its URL. */
export type ChannelDeliveryStatus = {
  runId: number;
  automationId: string;
  channel: string;
  host: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  createdAt: number;
  /** Pending: when it is tried next. */
  nextAttemptAt?: number;
  /** Delivered or failed: when. */
  endedAt?: number;
  /** Why the last attempt failed (a status code, an error code, a timeout); never a URL. */
  lastError?: string;
};

/** One row to queue: a configured channel (its host) or one the options do not hold (`failure` says so). */
export type QueuedDelivery = { channel: string; host: string; failure?: string };

/**
 * The channel outbox table (migration 11): one row per (run, channel). Writes go through the
 * leased outbox's claim/confirm/retry; this adds queueing a run's notice and reading back what
 * may be shown. The notice comes already masked and capped (channels/channel-queue.ts).
 */
export class ChannelOutboxRepository {
  private statements = new StatementCache();
  readonly leased: LeasedOutbox;

  /** `claimer`: this instance's name in claims (core/claims.ts newClaimer). */
  constructor(private db: SqliteDatabase, readonly projectId: string, claimer: string) {
    this.leased = new LeasedOutbox(db, CHANNEL_TABLE, projectId, claimer);
  }

  /**
   * Queues the stored notice of a run for each channel (inside the caller's transaction, so it
   * commits with the run's end). Queuing the same run to the same channel again does nothing; a
   * delivery with a `failure` is recorded as failed at once.
   */
  enqueue(run: { runId: number; automationId: string }, deliveries: readonly QueuedDelivery[], notice: string, now: number): void {
    const insert = this.sql(`INSERT INTO ${CHANNEL_TABLE} (project_id, id, status, attempts, next_attempt_at, created_at, ended_at, last_error,
      run_id, automation_id, channel, host, notice) VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (project_id, run_id, channel) DO NOTHING`);
    for (const d of deliveries) {
      insert.run(
        this.projectId, randomUUID(), d.failure ? "failed" : "pending", now, now, d.failure ? now : null, d.failure ?? null,
        run.runId, run.automationId, d.channel, d.host, notice,
      );
    }
  }

  /** The stored notice of a claimed item, parsed; undefined when unreadable. */
  noticeOf(item: OutboxItem): unknown {
    try {
      return JSON.parse(String(item.row.notice));
    } catch {
      return undefined;
    }
  }

  /** One run's deliveries, in channel order. */
  status(runId: number): ChannelDeliveryStatus[] {
    return this.sql(`SELECT * FROM ${CHANNEL_TABLE} WHERE project_id = ? AND run_id = ? ORDER BY channel`).all(this.projectId, runId).map(toStatus);
  }

  /** Deliveries given up since `since` (ms), newest first: the dashboard's needs-attention list. */
  failures(since: number, limit = 50): ChannelDeliveryStatus[] {
    return this.sql(`SELECT * FROM ${CHANNEL_TABLE} WHERE project_id = ? AND status = 'failed' AND ended_at >= ? ORDER BY ended_at DESC LIMIT ?`)
      .all(this.projectId, since, limit)
      .map(toStatus);
  }

  /** Removes delivered and failed rows that ended before `before`; returns how many. */
  purgeEnded(before: number): number {
    return this.sql(`DELETE FROM ${CHANNEL_TABLE} WHERE project_id = ? AND status != 'pending' AND ended_at < ?`).run(this.projectId, before).changes;
  }

  private sql(text: string): SqliteStatement {
    return this.statements.prepare(this.db, text);
  }
}

function toStatus(row: SqlRow): ChannelDeliveryStatus {
  const status = String(row.status) as ChannelDeliveryStatus["status"];
  return {
    runId: Number(row.run_id),
    automationId: String(row.automation_id),
    channel: String(row.channel),
    host: String(row.host),
    status,
    attempts: Number(row.attempts),
    createdAt: Number(row.created_at),
    ...(status === "pending" ? { nextAttemptAt: Number(row.next_attempt_at) } : {}),
    ...(row.ended_at != null ? { endedAt: Number(row.ended_at) } : {}),
    ...(row.last_error != null ? { lastError: String(row.last_error) } : {}),
  };
}
