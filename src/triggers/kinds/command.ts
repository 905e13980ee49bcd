import type { RunningSource } from "../trigger-source.ts";
import { parseDuration, TriggerSpecError } from "../trigger-input.ts";
import { defineKind } from "./trigger-kind.ts";
import { clip } from "./words.ts";

const DIFFS = ["hash", "full", "exit_code"] as const;

export type CommandSpec = { kind: "command"; command: string; every: string; everyMs: number; diff: (typeof DIFFS)[number]; timeout: string; timeoutMs: number };

/** A shell command run every `every`; fires when its output (or exit code) changes. */
export const commandKind = defineKind<CommandSpec, "event">({
  key: "command", kind: "command", timing: "event", fields: ["every", "diff", "timeout"],
  shape: '{"command":"docker ps","every":"30s","diff":"hash|full|exit_code","timeout":"20s"}',
  brief: "fires on output change",
  args: (s, { text }) => ({ command: text, diff: s.enum(DIFFS).optional(), timeout: text }),
  parse: (input) => {
    const command = String(input.command).trim();
    if (command === "") throw new TriggerSpecError(`"command" must be a shell command, e.g. "docker ps --format '{{.Names}}'".`);
    const diff = (input.diff ?? "hash") as CommandSpec["diff"];
    if (!DIFFS.includes(diff)) throw new TriggerSpecError(`"diff": "${diff}" must be one of ${DIFFS.join(", ")}.`);
    const every = String(input.every ?? "30s");
    const timeout = String(input.timeout ?? "30s");
    return {
      kind: "command", command, every, everyMs: parseDuration(every, "every"), diff,
      timeout, timeoutMs: parseDuration(timeout, "timeout", 1000, 3_600_000),
    };
  },
  describe: (spec) => `when \`${clip(spec.command, 60)}\` ${spec.diff === "exit_code" ? "exit code" : "output"} changes (checked every ${spec.every})`,
  inFull: (spec) => ({
    text: `runs this command (sh -c in the project) every ${spec.every}, timeout ${spec.timeout}; fires when its ${spec.diff === "exit_code" ? "exit code" : "output"} changes (${spec.diff})`,
    exact: [spec.command],
  }),
  commands: (spec) => [{
    command: spec.command,
    refusal: (refused) => `Running \`${spec.command}\` every ${spec.every} was not allowed (bash permission); ${refused}. Use a command the user allows.`,
  }],
  start: async (spec, ctx): Promise<RunningSource> => (await import("../command-source.ts")).startCommandSource(spec, ctx),
});
