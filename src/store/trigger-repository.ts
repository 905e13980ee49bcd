import type { Trigger } from "../automations/automation.ts";
import { claimLive, LEASES } from "../core/claims.ts";
import { ClaimTable } from "./claim-table.ts";
import { rowToTrigger } from "./automation-rows.ts";
import type { SqliteDatabase, SqliteStatement } from "./sqlite-driver.ts";
import { StatementCache } from "./statement-cache.ts";

export type WebhookRow = { name: string; projectId: string; triggerId: string; secret: string; createdAt: number };
export type Delivery = {
  id: number; projectId: string; triggerId: string; deliveryId: string; receivedAt: number; summary: string; data?: string;
  /** Claimed by a process that fires it; set until its run has launched. */
  claimedBy?: string;
  runId?: number;
};

/** How long a delivery's claim is left to its holder while its run launches (core/claims.ts LEASES says why). */
export const DELIVERY_LEASE_MS = LEASES.deliveryMs;

/**
 * What event triggers keep beside the automation tables (migration 10): each source's state and
 * note, the leases that let one process run a source, webhooks (names unique in the database,
 * across projects) and their stored deliveries. Leases and delivery claims follow the one claim
 * rule (core/claims.ts). Shares the task store's connection.
 */
export class TriggerRepository {
  private statements = new StatementCache();
  /** Webhook deliveries on the one claim primitive: held while their run launches; their holder's own claim refuses too (never fired twice). */
  private readonly deliveryClaims: ClaimTable<number>;

