export type { TriggerInput } from "./kinds/trigger-kind.ts";

/** A trigger the model wrote wrong; the message names the fix. */
export class TriggerSpecError extends Error {}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "90s", "30m", "2h", "1d", "1h30m" (and "500ms" where `minMs` allows) to ms. */
export function parseDuration(text: string, name: string, minMs = 1000, maxMs = 365 * 86_400_000): number {
  const parts = [...String(text).trim().matchAll(/(\d+(?:\.\d+)?)\s*(ms|[smhd])/g)];
  const rebuilt = parts.map((p) => p[0]).join("").replace(/\s/g, "");
  if (parts.length === 0 || rebuilt !== String(text).replace(/\s/g, "")) {
    throw new TriggerSpecError(`"${name}": "${text}" is not a duration; write e.g. "90s", "30m", "2h" or "1d".`);
  }
  const ms = Math.round(parts.reduce((sum, p) => sum + Number(p[1]) * UNITS[p[2]!]!, 0));
  if (ms < minMs) throw new TriggerSpecError(`"${name}": "${text}" is shorter than the minimum of ${minMs < 1000 ? `${minMs}ms` : `${minMs / 1000}s`}.`);
  if (ms > maxMs) throw new TriggerSpecError(`"${name}": "${text}" is longer than the maximum of ${maxMs / 1000}s.`);
  return ms;
}

/** A list of non-empty strings, trimmed; the error shows an example. */
export function stringList(name: string, value: unknown, example: string): string[] {
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string" || v.trim() === "")) {
    throw new TriggerSpecError(`"${name}" must be a list of non-empty strings, ${example}.`);
  }
  return value.map((v: string) => v.trim());
}

/** An optional text field: undefined stays undefined, anything else must be a string. */
export function optionalText(name: string, value: unknown, example: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw new TriggerSpecError(`"${name}" must be text, e.g. ${example}.`);
  return value;
}
