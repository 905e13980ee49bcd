import type { tool } from "@opencode-ai/plugin";
import { TaskError } from "../core/errors.ts";
import type { Expectation } from "../evidence/expectation-check.ts";
import type { CallContext } from "./tool-kit.ts";

type S = typeof tool.schema;

/** The `expect` argument of background_task (checkExpect refuses empty lists and blanks). */
export const expectArg = (s: S) =>
  s.object({
    files: s.array(s.string()).optional().describe("e.g. [\"report.md\"]"),
    command: s.string().optional().describe("e.g. npm test"),
  }).strict().optional();

/** What the model is shown of `expect`: checked strictly when parsed, shown without "additionalProperties". */
export const shownExpectArg = (s: S) => s.object({ files: s.array(s.string()).optional(), command: s.string().optional() }).optional();

/** The same for task_create and task_update, kept small (their eight definitions share a token budget); checkExpect does the rest. */
export const briefExpectArg = (s: S, description?: string) => {
  const arg = s.object({ files: s.array(s.string()).optional(), command: s.string().optional() }).strict().optional();
  return description ? arg.describe(description) : arg;
};

/** An `expect` needs at least one of its fields, none of them blank. */
export function checkExpect(expect: Expectation | undefined): Expectation | undefined {
  if (!expect) return undefined;
  if (!expect.files && !expect.command) {
    throw new TaskError('expect needs "files" (paths that must exist) or "command" (must exit 0), or both; e.g. expect: { "files": ["report.md"] }. Leave expect out to require nothing.');
  }
  if (expect.files && (expect.files.length === 0 || expect.files.some((f) => f.trim() === ""))) {
    throw new TaskError('expect.files must list at least one path and no empty ones, e.g. ["report.md"].');
  }
  if (expect.command !== undefined && expect.command.trim() === "") throw new TaskError('expect.command must not be empty; e.g. "npm test", or leave it out.');
  return expect;
}

/**
 * The plugin runs `expect.command`, steps and command triggers itself, outside the child's bash
 * tool: the user's own bash rules decide first, per simple command, as OpenCode's bash tool asks
 * (see approval/bash-patterns.ts). `of` names what the command belongs to; `refused` is the whole
 * answer when the user says no; `description` is what the prompt shows.
 */
export async function allowExpectCommand(command: string, call: CallContext, of: string, refused: string, description = `expect.command of ${of}`): Promise<void> {
  // Imported at the first command to judge: most processes never judge one, and every process pays for what the plugin imports.
  const { judgeCommand } = await import("../approval/bash-patterns.ts");
  const judged = await judgeCommand(command);
  // A whole string would be matched by a prefix rule ("git *" matches "git x; rm -rf ~"): refuse instead.
  if ("refused" in judged) throw new TaskError(`\`${command}\` cannot be put to the user's bash rules part by part: ${judged.refused}. Refused, and nothing was changed.`);
  if (!call.ask) return;
  // One ask per simple command: a part the user's rules allow passes without a prompt, and a
  // prompt names only the part it is about (OpenCode shows every pattern of one request).
  for (const [i, pattern] of judged.patterns.entries()) {
    try {
      await call.ask({ permission: "bash", patterns: [pattern], always: [judged.always[i]!], metadata: { command, description, patterns: [pattern] } });
    } catch {
      throw new TaskError(refused);
    }
  }
}
