import type { Cron } from "croner";
import { cronClass } from "./load-cron.ts";
import { isEventSpec, type Trigger, type TriggerSpec } from "./automation.ts";
import { describeEventTrigger } from "../triggers/describe-event-trigger.ts";

/** A trigger object as the model writes it. */
export type TriggerInput = { every?: string; cron?: string; timezone?: string; at?: string };

export class TriggerSpecError extends Error {}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "90s", "30m", "2h", "1d", "1h30m" to ms; at least 1 s. */
export function parseEvery(text: string): number {
  const parts = [...text.trim().matchAll(/(\d+(?:\.\d+)?)\s*([smhd])/g)];
  const rebuilt = parts.map((p) => p[0]).join("").replace(/\s/g, "");
  if (parts.length === 0 || rebuilt !== text.replace(/\s/g, "")) {
    throw new TriggerSpecError(`"every": "${text}" is not a duration; write e.g. "90s", "30m", "2h" or "1d".`);
  }
  const ms = parts.reduce((sum, p) => sum + Number(p[1]) * UNITS[p[2]!]!, 0);
  if (ms < 1000) throw new TriggerSpecError(`"every": "${text}" is shorter than the minimum of 1s.`);
  return Math.round(ms);
}

/** Checks one trigger object and returns its stored form; the error says how to fix it. */
export function parseTrigger(input: TriggerInput, now: number, defaultZone = localZone()): TriggerSpec {
  const kinds = (["every", "cron", "at"] as const).filter((k) => input[k] !== undefined);
  if (kinds.length !== 1) {
    throw new TriggerSpecError(`A trigger has exactly one of "every" (interval, e.g. "30m"), "cron" (e.g. "0 9 * * 1-5") or "at" (an ISO time); got ${kinds.length === 0 ? "none" : kinds.join(" and ")}.`);
  }
  if (input.timezone !== undefined && input.cron === undefined) throw new TriggerSpecError(`"timezone" goes with "cron" only.`);
  if (input.every !== undefined) return { kind: "interval", every: input.every, everyMs: parseEvery(input.every) };
  if (input.at !== undefined) return parseOnce(input.at, now);
  return parseCron(input.cron!, input.timezone ?? defaultZone);
}

function parseOnce(at: string, now: number): TriggerSpec {
  const atMs = Date.parse(at);
  if (!/^\d{4}-\d\d-\d\dT/.test(at) || Number.isNaN(atMs)) {
    throw new TriggerSpecError(`"at": "${at}" is not an ISO time; write e.g. "2026-11-26T18:00:00+01:00" or "...Z".`);
  }
  if (atMs <= now) throw new TriggerSpecError(`"at": "${at}" is in the past (now is ${new Date(now).toISOString()}).`);
  return { kind: "once", at, atMs };
}

function parseCron(cron: string, timezone: string): TriggerSpec {
  const fields = cron.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6) {
    throw new TriggerSpecError(`"cron": "${cron}" has ${fields} fields; use 5 (minute hour day month weekday) or 6 (seconds first).`);
  }
  if (!isZone(timezone)) throw new TriggerSpecError(`"timezone": "${timezone}" is not an IANA time zone; write e.g. "Europe/Paris" or "UTC".`);
  try {
    new (cronClass())(cron, { timezone, paused: true });
  } catch (error) {
    throw new TriggerSpecError(`"cron": "${cron}" is not valid: ${error instanceof Error ? error.message : String(error)}.`);
  }
  return { kind: "cron", cron: cron.trim(), timezone };
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
  if (spec.kind === "interval") return `every ${spec.every}`;
  if (spec.kind === "cron") return `cron ${spec.cron} (${spec.timezone})`;
  if (spec.kind === "once") return `once at ${spec.at}`;
  return describeEventTrigger(spec);
}

export function localZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

function isZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
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
