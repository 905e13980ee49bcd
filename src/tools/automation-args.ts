import type { tool } from "@opencode-ai/plugin";
import { AutomationRefusal } from "../core/errors.ts";
import type { ModelRef } from "../core/task.ts";
import type { AutomationFields } from "../automations/automation-catalog.ts";
import type { Trigger } from "../automations/automation.ts";
import { TRIGGER_KINDS } from "../triggers/kinds/registry.ts";
import { commandNeeds, TRIGGERS_BRIEF } from "../triggers/prepare-triggers.ts";
import type { Automations } from "../automations/automation-layer.ts";
import type { Expectation } from "../evidence/expectation-check.ts";
import { allowExpectCommand, briefExpectArg, checkExpect } from "./expect-arg.ts";
import { parseSteps, type Step, type StepInput } from "../automations/step-spec.ts";
import type { CallContext } from "./tool-kit.ts";
import { parseAutomationBudget, type AutomationBudget } from "../automations/automation-budget.ts";

type S = typeof tool.schema;

const NOTIFY = ["always", "on_change", "on_failure", "never"] as const;
const SESSION = ["fresh", "continue"] as const;
const PROMPT_WHEN = ["failure", "always"] as const;

/** Deps of every task_* tool; `hasWorkers`: the workers option names some (then `worker` is shown). */
export type AutomationToolDeps = { automations: Automations; onCrash: (message: string, error: unknown) => void; hasWorkers?: boolean };

/** A shape without `worker` when no workers are configured: the argument is still accepted, but not shown. */
export function withoutWorker<T extends Record<string, unknown>>(shape: T, hasWorkers: boolean | undefined): T {
  if (hasWorkers) return shape;
  const { worker: _worker, ...rest } = shape;
  return rest as T;
}

/**
 * A trigger: one kind key plus that kind's fields. The shapes are shown once, in task_create's
 * `triggers` description; a wrong combination is refused with them (a shared character budget).
 */
export const triggerArg = (s: S) => shared(s, "trigger", () => {
  const pieces = { text: s.string().optional(), list: s.array(s.string()).optional() };
  return s.object(Object.assign({}, ...TRIGGER_KINDS.map((k) => k.args(s, pieces)))).strict();
});

/**
 * What task_create shows of a trigger: every kind's fields but `secret` (the plugin generates
 * webhook secrets; one given is refused, with why).
 */
export const shownTriggerArg = (s: S) => shared(s, "shown trigger", () => {
  const pieces = { text: s.string().optional(), list: s.array(s.string()).optional() };
  const { secret: _secret, ...fields } = Object.assign({}, ...TRIGGER_KINDS.map((k) => k.args(s, pieces))) as Record<string, never>;
  return s.object(fields); // parsed strictly by triggerArg; shown without "additionalProperties"
});

/** What task_create shows of prompt_when: its values in words (parsed by fieldArgs' enum). */
export const shownPromptWhen = (s: S) => shared(s, "shown prompt_when", () => s.any().optional().describe("failure (default): model only if a step fails; always"));

/** What task_create shows of steps (parsed strictly by fieldArgs). */
export const shownStepsArg = (s: S) => shared(s, "shown steps", () =>
  s.array(s.object({ ...stepShape(s), retries: s.any().optional(), retry_delay: s.any().optional() })).optional().describe(STEPS_DESCRIPTION));

/** What task_create says about its triggers: each kind's key, once. */
export const TRIGGERS_DESCRIPTION = TRIGGERS_BRIEF;

/**
 * The definition fields task_create and task_update share (all optional here). Defaults and what
 * expect means are said in task_create only: the model reads both, and they share a token budget.
 */
export const fieldArgs = (s: S, forCreate: boolean) => shared(s, `fields ${forCreate}`, () => ({
  prompt: s.string().optional(),
  agent: s.string().optional(),
  model: s.string().optional(),
  notify: (forCreate ? s.enum(NOTIFY).optional().describe("default on_change") : s.enum(NOTIFY).optional()),
  session: forCreate ? s.enum(SESSION).optional().describe("continue: runs resume one child") : s.enum(SESSION).optional(),
  max_runs: s.number().optional(),
  overlap: s.enum(["skip", "queue"]).optional(),
  catch_up: s.enum(["skip", "once"]).optional(),
  enabled: s.boolean().optional(),
  expect: briefExpectArg(s),
  steps: stepsArg(s),
  prompt_when: s.enum(PROMPT_WHEN).optional(),
  channels: forCreate ? s.array(s.string()).optional().describe("configured channel names") : s.array(s.string()).optional(),
  report: s.enum(["session", "channels"]).optional(),
  worker: s.string().optional(),
  // Checked by parseAutomationBudget, whose refusals name the fix; task_create shows its keys (budgetShape).
  budget: s.any().optional(),
  isolation: s.enum(["worktree", "none"]).optional(),
}));

/** What task_create shows of `budget`: its keys, in words (a schema of four numbers costs every request twice as much). */
export const budgetShape = (s: S) => shared(s, "budget", () => s.any().optional().describe("{usd,tokens}_per_{run,day}"));

/**
 * Zod schemas are immutable, so the task_* tools share one instance of each argument shape: every
 * schema built at start costs memory in every OpenCode process (about 9 KB each, and building
 * hundreds makes the runtime compile zod's constructors), and most processes never call a task_* tool.
 */
const built = new WeakMap<S, Map<string, unknown>>();
function shared<T>(s: S, key: string, build: () => T): T {
  const byKey = built.get(s) ?? new Map<string, unknown>();
  built.set(s, byKey);
  if (!byKey.has(key)) byKey.set(key, build());
  return byKey.get(key) as T;
}

