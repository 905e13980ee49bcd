import type { Cron } from "croner";
import { cronClass } from "./load-cron.ts";
import { isEventSpec, type Trigger, type TriggerSpec } from "./automation.ts";
import { describeEventTrigger } from "../triggers/describe-event-trigger.ts";
import { parseEventTrigger } from "../triggers/parse-event-trigger.ts";
import { parseDuration, TriggerSpecError, type TriggerInput } from "./trigger-input.ts";

export { TriggerSpecError, type TriggerInput };


/** The shapes, as the model should write them; every refusal of a trigger's kind shows them. */
export const TRIGGER_SHAPES = [
  '{"every":"30m"}', '{"cron":"0 9 * * 1-5","timezone":"Europe/Paris"}', '{"at":"2026-11-27T18:00:00+01:00"}',
  '{"watch":["src/","test/**/*.ts"],"ignore":["**/*.log"],"debounce":"2s"}',
  '{"command":"docker ps","every":"30s","diff":"hash|full|exit_code","timeout":"20s"}', '{"webhook":"deploy"}',
  '{"github":"owner/repo" or ".","events":["pr_opened","ci_failed"],"ref":"main","every":"60s"}',
].join(" | ");

/** Each kind's key and the other keys it takes; `every` is a kind only without command or github. */
const KIND_FIELDS: Record<string, readonly (keyof TriggerInput)[]> = {
  cron: ["timezone"], at: [], watch: ["ignore", "debounce"], command: ["every", "diff", "timeout"],
  webhook: ["secret"], github: ["events", "ref", "every"], every: [],
};

/** An interval: at least 1 s. */
export function parseEvery(text: string): number {
  return parseDuration(text, "every");
}

/** Checks one trigger object and returns its stored form; the error says how to fix it. */
export function parseTrigger(input: TriggerInput, now: number, defaultZone = localZone()): TriggerSpec {
  const kind = kindOf(input);
  const allowed = new Set<string>([kind, ...KIND_FIELDS[kind]!]);
  const stray = Object.keys(input).filter((k) => input[k as keyof TriggerInput] !== undefined && !allowed.has(k));
  if (stray.length > 0) throw new TriggerSpecError(`"${stray[0]}" does not go with "${kind}"${ownerText(stray[0]!)}. Shapes: ${TRIGGER_SHAPES}`);
  switch (kind) {
    case "every": return { kind: "interval", every: input.every!, everyMs: parseEvery(input.every!) };
    case "at": return parseOnce(input.at!, now);
    case "cron": return parseCron(input.cron!, input.timezone ?? defaultZone);
    default: return parseEventTrigger(kind, input);
  }
}

function kindOf(input: TriggerInput): string {
  const keys: string[] = (["cron", "at", "watch", "command", "webhook", "github"] as const).filter((k) => input[k] !== undefined);
  if (keys.length === 0 && input.every !== undefined) return "every";
  if (keys.length === 1 && (input.every === undefined || KIND_FIELDS[keys[0]!]!.includes("every"))) return keys[0]!;
  if (input.every !== undefined) keys.unshift("every");
  throw new TriggerSpecError(`A trigger has exactly one kind; got ${keys.length === 0 ? "none" : keys.join(" and ")}. Shapes: ${TRIGGER_SHAPES}`);
}

function ownerText(key: string): string {
  const owners = Object.entries(KIND_FIELDS).filter(([, fields]) => fields.includes(key as keyof TriggerInput)).map(([k]) => `"${k}"`);
  return owners.length > 0 ? ` (it goes with ${owners.join(" or ")})` : "";
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
