import { randomUUID } from "node:crypto";
import type { SqliteDatabase, SqliteStatement, SqlRow } from "../store/sqlite-driver.ts";
import { StatementCache } from "../store/statement-cache.ts";
import { maskSecrets } from "../core/mask-secrets.ts";
import { newClaimer } from "../core/outbox-claim.ts";
import { channelHost, type Channels } from "./channel-config.ts";
import { capChars, RESULT_CAP, type ChannelNotice } from "./channel-message.ts";
import { LeasedOutbox, type OutboxItem } from "./leased-outbox.ts";

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

/**
 * The channel outbox table (migration 11): one row per (run, channel). Writes go through the
 * leased outbox's claim/confirm/retry; this adds what is particular to channels: queueing a run's
 * notice, and reading back what may be shown. Works on a read-only connection for the reads
 * (the dashboard and CLI).
 */
export class ChannelOutbox {
  private statements = new StatementCache();
  readonly leased: LeasedOutbox;

  /** `claimer`: this instance's name in claims (readers need none of their own). */
  constructor(private db: SqliteDatabase, readonly projectId: string, claimer: string = newClaimer()) {
    this.leased = new LeasedOutbox(db, CHANNEL_TABLE, projectId, claimer);
  }

  /**
   * Queues `notice` for each named channel (inside the caller's transaction, so it commits with
   * the run's end). Queuing the same run to the same channel again does nothing. A name the
   * options do not hold is recorded as failed at once.
   */
  enqueue(notice: ChannelNotice, names: readonly string[], channels: Channels, now: number): void {
    const stored = JSON.stringify(storedNotice(notice));
    const insert = this.sql(`INSERT INTO ${CHANNEL_TABLE} (project_id, id, status, attempts, next_attempt_at, created_at, ended_at, last_error,
      run_id, automation_id, channel, host, notice) VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (project_id, run_id, channel) DO NOTHING`);
    for (const name of new Set(names)) {
      const config = channels[name];
      const failure = config ? null : `channel "${name}" is not configured (configured: ${Object.keys(channels).join(", ") || "none"})`;
      insert.run(
        this.projectId, randomUUID(), config ? "pending" : "failed", now, now, config ? null : now, failure,
        notice.run.id, notice.automation.id, name, config ? channelHost(config.url) : "-", stored,
      );
    }
  }

  /** The stored notice of a claimed item; undefined when unreadable. */
  noticeOf(item: OutboxItem): ChannelNotice | undefined {
    try {
      return JSON.parse(String(item.row.notice)) as ChannelNotice;
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

/** "team (hooks.slack.com): delivered after 2 attempts" and the like, for task_read. */
export function deliveryStatusText(s: ChannelDeliveryStatus, now: number): string {
  const who = `${s.channel} (${s.host})`;
  const tries = `${s.attempts} attempt${s.attempts === 1 ? "" : "s"}`;
  if (s.status === "delivered") return `${who}: delivered${s.attempts > 1 ? ` after ${tries}` : ""}`;
  if (s.status === "failed") return `${who}: FAILED${s.attempts > 0 ? ` after ${tries}` : ""}: ${s.lastError ?? "unknown"}`;
  const next = s.nextAttemptAt === undefined ? "" : `, next attempt in ${Math.max(0, Math.round((s.nextAttemptAt - now) / 1000))} s`;
  return `${who}: pending${s.attempts > 0 ? ` (${tries}; last: ${s.lastError ?? "?"})` : ""}${next}`;
}

/** What is kept of a notice: result capped, and token shapes masked before they leave the machine. */
function storedNotice(n: ChannelNotice): ChannelNotice {
  return { ...n, summary: maskSecrets(n.summary), result: capChars(maskSecrets(n.result), RESULT_CAP), trigger: maskSecrets(n.trigger) };
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
