import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { constants, tmpdir } from "node:os";
import { join } from "node:path";
import { maskSecrets } from "../core/mask-secrets.ts";
import { runShell, type ShellResult } from "../triggers/run-shell.ts";
import { stepEnvPrefix, type Step, type StepResult, type StepTry } from "./step-spec.ts";
import { systemClock, type Clock } from "../core/clock.ts";
import { lastLines } from "./step-text.ts";

/** Lines (and characters) of a step's output kept on the run row. */
const STORED_TAIL_LINES = 20;
const STORED_TAIL_CHARS = 2000;

export type StepsOptions = {
  /** The project directory: every step starts there. */
  cwd: string;
  /** Variables every step sees (the automation, the run). */
  env: Record<string, string>;
  /** The event that fired the run: $EVENT_SUMMARY, and its data in the file $EVENT_FILE. */
  event?: { summary: string; data?: string };
  /** Aborting kills the running step's process group; later steps do not run. */
  signal: AbortSignal;
  /** Called when a step starts and when it ends, with every step's state so far. */
  onProgress?: (results: StepResult[]) => void;
  /** Times the wait between a step's tries (default: the system clock). */
  clock?: Clock;
};

export type StepsOutcome = {
  results: StepResult[];
  /** The step that failed the run (not a continue_on_error one), with its whole kept output. */
  failure?: { result: StepResult; output: string };
  cancelled: boolean;
};

/**
 * Runs the steps one after another with `sh -c` (see runShell: own process group, killed at the
 * timeout, the last 64 KB of output kept). Later steps see earlier ones only through variables
 * ($STEP_<NAME>_EXIT, and $STEP_<NAME>_OUTPUT_FILE naming a file with its output), never through
 * their command line: output is untrusted text. The files live in a private temp folder removed
 * at the end. Rejects only when a step cannot be started at all (e.g. the directory is gone).
 */
export async function runSteps(steps: Step[], options: StepsOptions): Promise<StepsOutcome> {
  const results: StepResult[] = steps.map((s) => ({ name: s.name, run: s.run, status: "not_run", ...(s.continueOnError ? { continueOnError: true } : {}) }));
  const dir = await mkdtemp(join(tmpdir(), "obt-steps-"));
  try {
    const env = { ...options.env, ...(await eventEnv(dir, options.event)) };
    for (const [i, step] of steps.entries()) {
      if (options.signal.aborted) return { results, cancelled: true };
      const { result, output } = await runStep(step, i, results, env, options);
      const file = join(dir, `${step.name}.out`);
      await writeFile(file, output, { mode: 0o600 });
      Object.assign(env, { [`${stepEnvPrefix(step.name)}_EXIT`]: String(result.exitCode), [`${stepEnvPrefix(step.name)}_OUTPUT_FILE`]: file });
      options.onProgress?.(results.map((r) => ({ ...r })));
      if (result.status === "cancelled") return { results, cancelled: true };
      if (result.status !== "passed" && !step.continueOnError) return { results, failure: { result, output }, cancelled: false };
    }
    return { results, cancelled: false };
  } finally {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/**
 * One step, tried again after `retryDelayMs` up to `retries` times while it fails or times out.
 * Each failed try stays on the result (`tries`), so the run's history shows every one of them.
 */
async function runStep(step: Step, i: number, results: StepResult[], env: Record<string, string>, options: StepsOptions): Promise<{ result: StepResult; output: string }> {
  const tries: StepTry[] = [];
  for (;;) {
    results[i] = { ...results[i]!, status: "running", ...(tries.length ? { tries: [...tries] } : {}) };
    options.onProgress?.(results.map((r) => ({ ...r })));
    const shell = await runShell(`exec 2>&1\n${step.run}`, { cwd: options.cwd, timeoutMs: step.timeoutMs, env, signal: options.signal });
    const result = stepResult(results[i]!, shell, options.signal.aborted);
    results[i] = result;
    const retry = (result.status === "failed" || result.status === "timed_out") && tries.length < (step.retries ?? 0);
    if (!retry) return { result, output: shell.stdout + shell.stderr };
    const { status, exitCode, durationMs, tail } = result;
    tries.push({ status, exitCode, durationMs, ...(tail ? { tail } : {}) });
    results[i] = { ...result, status: "running", tries: [...tries] };
    options.onProgress?.(results.map((r) => ({ ...r })));
    if (!(await waitOrAbort(step.retryDelayMs ?? 0, options.clock ?? systemClock, options.signal))) {
      results[i] = { ...result, status: "cancelled", tries: [...tries] };
      return { result: results[i]!, output: shell.stdout + shell.stderr };
    }
  }
}

/** Waits `ms`; false when aborted first. */
function waitOrAbort(ms: number, clock: Clock, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clock.clearTimeout(timer);
      resolve(false);
    };
    const timer = clock.setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

async function eventEnv(dir: string, event: StepsOptions["event"]): Promise<Record<string, string>> {
  if (!event) return {};
  const file = join(dir, "event");
  await writeFile(file, event.data ?? "", { mode: 0o600 });
  return { EVENT_SUMMARY: event.summary, EVENT_FILE: file };
}

function stepResult(started: StepResult, shell: ShellResult, aborted: boolean): StepResult {
  const status = aborted ? "cancelled" : shell.timedOut ? "timed_out" : shell.exitCode === 0 ? "passed" : "failed";
  const tail = lastLines(maskSecrets(shell.stdout + shell.stderr), STORED_TAIL_LINES, STORED_TAIL_CHARS);
  return { ...started, status, exitCode: exitCodeOf(shell), durationMs: shell.durationMs, ...(tail ? { tail } : {}) };
}

/** What a shell would put in $?: the exit code, 124 after a timeout (as timeout(1)), 128+n after signal n. */
function exitCodeOf(shell: ShellResult): number {
  if (shell.exitCode !== undefined) return shell.exitCode;
  if (shell.timedOut) return 124;
  const signal = shell.signal ? constants.signals[shell.signal as keyof typeof constants.signals] : undefined;
  return 128 + (signal ?? 9);
}