  constructor(private db: SqliteDatabase, readonly projectId: string) {
    const open = "status IN ('pending', 'claimed')";
    this.deliveryClaims = new ClaimTable<number>(db, { table: "webhook_deliveries", key: "id", byColumn: "claimed_by", atColumn: "claimed_at", open, onClaim: "status = 'claimed'", reentrant: false }, projectId, DELIVERY_LEASE_MS);
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn);
  }

  /** Triggers of the given kinds (the event kinds) of this project's automations that may fire (enabled, not done). */
  activeEventTriggers(kinds: readonly string[]): Trigger[] {
    return this.sql(`SELECT t.* FROM automation_triggers t JOIN automations a ON a.project_id = t.project_id AND a.id = t.automation_id
      WHERE t.project_id = ? AND a.enabled = 1 AND a.done_at IS NULL AND t.kind IN (SELECT value FROM json_each(?))
      ORDER BY t.created_at, t.rowid`).all(this.projectId, JSON.stringify(kinds)).map(rowToTrigger);
  }

  state(triggerId: string): unknown {
    const row = this.sql("SELECT state FROM automation_triggers WHERE project_id = ? AND id = ?").get(this.projectId, triggerId);
    return row?.state == null ? undefined : JSON.parse(String(row.state));
  }

  saveState(triggerId: string, state: unknown): void {
    this.sql("UPDATE automation_triggers SET state = ? WHERE project_id = ? AND id = ?").run(JSON.stringify(state ?? null), this.projectId, triggerId);
  }

  setNote(triggerId: string, note: string | undefined): void {
    this.sql("UPDATE automation_triggers SET note = ? WHERE project_id = ? AND id = ?").run(note ?? null, this.projectId, triggerId);
  }

  /**
   * Takes the trigger's lease for `holder` when it is free, already ours, or its claim is no longer
   * live (expired, or its holder is gone). True when `holder` holds it now.
   */
  acquireLease(triggerId: string, holder: string, now: number, ttlMs: number): boolean {
    return this.transaction(() => {
      const row = this.sql("SELECT holder, expires_at FROM trigger_leases WHERE project_id = ? AND trigger_id = ?").get(this.projectId, triggerId);
      // The row keeps when the lease ends; its claim was taken (or last renewed) one ttl before.
      const free = !row || row.holder === holder || !claimLive({ by: String(row.holder), at: Number(row.expires_at) - ttlMs }, now, ttlMs);
      if (!free) return false;
      this.sql(`INSERT INTO trigger_leases (project_id, trigger_id, holder, expires_at) VALUES (?, ?, ?, ?)
        ON CONFLICT (project_id, trigger_id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at`)
        .run(this.projectId, triggerId, holder, now + ttlMs);
      return true;
    });
  }

  /** Extends every lease `holder` has in this project; returns the triggers it still holds. */
  renewLeases(holder: string, now: number, ttlMs: number): Set<string> {
    this.sql("UPDATE trigger_leases SET expires_at = ? WHERE project_id = ? AND holder = ?").run(now + ttlMs, this.projectId, holder);
    return new Set(this.sql("SELECT trigger_id FROM trigger_leases WHERE project_id = ? AND holder = ?").all(this.projectId, holder).map((r) => String(r.trigger_id)));
  }

  releaseLease(triggerId: string, holder: string): void {
    this.sql("DELETE FROM trigger_leases WHERE project_id = ? AND trigger_id = ? AND holder = ?").run(this.projectId, triggerId, holder);
  }

  addWebhook(hook: Omit<WebhookRow, "projectId">): void {
    this.sql("INSERT INTO webhooks (name, project_id, trigger_id, secret, created_at) VALUES (?, ?, ?, ?, ?)")
      .run(hook.name, this.projectId, hook.triggerId, hook.secret, hook.createdAt);
  }

  /** Any project's webhook of that name (one listener serves all), with whether its automation may fire now. */
  webhook(name: string): (WebhookRow & { active: boolean }) | undefined {
    const row = this.sql(`SELECT w.*, (a.enabled = 1 AND a.done_at IS NULL) AS active FROM webhooks w
      JOIN automation_triggers t ON t.project_id = w.project_id AND t.id = w.trigger_id
      JOIN automations a ON a.project_id = t.project_id AND a.id = t.automation_id WHERE w.name = ?`).get(name);
    if (!row) return undefined;
    return { name: String(row.name), projectId: String(row.project_id), triggerId: String(row.trigger_id), secret: String(row.secret), createdAt: Number(row.created_at), active: row.active === 1 };
  }

  webhookOfTrigger(triggerId: string): WebhookRow | undefined {
    const row = this.sql("SELECT * FROM webhooks WHERE project_id = ? AND trigger_id = ?").get(this.projectId, triggerId);
    return row ? { name: String(row.name), projectId: String(row.project_id), triggerId, secret: String(row.secret), createdAt: Number(row.created_at) } : undefined;
  }

  /** Whether `hook` stored a delivery with this id or this signed content already (a replay; insertDelivery's unique indexes). */
  deliverySeen(hook: Pick<WebhookRow, "triggerId">, d: { deliveryId?: string; contentKey?: string }): boolean {
    return this.sql("SELECT 1 FROM webhook_deliveries WHERE trigger_id = ? AND (delivery_id = ? OR content_key = ?) LIMIT 1")
      .get(hook.triggerId, d.deliveryId ?? null, d.contentKey ?? null) !== undefined;
  }

  /**
   * Stores a delivery for `hook`'s project; undefined when that delivery id, or that signed content
   * (`contentKey`, migration 17), was stored already (a replay). The unique indexes decide, so this
   * holds across processes sharing the database.
   */
  insertDelivery(hook: Pick<WebhookRow, "projectId" | "triggerId">, d: { deliveryId: string; contentKey?: string; receivedAt: number; summary: string; data?: string }): number | undefined {
    const result = this.sql(`INSERT INTO webhook_deliveries (project_id, trigger_id, delivery_id, content_key, received_at, status, summary, data)
      VALUES (?, ?, ?, ?, ?, 'pending', ?, ?) ON CONFLICT DO NOTHING`).run(hook.projectId, hook.triggerId, d.deliveryId, d.contentKey ?? null, d.receivedAt, d.summary, d.data ?? null);
    if (result.changes === 0) return undefined;
    return Number(this.sql("SELECT last_insert_rowid() AS id").get()!.id);
  }

  /** This project's deliveries not yet fired: pending, or claimed by a process that has since died. */
  unfiredDeliveries(limit = 50): Delivery[] {
    return this.sql("SELECT * FROM webhook_deliveries WHERE project_id = ? AND status IN ('pending', 'claimed') ORDER BY id LIMIT ?").all(this.projectId, limit).map((r) => ({
      id: Number(r.id), projectId: String(r.project_id), triggerId: String(r.trigger_id), deliveryId: String(r.delivery_id),
      receivedAt: Number(r.received_at), summary: String(r.summary), ...(r.data != null ? { data: String(r.data) } : {}),
      ...(r.claimed_by != null ? { claimedBy: String(r.claimed_by) } : {}), ...(r.run_id != null ? { runId: Number(r.run_id) } : {}),
    }));
  }

  waitingDeliveries(triggerId: string): number {
    return Number(this.sql("SELECT count(*) AS n FROM webhook_deliveries WHERE project_id = ? AND trigger_id = ? AND status IN ('pending', 'claimed')").get(this.projectId, triggerId)!.n);
  }

  /**
   * Claims an unfired delivery for `holder` (inside a transaction): false when its claim is live,
   * `holder`'s own included (its run is launching here; firing it again would fire it twice).
   */
  claimDelivery(d: Delivery, holder: string, now: number): boolean {
    return this.deliveryClaims.claim(d.id, holder, now);
  }


  setDeliveryRun(id: number, runId: number | undefined): void {
    this.sql("UPDATE webhook_deliveries SET run_id = ? WHERE id = ?").run(runId ?? null, id);
  }

  /** claimed -> fired once its run launched (or did not need to); pending|claimed -> expired. */
  endDelivery(id: number, status: "fired" | "expired"): void {
    this.sql("UPDATE webhook_deliveries SET status = ? WHERE id = ? AND status IN ('pending', 'claimed')").run(status, id);
  }

  /** Delivery ids and content keys are remembered this long (replays inside it answer 200 and run nothing). */
  purgeDeliveries(before: number): void {
    this.sql("DELETE FROM webhook_deliveries WHERE project_id = ? AND received_at < ? AND status != 'pending'").run(this.projectId, before);
  }

  private sql(text: string): SqliteStatement {
    return this.statements.prepare(this.db, text);
  }
}

/** A webhook's secret, set by its name (names are unique in the database, across projects); false when there is none of that name. */
export function setWebhookSecret(db: SqliteDatabase, name: string, secret: string): boolean {
  return db.prepare("UPDATE webhooks SET secret = ? WHERE name = ?").run(secret, name).changes > 0;
}
