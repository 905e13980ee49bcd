import { optionalText, TriggerSpecError } from "../trigger-input.ts";
import { defineKind } from "./trigger-kind.ts";

export type OnceSpec = { kind: "once"; at: string; atMs: number };

/** `{"at":"2026-11-27T18:00:00+01:00"}`: once, at a time still to come. */
export const atKind = defineKind<OnceSpec, "schedule">({
  key: "at", kind: "once", timing: "schedule", fields: [],
  shape: '{"at":"2026-11-27T18:00:00+01:00"}',
  args: (_s, { text }) => ({ at: text }),
  parse: (input, { now }) => {
    const at = optionalText("at", input.at, '"2026-11-26T18:00:00+01:00"')!;
    const atMs = Date.parse(at);
    if (!/^\d{4}-\d\d-\d\dT/.test(at) || Number.isNaN(atMs)) {
      throw new TriggerSpecError(`"at": "${at}" is not an ISO time; write e.g. "2026-11-26T18:00:00+01:00" or "...Z".`);
    }
    if (atMs <= now) throw new TriggerSpecError(`"at": "${at}" is in the past (now is ${new Date(now).toISOString()}).`);
    return { kind: "once", at, atMs };
  },
  describe: (spec) => `once at ${spec.at}`,
});
