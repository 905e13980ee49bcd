import type { Trigger } from "./automation.ts";

/**
 * An automation's days, in its zone: the zone of its first cron trigger (where the user said when
 * it runs), else the machine's. Its daily budget counts from midnight there.
 */
export function automationZone(triggers: readonly Trigger[]): string {
  for (const t of triggers) if (t.spec.kind === "cron" && t.spec.timezone) return t.spec.timezone;
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

type Parts = { date: string; hour: number; minute: number; second: number; weekday: number };

const formats = new Map<string, Intl.DateTimeFormat>();

function partsIn(ms: number, zone: string): Parts {
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: zone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit",
      hour: "2-digit", minute: "2-digit", second: "2-digit", weekday: "short",
    });
    formats.set(zone, format);
  }
  const p = Object.fromEntries(format.formatToParts(ms).map((x) => [x.type, x.value]));
  const weekday = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].indexOf(p.weekday!);
  return { date: `${p.year}-${p.month}-${p.day}`, hour: Number(p.hour), minute: Number(p.minute), second: Number(p.second), weekday };
}

/** `2026-11-27`: the day `ms` falls on in `zone`. */
export function dayKey(ms: number, zone: string): string {
  return partsIn(ms, zone).date;
}

/** Midnight of the day `ms` falls on, in `zone` (a daylight saving change that day is allowed for). */
export function startOfDayIn(ms: number, zone: string): number {
  const now = partsIn(ms, zone);
  let start = ms - ms % 1000 - ((now.hour * 60 + now.minute) * 60 + now.second) * 1000;
  // The offset may have changed since midnight: move by what the wall clock then says.
  const then = partsIn(start, zone);
  const minutes = then.hour * 60 + then.minute;
  if (then.date === now.date) start -= minutes * 60_000;
  else if (minutes > 0) start += (24 * 60 - minutes) * 60_000;
  return start;
}

/** Midnight of the next day in `zone`. */
export function startOfNextDayIn(ms: number, zone: string): number {
  return startOfDayIn(startOfDayIn(ms, zone) + 36 * 3600_000, zone);
}

/** Midnight of this week's Monday in `zone`. */
export function startOfWeekIn(ms: number, zone: string): number {
  const today = startOfDayIn(ms, zone);
  // Noon of Monday, well inside it whatever the offset did in between.
  return startOfDayIn(today - partsIn(ms, zone).weekday * 86_400_000 + 12 * 3600_000, zone);
}
