import type { TriggerKind } from "./trigger-kind.ts";
import { everyKind } from "./every.ts";
import { cronKind } from "./cron.ts";
import { atKind } from "./at.ts";
import { watchKind } from "./watch.ts";
import { commandKind } from "./command.ts";
import { webhookKind } from "./webhook.ts";
import { githubKind } from "./github.ts";
import { afterKind } from "./after.ts";

/**
 * Every trigger kind, in the order the tool schema lists their fields. A new kind is one file in
 * this folder and one line here: parsing, words, the tool's argument, checks before storing,
 * permissions and its source all come from the kind's object.
 */
export const TRIGGER_KINDS = [everyKind, cronKind, atKind, watchKind, commandKind, webhookKind, githubKind, afterKind] as const;

type Kinds = (typeof TRIGGER_KINDS)[number];
type SpecOf<K> = K extends TriggerKind<infer S, infer _T> ? S : never;
type EventSpecOf<K> = K extends TriggerKind<infer S, "event"> ? S : never;

/** A trigger's stored form, one per kind. */
export type TriggerSpec = SpecOf<Kinds>;
/** Time-based triggers: the scheduler fires them at planned times. */
export type ScheduleSpec = Exclude<TriggerSpec, EventSpec>;
/** Event triggers: a source (watcher, poller, listener) fires them when something happens. */
export type EventSpec = EventSpecOf<Kinds>;
export type EventKind = EventSpec["kind"];

export const EVENT_KINDS = TRIGGER_KINDS.filter((k) => k.timing === "event").map((k) => k.kind) as readonly EventKind[];

const byKind = new Map<string, TriggerKind>(TRIGGER_KINDS.map((k) => [k.kind, k as unknown as TriggerKind]));

/** The kind of a stored spec (every spec's `kind` is registered). */
export function kindOf<S extends TriggerSpec>(spec: S): TriggerKind<S> {
  return byKind.get(spec.kind) as unknown as TriggerKind<S>;
}

export function isEventSpec(spec: TriggerSpec): spec is EventSpec {
  return kindOf(spec).timing === "event";
}
