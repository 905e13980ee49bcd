import type { SqlRow, SqlValue } from "./sqlite-driver.ts";
import type { ModelRef } from "../core/task.ts";
import type { Automation, Proposal, Run, Trigger, TriggerSpec } from "../automations/automation.ts";
import type { Expectation } from "../evidence/expectation-check.ts";
import type { Step, StepResult } from "../automations/step-spec.ts";
import type { AutomationBudget } from "../automations/automation-budget.ts";
import type { Spend } from "../cost/spend.ts";
import type { Approval } from "../automations/approved-version.ts";

/** The automations table's columns, in the order `automationToParams` binds them. */
export const AUTOMATION_COLUMNS = [
  "project_id", "id", "title", "prompt", "agent", "model", "notify", "session_mode", "max_runs", "overlap",
  "catch_up", "report_to", "report_agent", "report_model", "enabled", "paused_reason", "done_at",
  "report_to_gone_at", "created_by", "created_at", "updated_at", "run_count", "consecutive_failures",
  "last_result_hash", "continue_task_id", "expect", "channels", "report", "steps", "proposal", "worker", "budget",
  "isolation", "approved", "prompt_when",
] as const;

const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));
const opt = <T>(value: unknown): T | undefined => (value === null || value === undefined ? undefined : (value as T));
/** A JSON column; absent in a database from before it was added. */
const fromJson = <T>(value: unknown): T | undefined => (typeof value === "string" ? (JSON.parse(value) as T) : undefined);

export function automationToParams(projectId: string, a: Automation): SqlValue[] {
  return [
    projectId, a.id, a.title, a.prompt, a.agent, json(a.model), a.notify, a.sessionMode, a.maxRuns ?? null, a.overlap,
    a.catchUp, a.reportTo, a.reportAgent, json(a.reportModel), a.enabled ? 1 : 0, a.pausedReason ?? null, a.doneAt ?? null,
    a.reportToGoneAt ?? null, a.createdBy, a.createdAt, a.updatedAt, a.runCount, a.consecutiveFailures,
    a.lastResultHash ?? null, a.continueTaskId ?? null, json(a.expect), json(a.channels), a.report ?? null, json(a.steps), json(a.proposal), a.worker ?? null, json(a.budget),
    a.isolation ?? null, json(a.approved), a.promptWhen ?? null,
  ];
}

export function rowToAutomation(row: SqlRow): Automation {
  return dropUndefined({
    id: row.id as string,
    title: row.title as string,
    prompt: row.prompt as string,
    agent: row.agent as string,
    model: row.model === null ? undefined : (JSON.parse(row.model as string) as ModelRef),
    notify: row.notify as Automation["notify"],
    sessionMode: row.session_mode as Automation["sessionMode"],
    maxRuns: opt<number>(row.max_runs),
    overlap: row.overlap as Automation["overlap"],
    catchUp: row.catch_up as Automation["catchUp"],
    reportTo: row.report_to as string,
    reportAgent: row.report_agent as string,
    reportModel: row.report_model === null ? undefined : (JSON.parse(row.report_model as string) as ModelRef),
    enabled: row.enabled === 1,
    pausedReason: opt<string>(row.paused_reason),
    doneAt: opt<number>(row.done_at),
    reportToGoneAt: opt<number>(row.report_to_gone_at),
    createdBy: row.created_by as string,
    createdAt: row.created_at as number,
    updatedAt: row.updated_at as number,
    runCount: row.run_count as number,
    consecutiveFailures: row.consecutive_failures as number,
    lastResultHash: opt<string>(row.last_result_hash),
    continueTaskId: opt<string>(row.continue_task_id),
    expect: row.expect === null || row.expect === undefined ? undefined : (JSON.parse(row.expect as string) as Expectation),
    channels: row.channels == null ? undefined : (JSON.parse(row.channels as string) as string[]),
    report: opt<Automation["report"]>(row.report),
    steps: fromJson<Step[]>(row.steps),
    proposal: fromJson<Proposal>(row.proposal),
    worker: opt<string>(row.worker),
    budget: fromJson<AutomationBudget>(row.budget),
    isolation: opt<"worktree">(row.isolation),
    approved: fromJson<Approval>(row.approved),
    promptWhen: row.prompt_when === "always" ? "always" : undefined,
  });
}

export function rowToTrigger(row: SqlRow): Trigger {
  return dropUndefined({
    id: row.id as string,
    automationId: row.automation_id as string,
    spec: { kind: row.kind, ...JSON.parse(row.spec as string) } as TriggerSpec,
    createdAt: row.created_at as number,
    lastPlannedAt: opt<number>(row.last_planned_at),
    nextAt: opt<number>(row.next_at),
    note: opt<string>(row.note),
  });
}

/** The spec column holds everything but the kind, which has its own column. */
export function specToJson(spec: TriggerSpec): string {
  const { kind: _kind, ...rest } = spec;
  return JSON.stringify(rest);
}

export function rowToRun(row: SqlRow): Run {
  return dropUndefined({
    id: row.id as number,
    automationId: row.automation_id as string,
    runNo: opt<number>(row.run_no),
    triggerId: opt<string>(row.trigger_id),
    firedBy: row.fired_by as Run["firedBy"],
    plannedAt: opt<number>(row.planned_at),
    status: row.status as Run["status"],
    skipReason: opt<string>(row.skip_reason),
    missedCount: opt<number>(row.missed_count),
    missedUntil: opt<number>(row.missed_until),
    taskId: opt<string>(row.task_id),
    createdAt: row.created_at as number,
    startedAt: opt<number>(row.started_at),
    endedAt: opt<number>(row.ended_at),
    resultHash: opt<string>(row.result_hash),
    summary: opt<string>(row.summary),
    notified: row.notified === null ? undefined : row.notified === 1,
    notifyNote: opt<string>(row.notify_note),
    eventSummary: opt<string>(row.event_summary),
    eventData: opt<string>(row.event_data),
    eventFolded: opt<number>(row.event_folded),
    eventKey: opt<string>(row.event_key),
    steps: fromJson<StepResult[]>(row.steps),
    stepsBy: opt<string>(row.steps_by),
    spentBefore: fromJson<Spend>(row.spent_before),
    branch: opt<string>(row.branch),
    skipCount: opt<number>(row.skip_count),
  });
}

function dropUndefined<T extends object>(value: T): T {
  for (const key of Object.keys(value) as (keyof T)[]) if (value[key] === undefined) delete value[key];
  return value;
}
