import { AutomationRefusal } from "../core/errors.ts";
import { parseDuration, TriggerSpecError } from "../triggers/trigger-input.ts";

/** A step as the model writes it (task_create / task_update `steps`). */
export type StepInput = { name: string; run: string; timeout?: string; continue_on_error?: boolean; retries?: number; retry_delay?: string };

/** A command an automation runs with `sh -c` in the project before (or instead of) its prompt. */
export type Step = {
  name: string;
  run: string;
  /** As written ("2m"); absent: the default. */
  timeout?: string;
  timeoutMs: number;
  /** A failure of this step does not stop the later ones and does not fail the run. */
  continueOnError?: boolean;
  /** How many times a failed try runs again before the step counts as failed (0-5; absent: 0). */
  retries?: number;
  /** As written ("30s"); absent: the default. */
  retryDelay?: string;
  /** The wait before each retry. Absent with retries: DEFAULT_RETRY_DELAY_MS. */
  retryDelayMs?: number;
};

/** passed: exit 0; failed: another exit code or a signal; timed_out: killed at its timeout. */
export type StepStatus = "not_run" | "running" | "passed" | "failed" | "timed_out" | "cancelled";

/** One step of one run, as stored on the run row (output tail capped, secrets masked). */
export type StepResult = {
  name: string;
  run: string;
  status: StepStatus;
  /** The exit code later steps see: 124 after a timeout, 128+n after signal n. */
  exitCode?: number;
  durationMs?: number;
  /** The last lines of stdout and stderr together. */
  tail?: string;
  continueOnError?: boolean;
  /** A step with retries: its earlier, failed tries, oldest first (the step's own fields are its last try). */
  tries?: StepTry[];
};

/** One failed try of a step that was tried again. */
export type StepTry = Pick<StepResult, "status" | "exitCode" | "durationMs" | "tail">;

export const DEFAULT_STEP_TIMEOUT_MS = 5 * 60_000;
const MAX_STEP_TIMEOUT_MS = 86_400_000;
export const MAX_STEPS = 20;
export const MAX_RETRIES = 5;
export const DEFAULT_RETRY_DELAY_MS = 5000;
/** Shorter waits are allowed (a flaky check tried again at once), never none: a loop on a broken command stays visible. */
export const MIN_RETRY_DELAY_MS = 100;
const MAX_RETRY_DELAY_MS = 3_600_000;
const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/;
const EXAMPLE = 'e.g. steps: [{ "name": "test", "run": "npm test", "timeout": "10m" }]';

/** The environment variable prefix of a step: "unit-tests" -> "STEP_UNIT_TESTS". */
export function stepEnvPrefix(name: string): string {
  return `STEP_${name.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
}

/** Checks the model's steps; throws a AutomationRefusal naming the first bad one and how to fix it. */
export function parseSteps(inputs: StepInput[]): Step[] {
  if (inputs.length > MAX_STEPS) throw new AutomationRefusal(`steps: at most ${MAX_STEPS} steps, got ${inputs.length}.`);
  const prefixes = new Map<string, string>();
  return inputs.map((input, i) => {
    const where = `steps[${i}]`;
    if (!NAME.test(input.name ?? "")) {
      throw new AutomationRefusal(`${where}.name "${input.name}" must be 1-40 letters, digits, "-" or "_" (later steps read it as $${stepEnvPrefix("name")}_EXIT); ${EXAMPLE}.`);
    }
    const prefix = stepEnvPrefix(input.name);
    const clash = prefixes.get(prefix);
    if (clash !== undefined) throw new AutomationRefusal(`${where}.name "${input.name}" and "${clash}" would both be $${prefix}_EXIT; give each step its own name.`);
    prefixes.set(prefix, input.name);
    if ((input.run ?? "").trim() === "") throw new AutomationRefusal(`${where}.run must be a shell command; ${EXAMPLE}.`);
    const step: Step = { name: input.name, run: input.run, timeoutMs: DEFAULT_STEP_TIMEOUT_MS };
    if (input.timeout !== undefined) {
      step.timeout = input.timeout;
      step.timeoutMs = duration(input.timeout, `${where}.timeout`, 1000, MAX_STEP_TIMEOUT_MS);
    }
    if (input.continue_on_error) step.continueOnError = true;
    return withRetries(step, input, where);
  });
}

/** `retries` 0-5 and `retry_delay` (a duration, at least MIN_RETRY_DELAY_MS); kept only when the step retries. */
function withRetries(step: Step, input: StepInput, where: string): Step {
  const retries = input.retries ?? 0;
  if (!Number.isInteger(retries) || retries < 0 || retries > MAX_RETRIES) {
    throw new AutomationRefusal(`${where}.retries must be a whole number from 0 to ${MAX_RETRIES}, got ${input.retries}; e.g. "retries": 2, "retry_delay": "10s".`);
  }
  const delayMs = input.retry_delay === undefined ? DEFAULT_RETRY_DELAY_MS : duration(input.retry_delay, `${where}.retry_delay`, MIN_RETRY_DELAY_MS, MAX_RETRY_DELAY_MS);
  if (retries === 0) return step;
  step.retries = retries;
  step.retryDelayMs = delayMs;
  if (input.retry_delay !== undefined) step.retryDelay = input.retry_delay;
  return step;
}

function duration(text: string, name: string, minMs: number, maxMs: number): number {
  try {
    return parseDuration(text, name, minMs, maxMs);
  } catch (error) {
    if (error instanceof TriggerSpecError) throw new AutomationRefusal(error.message);
    throw error;
  }
}

/**
 * What every definition must hold after a create or an update: something to run, and an
 * expectation only where a child's work can be checked.
 */
export function checkRunnable(a: { prompt: string; steps?: Step[]; expect?: unknown }): void {
  const hasSteps = (a.steps?.length ?? 0) > 0;
  if (a.prompt.trim() === "" && !hasSteps) {
    throw new AutomationRefusal(`An automation needs a prompt (work for an agent), steps (shell commands), or both; ${EXAMPLE}.`);
  }
  if (a.prompt.trim() === "" && a.expect) {
    throw new AutomationRefusal("expect checks an agent's work, and without a prompt no agent runs: leave expect out, or make the check a step.");
  }
}
