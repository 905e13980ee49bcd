import type { ChannelSink } from "../channels/channel-sink.ts";
import type { Clock } from "../core/clock.ts";
import { errorMessage } from "../core/errors.ts";
import { LEASES, newClaimer } from "../core/claims.ts";
import type { TaskManager } from "../core/task-manager.ts";
import type { Host } from "../host/host.ts";
import type { AutomationRepository } from "../store/automation-repository.ts";
import { RunRows } from "./run-rows.ts";
import type { DailyBudgetState } from "../cost/daily-budget.ts";

/** The spend the automation layer reads beyond its own tables. */
export type SpendPort = {
  /** Writes this process's spend rows still kept (write-behind), so a read of the database holds them. */
  flush(): void;
  /** The machine's daily budget (option dailyBudgetUsd) today: reached, firings are skipped. */
  machineToday(now: number): DailyBudgetState;
};

export type AutomationConfig = {
  /** Consecutive failed runs after which an automation pauses (option automationFailurePause). */
  failurePause: number;
  /** Characters of a result put in a notification (option resultCapChars). */
  resultCap: number;
  /** Run history older than this goes (option retentionDays); undefined keeps it. */
  retentionMs?: number;
  /** The project directory: steps run there, and the workspace block describes it. */
  directory: string;
  /** The configured workers' names (option workers): an automation's worker must be one, "local" or "auto". */
  workerNames?: string[];
  /** Put the project's git state before every run's prompt (option workspaceContext). */
  workspaceContext: boolean;
  /** This instance in run claims (the store's holder); default a fresh one. */
  holder?: string;
  /** How long a run's claim keeps others out without a renewal; default LEASES.runMs (tests shorten it). */
  runLeaseMs?: number;
};

/** What every part of the automation layer shares: the store, the core's public API, the host, time. */
export class AutomationContext {
  /** Every write of a run row: status moves go through the run state machine. */
  readonly runs: RunRows;
  /** This instance in run claims: it holds the runs it starts until they end. */
  readonly holder: string;
  readonly runLeaseMs: number;

  constructor(
    readonly store: AutomationRepository,
    readonly manager: TaskManager,
    readonly host: Host,
    readonly clock: Clock,
    readonly config: AutomationConfig,
    readonly channels?: ChannelSink,
    readonly spend?: SpendPort,
  ) {
    this.runs = new RunRows(store);
    this.holder = config.holder ?? newClaimer();
    this.runLeaseMs = config.runLeaseMs ?? LEASES.runMs;
  }

  /** Runs after the current synchronous work (e.g. a settle transaction) has committed. */
  afterCommit(fn: () => void | Promise<void>): void {
    queueMicrotask(() => {
      Promise.resolve()
        .then(fn)
        .catch((error) => this.logError("An automation step failed", error));
    });
  }

  /**
   * Writes this process's kept spend rows now (inside a run's end, they commit with it): another
   * process that sees the run ended sees its spend, and decides on a daily budget from both.
   */
  flushSpend(): void {
    try {
      this.spend?.flush();
    } catch (error) {
      this.logError("Could not write the kept spend rows; a budget reads the database as it is", error);
    }
  }

  toast(message: string, variant: "info" | "success" | "warning" | "error"): void {
    this.host.toast({ title: "Automation", message, variant }).catch((error) => this.logError("Could not show a toast", error));
  }

  logError(message: string, error: unknown): void {
    // If logging fails there is nowhere left to report it; the host must not see a throw.
    this.host.log("error", message, { error: errorMessage(error) }).catch(() => undefined);
  }
}
