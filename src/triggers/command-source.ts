import { createHash } from "node:crypto";
import type { CommandSpec } from "./kinds/command.ts";
import type { SourceContext, StartSource, TriggerEvent } from "./trigger-source.ts";
import { runShell, type ShellResult } from "./run-shell.ts";
import { unifiedDiff } from "./line-diff.ts";

export type { CommandSpec };

/**
 * What the last check saw, kept across restarts. `outcome` is "exit:0", "signal:SIGKILL" or
 * "timeout"; `hash` (sha256 of stdout) only for hash and full, `output` (stdout, at most 64 KB)
 * only for full: exit_code stores nothing that changes with the output, so it writes rarely.
 */
type CommandState = { command: string; outcome: string; hash?: string; output?: string };

/** The event's data is capped here (the caller caps at 8 KB too, after masking). */
const DATA_CAP_CHARS = 8 * 1024;
const TAIL_CHARS = 4 * 1024;

/**
 * Runs the command in the project every `everyMs` (a check still running at the next tick skips
 * that tick), killed with its process group at `timeoutMs`, and fires when the result changes
 * against the last one. The first check ever records a baseline and fires nothing.
 */
export const startCommandSource: StartSource<CommandSpec> = async (spec, ctx) => {
  let baseline = usableBaseline(spec, readState(ctx));
  let firstCheck = true;
  let note: string | undefined;
  let stopped = false;
  let running: Promise<void> | undefined;
  let timer: unknown;
  const abort = new AbortController();

  const setNote = (next: string | undefined) => {
    if (next === note) return;
    note = next;
    ctx.setNote(next);
  };

  const check = async () => {
    let result: ShellResult;
    try {
      result = await runShell(spec.command, { cwd: ctx.directory, timeoutMs: spec.timeoutMs, signal: abort.signal });
    } catch (error) {
      if (stopped) return;
      const message = error instanceof Error ? error.message : String(error);
      if (note !== message) ctx.log("warn", `command trigger could not run its command: ${message}`);
      setNote(message);
      return;
    }
    if (stopped) return;
    setNote(result.timedOut ? `The last check timed out after ${spec.timeout}.` : undefined);
    const now = snapshot(spec, result);
    const caughtUp = firstCheck;
    firstCheck = false;
    if (!baseline) {
      save(now);
      return;
    }
    const event = compare(spec, baseline, now, result);
    if (event) ctx.emit(caughtUp ? { ...event, caughtUp } : event);
    if (!sameState(baseline, now)) save(now);
  };

  const save = (state: CommandState) => {
    baseline = state;
    ctx.saveState(state);
  };

  const tick = () => {
    if (stopped) return;
    timer = ctx.clock.setTimeout(tick, spec.everyMs);
    if (running) {
      ctx.log("debug", "command trigger: the previous check is still running; this one is skipped", { command: spec.command });
      return;
    }
    running = check()
      .catch((error) => ctx.log("error", `command trigger check failed: ${error instanceof Error ? error.message : String(error)}`))
      .finally(() => (running = undefined));
  };
  tick();

  return {
    async stop() {
      stopped = true;
      ctx.clock.clearTimeout(timer);
      abort.abort();
      await running;
    },
  };
};

function readState(ctx: SourceContext): unknown {
  try {
    return ctx.loadState();
  } catch (error) {
    ctx.log("warn", `command trigger could not read its baseline; a new one is recorded: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}

/** A stored baseline this spec can compare against; a changed command or mode records a new one. */
function usableBaseline(spec: CommandSpec, stored: unknown): CommandState | undefined {
  if (typeof stored !== "object" || stored === null) return undefined;
  const state = stored as Partial<CommandState>;
  if (state.command !== spec.command || typeof state.outcome !== "string") return undefined;
  if (spec.diff !== "exit_code" && typeof state.hash !== "string") return undefined;
  if (spec.diff === "full" && typeof state.output !== "string") return undefined;
  return state as CommandState;
}

function snapshot(spec: CommandSpec, result: ShellResult): CommandState {
  const state: CommandState = { command: spec.command, outcome: outcomeOf(result) };
  if (spec.diff !== "exit_code") state.hash = createHash("sha256").update(result.stdout).digest("hex");
  if (spec.diff === "full") state.output = result.stdout; // already capped at 64 KB by runShell
  return state;
}

function outcomeOf(result: ShellResult): string {
  if (result.timedOut) return "timeout";
  return result.exitCode !== undefined ? `exit:${result.exitCode}` : `signal:${result.signal ?? "unknown"}`;
}

function sameState(a: CommandState, b: CommandState): boolean {
  return a.outcome === b.outcome && a.hash === b.hash && a.output === b.output;
}

/** The event for a change, or undefined. A change from or to a timeout fires in every mode. */
function compare(spec: CommandSpec, before: CommandState, now: CommandState, result: ShellResult): TriggerEvent | undefined {
  const outcomeChanged = before.outcome !== now.outcome;
  const timeoutInvolved = before.outcome === "timeout" || now.outcome === "timeout";
  if (outcomeChanged && (timeoutInvolved || spec.diff === "exit_code")) return outcomeEvent(spec, before.outcome, now.outcome, result);
  if (spec.diff === "exit_code" || before.hash === now.hash) return undefined;
  if (spec.diff === "hash") {
    return { summary: `\`${clip(spec.command)}\` output changed`, data: `New output${tailOf(result.stdout, DATA_CAP_CHARS)}` };
  }
  const diff = unifiedDiff(before.output ?? "", now.output ?? "");
  const counts = diff.text ? ` (${plural(diff.added, "line")} added, ${diff.removed} removed)` : " (only its final newline)";
  return { summary: `\`${clip(spec.command)}\` output changed${counts}`, data: diff.text ? headOf(diff.text, DATA_CAP_CHARS) : undefined };
}

function outcomeEvent(spec: CommandSpec, from: string, to: string, result: ShellResult): TriggerEvent {
  const bothExits = from.startsWith("exit:") && to.startsWith("exit:");
  const change = bothExits
    ? `exit code ${from.slice(5)} -> ${to.slice(5)}`
    : `${outcomeLabel(from, spec)} -> ${outcomeLabel(to, spec)}`;
  const parts = [`${outcomeLabel(to, spec)} (was ${outcomeLabel(from, spec)})`];
  parts.push(`stdout${tailOf(result.stdout, TAIL_CHARS)}`);
  if (result.stderr) parts.push(`stderr${tailOf(result.stderr, TAIL_CHARS)}`);
  return { summary: `\`${clip(spec.command)}\` ${change}`, data: parts.join("\n\n") };
}

function outcomeLabel(outcome: string, spec: CommandSpec): string {
  if (outcome === "timeout") return `timed out after ${spec.timeout}`;
  if (outcome.startsWith("exit:")) return `exit code ${outcome.slice(5)}`;
  return `killed by ${outcome.slice(7)}`;
}

/** ":\n<text>" or, when longer than max, its end with a note of what was cut. */
function tailOf(text: string, max: number): string {
  if (text === "") return ": (empty)";
  if (text.length <= max) return `:\n${text}`;
  return ` (last ${max} characters):\n…${text.slice(-max)}`;
}

function headOf(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n… (diff cut at ${max} characters)`;
}

function clip(command: string, max = 60): string {
  const line = command.split("\n")[0]!;
  return line.length > max || line !== command ? `${line.slice(0, max - 1)}…` : line;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
