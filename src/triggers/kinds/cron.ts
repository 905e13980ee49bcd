import { cronClass } from "../load-cron.ts";
import { optionalText, TriggerSpecError } from "../trigger-input.ts";
import { defineKind } from "./trigger-kind.ts";

export type CronSpec = { kind: "cron"; cron: string; timezone: string };

/** `{"cron":"0 9 * * 1-5","timezone":"Europe/Paris"}`: 5 or 6 fields, in the user's zone by default. */
export const cronKind = defineKind<CronSpec, "schedule">({
  key: "cron", kind: "cron", timing: "schedule", fields: ["timezone"],
  shape: '{"cron":"0 9 * * 1-5","timezone":"Europe/Paris"}',
  args: (_s, { text }) => ({ cron: text, timezone: text }),
  parse: (input, { defaultZone }) => {
    const cron = optionalText("cron", input.cron, '"0 9 * * 1-5"')!;
    const timezone = optionalText("timezone", input.timezone, '"Europe/Paris"') ?? defaultZone;
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
  },
  describe: (spec) => `cron ${spec.cron} (${spec.timezone})`,
});

function isZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
