import { optionalText, parseDuration } from "../trigger-input.ts";
import { defineKind } from "./trigger-kind.ts";

export type IntervalSpec = { kind: "interval"; every: string; everyMs: number };

/** `{"every":"30m"}`: on a grid from the trigger's creation. (`every` also paces command and github.) */
export const everyKind = defineKind<IntervalSpec, "schedule">({
  key: "every", kind: "interval", timing: "schedule", fields: [],
  shape: '{"every":"30m"}',
  args: (_s, { text }) => ({ every: text }),
  parse: (input) => {
    const every = optionalText("every", input.every, '"30m"')!;
    return { kind: "interval", every, everyMs: parseDuration(every, "every") };
  },
  describe: (spec) => `every ${spec.every}`,
});