/** Steps: shell commands run before the prompt, or instead of it. */
const stepsArg = (s: S) => s.array(s.object(stepShape(s)).strict()).optional();

const stepShape = (s: S) => ({
  name: s.string(), run: s.string(), timeout: s.string().optional(), continue_on_error: s.boolean().optional(),
  retries: s.number().optional(), retry_delay: s.string().optional(),
});

// The retry fields' types are said here (shown without a schema: cheaper).
const STEPS_DESCRIPTION = "sh; later read $STEP_<NAME>_EXIT, _OUTPUT_FILE; retries 0-5, retry_delay 5s";

type FieldInput = {
  title?: string; prompt?: string; agent?: string; model?: string; notify?: AutomationFields["notify"];
  session?: AutomationFields["sessionMode"]; max_runs?: number; overlap?: AutomationFields["overlap"];
  catch_up?: AutomationFields["catchUp"]; enabled?: boolean; expect?: Expectation; steps?: StepInput[];
  channels?: string[]; report?: "session" | "channels"; worker?: string; budget?: unknown;
  isolation?: "worktree" | "none"; prompt_when?: "failure" | "always";
};

/**
 * Tool argument names to definition fields; only what was given. `clearablePrompt` (task_update):
 * an empty prompt removes it, leaving the steps.
 */
export function toFields(args: FieldInput, clearablePrompt = false): Partial<AutomationFields> {
  requireText("title", args.title);
  if (!(clearablePrompt && args.prompt === "")) requireText("prompt", args.prompt);
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
  if (args.expect !== undefined) fields.expect = checkExpect(args.expect);
  if (args.channels !== undefined) fields.channels = args.channels;
  if (args.report !== undefined) fields.report = args.report;
  if (args.steps !== undefined) fields.steps = parseSteps(args.steps);
  if (args.worker !== undefined) fields.worker = args.worker.trim() || "local";
  if (args.budget !== undefined) fields.budget = budgetOf(args.budget);
  if (args.isolation !== undefined) fields.isolation = args.isolation === "worktree" ? "worktree" : undefined;
  if (args.prompt_when !== undefined) fields.promptWhen = args.prompt_when;
  return fields;
}

/** `{}`: none (task_update removes it). */
function budgetOf(value: unknown): AutomationBudget | undefined {
  const parsed = parseAutomationBudget(value);
  if (parsed.problem !== undefined) throw new AutomationRefusal(`${parsed.problem} Nothing was stored.`);
  return parsed.budget;
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new AutomationRefusal(`${name} must be a whole number of at least 1, got ${value}.`);
  return value;
}

/** Required text arguments may not be blank. */
export function requireText(name: string, value: string | undefined): void {
  if (value !== undefined && value.trim() === "") throw new AutomationRefusal(`${name} must not be empty.`);
}

function parseModel(text: string): ModelRef {
  const slash = text.indexOf("/");
  if (slash <= 0 || slash === text.length - 1) throw new AutomationRefusal(`model "${text}" must be "provider/model", e.g. "anthropic/claude-sonnet-4".`);
  return { providerID: text.slice(0, slash), modelID: text.slice(slash + 1) };
}

/** A command trigger runs its command every few seconds: the user's bash permission decides first, as for expect.command. */
export async function allowTriggerCommands(triggers: Trigger[], call: CallContext, refused: string): Promise<void> {
  for (const need of commandNeeds(triggers.map((t) => t.spec))) {
    await allowExpectCommand(need.command, call, "a command trigger", need.refusal(refused));
  }
}

/**
 * The plugin runs step commands itself: the user's bash permission decides first, for each command
 * that `before` (the steps as they were) did not already have. The prompt's title names the step,
 * and the automation and when it runs when `of` is given (the TUI shows it above the command).
 */
export async function allowStepCommands(steps: Step[] | undefined, call: CallContext, refused: string, before: Step[] = [], of?: { title: string; triggers: string[] }): Promise<void> {
  const automation = of ? `automation "${of.title}" (${of.triggers.join("; ") || "task_run only"})` : "an automation";
  for (const step of steps ?? []) {
    if (before.some((b) => b.run === step.run)) continue;
    const refusal = `Running \`${step.run}\` (step "${step.name}") was not allowed (bash permission); ${refused}. Use a command the user allows.`;
    await allowExpectCommand(step.run, call, "an automation", refusal, `Step "${step.name}" of ${automation}`);
  }
}

/**
 * The lines a tool answer adds for new webhooks: where to POST, and where the user reads the
 * secret. Never the secret itself: a tool answer goes to the model provider and the history.
 */
export function webhookLines(triggers: Trigger[], webhooks: Map<string, { name: string }>): string[] {
  return triggers.flatMap((t) => {
    const hook = webhooks.get(t.id);
    if (!hook || t.spec.kind !== "webhook") return [];
    return [`Webhook ${hook.name}: POST ${t.spec.url}, signed with a secret the plugin generated; it is not shown here: the user reads it in a terminal with \`opencode-errands webhooks --show-secret\`. Signatures: GitHub's X-Hub-Signature-256, or Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature).`];
  });
}

/** A definition's expect.command runs after each run: the user's bash permission decides first, as for background_task. */
export async function allowRunCommand(fields: Partial<AutomationFields>, call: CallContext, refused: string): Promise<void> {
  const command = fields.expect?.command;
  if (command) await allowExpectCommand(command, call, "an automation", `Running \`${command}\` after each run was not allowed (bash permission); ${refused}. Leave out expect.command, or use a command the user allows.`);
}
