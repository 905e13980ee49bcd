import type { Clock } from "../core/clock.ts";

/** Something that happened, as a source reports it; each one fires its trigger once. */
export type TriggerEvent = {
  /** One line, e.g. "src/a.ts and 3 more changed", "new PR #12 by ada: Fix login". */
  summary: string;
  /** Details for the run's prompt (the caller caps them at 8 KB and masks secrets). */
  data?: string;
  /** It happened while no process watched (e.g. during a restart) and is reported late. */
  caughtUp?: boolean;
  /**
   * The event's own name, for a source that may report it twice (a new holder of the trigger
   * repeats what the last one fired but had not yet noted, e.g. "after:<upstream run id>"):
   * a key the trigger has fired already fires nothing.
   */
  key?: string;
};

/** What a running source may use. One source runs per trigger, in one process at a time. */
export type SourceContext = {
  /** The project directory: relative paths and commands start here. */
  directory: string;
  /** Fires the trigger once with this event. Never throws. */
  emit(event: TriggerEvent): void;
  /** The source's durable state for this trigger (baseline, ETags, seen ids): JSON, survives restarts. */
  loadState(): unknown;
  saveState(state: unknown): void;
  /** A note shown in task_read and the dashboard (e.g. "unauthenticated: 60 requests an hour"); undefined clears it. */
  setNote(note: string | undefined): void;
  log(level: "debug" | "info" | "warn" | "error", message: string, extra?: Record<string, unknown>): void;
  clock: Clock;
  /**
   * watch: paths (relative to `directory`) that a run of this automation wrote while it is
   * running; changes to them must not fire the automation again.
   */
  ownWrites(): ReadonlySet<string>;
  /** When this trigger was created: a source without state does not report what came before. */
  createdAt?: number;
  /**
   * Chaining: runs of an automation of this project with an id above `afterRunId`, oldest first
   * (launched ones only: waiting or going is "active"); a completed or failed run carries its result.
   */
  runsAfter?(automationId: string, afterRunId: number): UpstreamRun[];
};

/** A run as a chained trigger sees it: `result` is the task's result, or the error. */
export type UpstreamRun = { id: number; runNo?: number; createdAt: number; status: "active" | "completed" | "error" | "cancelled"; result: string };

/** A started source; `stop` closes its watcher, timers and child processes. */
export type RunningSource = { stop(): Promise<void> | void };

export type StartSource<S extends { kind: string }> = (spec: S, ctx: SourceContext) => Promise<RunningSource>;
