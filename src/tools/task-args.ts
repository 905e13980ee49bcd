import type { tool } from "@opencode-ai/plugin";
import { TaskError } from "../core/errors.ts";
import type { ModelRef } from "../core/task.ts";
import type { AutomationFields } from "../automations/automation-service.ts";
import type { AutomationService } from "../automations/automation-service.ts";

type S = typeof tool.schema;

/** Deps of every task_* tool. */
export type AutomationToolDeps = { automations: AutomationService; onCrash: (message: string, error: unknown) => void };

export const triggerArg = (s: S) =>
  s.object({
    every: s.string().optional().describe('e.g. "30m"'),
    cron: s.string().optional().describe("5 or 6 fields"),
    timezone: s.string().optional().describe("IANA, for cron"),
    at: s.string().optional().describe("ISO time, once"),
  }).strict();

/** The definition fields task_create and task_update share (all optional here). */
export const fieldArgs = (s: S) => ({
  prompt: s.string().optional(),
  agent: s.string().optional().describe("default general"),
  model: s.string().optional().describe("provider/model"),
  notify: s.enum(["always", "on_change", "on_failure", "never"]).optional().describe("default on_change"),
  session: s.enum(["fresh", "continue"]).optional().describe("continue: every run resumes one child"),
  max_runs: s.number().optional(),
  overlap: s.enum(["skip", "queue"]).optional(),
  catch_up: s.enum(["skip", "once"]).optional(),
  enabled: s.boolean().optional(),
});

type FieldInput = {
  title?: string; prompt?: string; agent?: string; model?: string; notify?: AutomationFields["notify"];
  session?: AutomationFields["sessionMode"]; max_runs?: number; overlap?: AutomationFields["overlap"];
  catch_up?: AutomationFields["catchUp"]; enabled?: boolean;
};

/** Tool argument names to definition fields; only what was given. */
export function toFields(args: FieldInput): Partial<AutomationFields> {
  requireText("title", args.title);
  requireText("prompt", args.prompt);
  const fields: Partial<AutomationFields> = {};
  if (args.title !== undefined) fields.title = args.title;
  if (args.prompt !== undefined) fields.prompt = args.prompt;
  if (args.agent !== undefined) fields.agent = args.agent;
  if (args.model !== undefined) fields.model = parseModel(args.model);
  if (args.notify !== undefined) fields.notify = args.notify;
  if (args.session !== undefined) fields.sessionMode = args.session;
  if (args.max_runs !== undefined) fields.maxRuns = positiveInteger("max_runs", args.max_runs);
  if (args.overlap !== undefined) fields.overlap = args.overlap;
  if (args.catch_up !== undefined) fields.catchUp = args.catch_up;
  if (args.enabled !== undefined) fields.enabled = args.enabled;
  return fields;
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new TaskError(`${name} must be a whole number of at least 1, got ${value}.`);
  return value;
}

/** Required text arguments may not be blank. */
export function requireText(name: string, value: string | undefined): void {
  if (value !== undefined && value.trim() === "") throw new TaskError(`${name} must not be empty.`);
}

function parseModel(text: string): ModelRef {
  const slash = text.indexOf("/");
  if (slash <= 0 || slash === text.length - 1) throw new TaskError(`model "${text}" must be "provider/model", e.g. "anthropic/claude-sonnet-4".`);
  return { providerID: text.slice(0, slash), modelID: text.slice(slash + 1) };
}
