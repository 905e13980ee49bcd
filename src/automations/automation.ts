import type { ModelRef } from "../core/task.ts";
import type { Expectation } from "../evidence/expectation-check.ts";
import type { Step, StepResult } from "./step-spec.ts";
import type { RunStatus } from "./run-status.ts";
import type { AutomationBudget } from "./automation-budget.ts";
import type { Spend } from "../cost/spend.ts";
import type { Approval } from "./approved-version.ts";

/** When the report-to session hears about a run. */
export type NotifyPolicy = "always" | "on_change" | "on_failure" | "never";
export const NOTIFY_POLICIES: readonly NotifyPolicy[] = ["always", "on_change", "on_failure", "never"];

/**
 * An automation (a "task definition"): a prompt that runs as a background task whenever one of
 * its triggers fires, or on task_run. Runs report to one session by the notify policy.
 */
export type Automation = {
  id: string;
  title: string;
  /** Empty when the automation has only steps: then a run needs no model. */
  prompt: string;
  /** Shell commands run first (see run-steps.ts); the prompt then runs after them, with their outcome. */
  steps?: Step[];
  /** With steps and a prompt, when the prompt runs: "always" after the steps; absent ("failure"): only when a step failed. */
  promptWhen?: "failure" | "always";
  agent: string;
  model?: ModelRef;
  notify: NotifyPolicy;
  /** fresh: a new child per run; continue: every run resumes the same child session. */
  sessionMode: "fresh" | "continue";
  maxRuns?: number;
  overlap: "skip" | "queue";
  catchUp: "skip" | "once";
  /** The session that hears about runs (default: the one that created the automation). */
  reportTo: string;
  /** That session's agent and model, so a notification does not switch them. */
  reportAgent: string;
  reportModel?: ModelRef;
  enabled: boolean;
  /** Channels (names from the plugin's `channels` option) that hear about runs by the notify policy. */
  channels?: string[];
  /** "channels": only the channels are told, not the report-to session. */
  report?: "session" | "channels";
  /** Evidence every run must leave (files, a command that exits 0), as background_task's expect. */
  expect?: Expectation;
  /** Why it is paused when it was paused by the plugin (e.g. consecutive failures). */
  pausedReason?: string;
  /** Set when max_runs was reached: its triggers stop. */
  doneAt?: number;
  /** Set when a run found the report-to session deleted; cleared by task_update. */
  reportToGoneAt?: number;
  createdBy: string;
  createdAt: number;
  updatedAt: number;
  runCount: number;
  consecutiveFailures: number;
  /** Hash of the last successful run's trimmed result (on_change compares with it). */
  lastResultHash?: string;
  /** session: continue — the task (child session) every run resumes. */
  continueTaskId?: string;
  /** Where its runs' children go: a worker's name or "auto" (option workers); absent: this OpenCode. */
  worker?: string;
  /** Set while it is a proposal (task_propose): disabled until the user approves it. */
  proposal?: Proposal;
  /** Spending limits per run and per day (automation-budget.ts). */
  budget?: AutomationBudget;
  /** "worktree": each run's child works in a fresh git worktree of the default branch's latest commit. */
  isolation?: "worktree";
  /** The definition the user last approved (approved-version.ts); absent: never approved, or approved before the plugin kept it. */
  approved?: Approval;
};

/** Why the agent proposed an automation, and who: a conversation's model or a discovery run. */
export type Proposal = { reason: string; proposedAt: number; by: "conversation" | "discovery" };

export type TriggerKind = TriggerSpec["kind"];

export { GITHUB_EVENTS, type GithubEventName } from "../triggers/kinds/github.ts";
// Trigger specs come from the kinds' registry (triggers/kinds): one file per kind.
export { EVENT_KINDS, isEventSpec, type EventKind, type EventSpec, type ScheduleSpec, type TriggerSpec } from "../triggers/kinds/registry.ts";
import type { EventKind, TriggerSpec } from "../triggers/kinds/registry.ts";

export type Trigger = {
  id: string;
  automationId: string;
  spec: TriggerSpec;
  createdAt: number;
  /** Event triggers: what their source says about itself (e.g. "unauthenticated"), shown in task_read. */
  note?: string;
  /** The latest occurrence already handled (fired, skipped or recorded as missed). */
  lastPlannedAt?: number;
  /** The next occurrence; undefined when the trigger will not fire again. */
  nextAt?: number;
};

export type { RunStatus } from "./run-status.ts";
export { ACTIVE_RUN } from "./run-status.ts";

/** idle: a discovery run, started because the user was idle. */
export type FiredBy = "schedule" | "manual" | "catch_up" | "idle" | EventKind;

/** One line of an automation's history: a run, a skipped firing, or missed occurrences. */
export type Run = {
  id: number;
  automationId: string;
  /** 1, 2, ... for runs that launch; undefined for skipped and missed rows. */
  runNo?: number;
  triggerId?: string;
  firedBy: FiredBy;
  plannedAt?: number;
  status: RunStatus;
  skipReason?: string;
  missedCount?: number;
  missedUntil?: number;
  taskId?: string;
  createdAt: number;
  startedAt?: number;
  endedAt?: number;
  resultHash?: string;
  /** The result's first line, or the error. */
  summary?: string;
  notified?: boolean;
  notifyNote?: string;
  /** Runs fired by an event trigger: what happened (one line), its data, and how many later events were folded into it. */
  eventSummary?: string;
  eventData?: string;
  eventFolded?: number;
  /** The event's own name when its source gives one (after:<upstream run id>): one row per key and trigger. */
  eventKey?: string;
  /** Runs of an automation with steps: each step's outcome so far. */
  steps?: StepResult[];
  /** The process running the steps (`host:pid:nonce`); set while the run is in its steps phase and after. */
  stepsBy?: string;
  /** session: continue — what its task tree had spent when this run resumed it (the run's own spend is the rest). */
  spentBefore?: Spend;
  /** isolation "worktree": the branch the run left its changes on (none when it changed nothing: no branch is left). */
  branch?: string;
  /**
   * A skipped row: how many consecutive firings it stands for (undefined: one). A streak's first
   * firing is createdAt, its latest endedAt; skipReason is the latest firing's.
   */
  skipCount?: number;
};

/**
 * Created disabled and never run, with no approval recorded: the user has not approved it yet
 * (creating it enabled asks), so enabling it or task_run asks first. Its last approval (`approved`)
 * is what any later change is compared with.
 */
export function neverApproved(a: Automation): boolean {
  if (a.proposal) return true;
  if (a.approved) return false;
  return !a.enabled && a.runCount === 0 && a.pausedReason === undefined;
}

/**
 * A run's name, `auto_<automation>_<run no>`: what a person types to cancel a run in its steps
 * phase (background_cancel, the dashboard), and its task's batch id, so that background_list
 * groups the run. A name, not a link: a run finds its task by its task_id column.
 */
export function runName(automationId: string, runNo: number): string {
  return `auto_${automationId}_${runNo}`;
}

/** The automation and run number a run's name gives; undefined for any other text. */
export function parseRunName(name: string): { automationId: string; runNo: number } | undefined {
  const match = /^auto_([a-z0-9]+)_(\d+)$/.exec(name);
  return match ? { automationId: match[1]!, runNo: Number(match[2]) } : undefined;
}
