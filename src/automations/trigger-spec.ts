import type { Cron } from "croner";
import { cronClass } from "../triggers/load-cron.ts";
import { isEventSpec, type Trigger, type TriggerSpec } from "./automation.ts";
import { kindOf, TRIGGER_KINDS } from "../triggers/kinds/registry.ts";
import type { TriggerKind } from "../triggers/kinds/trigger-kind.ts";
import { parseDuration, TriggerSpecError, type TriggerInput } from "../triggers/trigger-input.ts";

export { TriggerSpecError, type TriggerInput };

const KINDS = TRIGGER_KINDS as readonly TriggerKind[];

/** The shapes, as the model should write them; every refusal of a trigger's kind shows them. */
export const TRIGGER_SHAPES = KINDS.map((k) => k.shape).join(" | ");

/** An interval: at least 1 s. */
export function parseEvery(text: string): number {
  return parseDuration(text, "every");
}

/** Checks one trigger object and returns its stored form; the error says how to fix it. */
export function parseTrigger(input: TriggerInput, now: number, defaultZone = localZone()): TriggerSpec {
  const kind = kindOfInput(input);
  const allowed = new Set<string>([kind.key, ...kind.fields]);
  const stray = Object.keys(input).filter((k) => input[k] !== undefined && !allowed.has(k));
  if (stray.length > 0) throw new TriggerSpecError(`"${stray[0]}" does not go with "${kind.key}"${ownerText(stray[0]!)}. Shapes: ${TRIGGER_SHAPES}`);
  return kind.parse(input, { now, defaultZone }) as TriggerSpec;
}

/** The one kind key given; a key that is also another kind's field (every) is a kind only alone. */
function kindOfInput(input: TriggerInput): TriggerKind {
  const given = KINDS.filter((k) => input[k.key] !== undefined);
  const main = given.filter((k) => !given.some((other) => other !== k && other.fields.includes(k.key)));
  if (main.length === 1 && given.every((k) => k === main[0] || main[0]!.fields.includes(k.key))) return main[0]!;
  throw new TriggerSpecError(`A trigger has exactly one kind; got ${given.length === 0 ? "none" : given.map((k) => k.key).join(" and ")}. Shapes: ${TRIGGER_SHAPES}`);
}

function ownerText(key: string): string {
  const owners = KINDS.filter((k) => k.fields.includes(key)).map((k) => `"${k.key}"`);
  return owners.length > 0 ? ` (it goes with ${owners.join(" or ")})` : "";
}

/** The first occurrence strictly after `after`, or undefined when there is none. */
export function nextOccurrence(trigger: Pick<Trigger, "spec" | "createdAt">, after: number): number | undefined {
  const { spec } = trigger;
  if (isEventSpec(spec)) return undefined; // fired by its source, never by the clock
  if (spec.kind === "once") return spec.atMs > after ? spec.atMs : undefined;
  if (spec.kind === "interval") {
    // On the grid of the trigger's creation time, so every process computes the same times.
    const k = Math.floor((after - trigger.createdAt) / spec.everyMs) + 1;
    return trigger.createdAt + Math.max(1, k) * spec.everyMs;
  }
  return cronOf(spec.cron, spec.timezone).nextRun(new Date(after))?.getTime() ?? undefined;
}

/**
 * Occurrences in (after, until]: how many, the first and the last. Counting stops at `limit`
 * (a seconds cron down for a week has 600k occurrences); `capped` then says the count is a lower bound.
 */
export function occurrencesBetween(trigger: Pick<Trigger, "spec" | "createdAt">, after: number, until: number, limit = 10_000) {
  const first = nextOccurrence(trigger, after);
  if (first === undefined || first > until) return { count: 0 };
  const { spec } = trigger;
  if (spec.kind === "interval") {
    const count = Math.floor((until - first) / spec.everyMs) + 1;
    return { count, first, last: first + (count - 1) * spec.everyMs };
  }
  let count = 1;
  let last = first;
  for (let at = nextOccurrence(trigger, first); at !== undefined && at <= until; at = nextOccurrence(trigger, at)) {
    last = at;
    if (++count >= limit) return { count, first, last: latestUpTo(trigger, last, until), capped: true };
  }
  return { count, first, last };
}

/** The latest occurrence in [from, until], searching back from `until` in growing windows. */
function latestUpTo(trigger: Pick<Trigger, "spec" | "createdAt">, from: number, until: number): number {
  for (let window = 1000; ; window *= 4) {
    const start = Math.max(from, until - window);
    let last: number | undefined;
    for (let at = nextOccurrence(trigger, start - 1); at !== undefined && at <= until; at = nextOccurrence(trigger, at)) last = at;
    if (last !== undefined) return last;
    if (start === from) return from;
  }
}

/** A few words for lists: "every 30m", "cron 0 9 * * 1-5 (Europe/Paris)", "once at ...". */
export function describeTrigger(spec: TriggerSpec): string {
  return kindOf(spec).describe(spec);
}

export function localZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

const crons = new Map<string, Cron>();

/** Parsed patterns are kept: a thousand cron triggers share a few patterns. */
function cronOf(pattern: string, timezone: string): Cron {
  const key = `${timezone} ${pattern}`;
  let cron = crons.get(key);
  if (!cron) {
    cron = new (cronClass())(pattern, { timezone, paused: true });
    crons.set(key, cron);
  }
  return cron;
}
