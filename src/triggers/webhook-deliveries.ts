import { randomUUID } from "node:crypto";
import type { Clock } from "../core/clock.ts";
import { maskSecrets } from "../core/mask-secrets.ts";
import type { Delivery, TriggerRepository } from "../store/trigger-repository.ts";
import type { FireResult } from "./source-loaders.ts";
import type { TriggerEvent } from "./trigger-source.ts";

/** Deliveries older than this are recorded as expired instead of run; their ids and content keys are remembered as long (replays). */
export const DELIVERY_TTL_MS = 86_400_000;
const DATA_CAP = 8192;

export type DeliveriesDeps = {
  store: TriggerRepository;
  clock: Clock;
  /** This instance in delivery claims (core/claims.ts). */
  holder: string;
  fire(triggerId: string, event: TriggerEvent): FireResult | undefined;
  /** A run row for a delivery that expired, or for a run a crash cut off before it launched. */
  recordSkip(triggerId: string, summary: string, reason: string): void;
  abandonRun(runId: number): void;
};

/** `contentKey`: the listener's hash of (hook, signature, body); a second delivery of the same content is a replay. */
export type IncomingDelivery = { name: string; deliveryId?: string; githubEvent?: string; contentType?: string; body: string; contentKey?: string };

/**
 * Webhook deliveries between the listener and the runs. A delivery is stored before it is
 * answered; a process of the hook's project claims it, fires it, and marks it fired once its run
 * has launched, so a crash at any point leaves it to be fired (once) after the restart.
 */
export class WebhookDeliveries {
  private lastPurge = 0;

  constructor(private deps: DeliveriesDeps) {}

  /** The listener's lookup: a hook may take deliveries while its automation may fire. */
  secretOf(name: string): { secret: string } | undefined {
    const hook = this.deps.store.webhook(name);
    return hook?.active ? { secret: hook.secret } : undefined;
  }

  /** The listener's replay check: a delivery id or signed content this hook stored already. */
  seen(incoming: Pick<IncomingDelivery, "name" | "deliveryId" | "contentKey">): boolean {
    const hook = this.deps.store.webhook(incoming.name);
    return hook !== undefined && this.deps.store.deliverySeen(hook, incoming);
  }

  /** The listener's accept: stores the delivery (a seen id or content is a replay), then fires what this project has. */
  accept(incoming: IncomingDelivery): { status: 202; runId?: number | string; note?: string } | { status: 200; duplicate: true } {
    const { store, clock } = this.deps;
    const hook = store.webhook(incoming.name);
    if (!hook) throw new Error(`webhook ${incoming.name} disappeared`);
    const id = store.insertDelivery(hook, {
      deliveryId: incoming.deliveryId ?? randomUUID(), contentKey: incoming.contentKey, receivedAt: clock.now(),
      summary: deliverySummary(incoming), data: cap(maskSecrets(incoming.body), DATA_CAP),
    });
    if (id === undefined) return { status: 200, duplicate: true };
    if (hook.projectId !== store.projectId) return { status: 202, runId: "queued", note: "fired by an OpenCode process of its project" };
    const fired = this.fireDue().get(id);
    return { status: 202, runId: fired ?? "queued" };
  }

  /** Fires this project's unfired deliveries; returns delivery id -> run id for those that started a run. */
  fireDue(): Map<number, number> {
    const { store, clock } = this.deps;
    const now = clock.now();
    const runs = new Map<number, number>();
    for (const d of store.unfiredDeliveries()) {
      const result = store.transaction(() => this.claimAndFire(d, now));
      if (result?.runId !== undefined) runs.set(d.id, result.runId);
      if (result) void result.launched.finally(() => store.endDelivery(d.id, "fired"));
    }
    if (now - this.lastPurge > 3_600_000) {
      this.lastPurge = now;
      store.purgeDeliveries(now - DELIVERY_TTL_MS);
    }
    return runs;
  }

  private claimAndFire(d: Delivery, now: number): FireResult | undefined {
    const { store, holder } = this.deps;
    if (!store.claimDelivery(d, holder, now)) return undefined;
    if (d.runId !== undefined) this.deps.abandonRun(d.runId); // a crash cut its first firing off before the run launched
    if (now - d.receivedAt > DELIVERY_TTL_MS) {
      this.deps.recordSkip(d.triggerId, d.summary, "expired: no OpenCode process of the project ran within 24 h");
      store.endDelivery(d.id, "expired");
      return undefined;
    }
    const result = this.deps.fire(d.triggerId, { summary: d.summary, data: d.data });
    store.setDeliveryRun(d.id, result?.runId);
    return result ?? { launched: Promise.resolve() };
  }
}

/** "POST /hooks/deploy (push)", plus a JSON body's `action` when it has one. */
function deliverySummary(d: IncomingDelivery): string {
  let action = "";
  try {
    const parsed = JSON.parse(d.body) as { action?: unknown };
    if (typeof parsed?.action === "string") action = ` ${parsed.action.slice(0, 40)}`;
  } catch {
    // Not JSON: the body goes into the event as text.
  }
  return `POST /hooks/${d.name}${d.githubEvent ? ` (${d.githubEvent.slice(0, 40)}${action})` : action ? ` (${action.trim()})` : ""}`;
}

function cap(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}\n[... ${text.length - max} more characters]` : text;
}
