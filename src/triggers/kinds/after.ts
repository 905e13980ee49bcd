import { TriggerSpecError } from "../trigger-input.ts";
import type { RunningSource, SourceContext, UpstreamRun } from "../trigger-source.ts";
import { defineKind, type PrepareContext } from "./trigger-kind.ts";

const ON = ["success", "failure", "any"] as const;
type On = (typeof ON)[number];

export type AfterSpec = { kind: "after"; after: string; on: On };

/** How often the trigger's holder looks for upstream runs that ended. */
export const AFTER_POLL_MS = 2000;
/** The upstream's result put in the event (the run's prompt and $EVENT_FILE); the firing caps at 8 KB too. */
const RESULT_CAP_CHARS = 8000;

/** What a chained trigger remembers: the last upstream run it has dealt with. */
type AfterState = { lastRunId: number };

/**
 * Chaining: a run of automation `after` that ends `on` success (completed), failure (error,
 * cancelled) or any fires this one, with that run's result as the event. The holder of the
 * trigger's lease reads the runs table; each event carries the upstream run's id as its key, so
 * each upstream run fires once across processes, even when a holder dies before saving its state.
 */
export const afterKind = defineKind<AfterSpec, "event">({
  key: "after", kind: "after", timing: "event", fields: ["on"],
  shape: '{"after":"<automation id>","on":"success|failure|any"}',
  brief: "automation id",
  args: (_s, { text }) => ({ after: text, on: text }),
  parse: (input) => {
    const after = typeof input.after === "string" ? input.after.trim() : "";
    if (!/^[A-Za-z0-9_-]{1,100}$/.test(after)) {
      throw new TriggerSpecError(`"after" must be the id of an automation of this project, e.g. "au_1a2b3c" (task_list shows them).`);
    }
    const on = (input.on ?? "success") as On;
    if (!ON.includes(on)) throw new TriggerSpecError(`"on": ${JSON.stringify(on)} must be one of ${ON.join(", ")} (default success).`);
    return { kind: "after", after, on };
  },
  describe: (spec) => `after each run of ${spec.after}${spec.on === "any" ? "" : ` that ${spec.on === "success" ? "succeeds" : "fails"}`}`,
  prepare: (spec, ctx) => {
    refuseCycle(spec, ctx);
    if (!ctx.automationExists(spec.after)) {
      throw new TriggerSpecError(`"after": "${spec.after}" is not an automation of this project; give the id of one (task_list shows them).`);
    }
  },
  // Two calls in one response (A after B, B after A) each pass prepare: the one stored second is refused here.
  recheck: (spec, ctx) => refuseCycle(spec, ctx),
  start: async (spec, ctx): Promise<RunningSource> => startAfterSource(spec, ctx),
});

function refuseCycle(spec: AfterSpec, ctx: Pick<PrepareContext, "automationId" | "specsOf">): void {
  const cycle = cycleThrough(spec.after, ctx);
  if (cycle) {
    throw new TriggerSpecError(`"after": "${spec.after}" would make a cycle: ${cycle.join(" -> ")}; the runs would fire each other forever. Chain to an automation that does not wait for ${ctx.automationId}.`);
  }
}

/**
 * The cycle that `automationId` waiting for `upstream` would close, in firing order
 * ("au1 -> au2 -> au1"), or undefined. Walks what `upstream` waits for, transitively.
 */
export function cycleThrough(upstream: string, ctx: Pick<PrepareContext, "automationId" | "specsOf">): string[] | undefined {
  const target = ctx.automationId;
  const upstreamOf = (id: string) => ctx.specsOf(id).filter((spec): spec is AfterSpec => spec.kind === "after").map((spec) => spec.after);
  const seen = new Set<string>();
  const walk = (id: string, path: string[]): string[] | undefined => {
    if (id === target) return path;
    if (seen.has(id)) return undefined;
    seen.add(id);
    for (const next of upstreamOf(id)) {
      const found = walk(next, [...path, next]);
      if (found) return found;
    }
    return undefined;
  };
  const chain = walk(upstream, [upstream]);
  // chain: upstream, what it waits for, ..., target. Firing goes the other way, then back to target.
  return chain && [...chain.reverse(), target];
}

function startAfterSource(spec: AfterSpec, ctx: SourceContext): RunningSource {
  const runsAfter = ctx.runsAfter;
  if (!runsAfter) throw new Error("this process cannot read automation runs (no runsAfter in the source context)");
  const since = ctx.createdAt ?? 0;
  let lastRunId = readState(ctx.loadState());
  let timer: unknown;
  let stopped = false;
  const check = () => {
    timer = undefined;
    if (stopped) return;
    try {
      for (const run of runsAfter(spec.after, lastRunId)) {
        if (run.status === "active") break; // later runs wait for it: history stays in order
        lastRunId = run.id;
        if (run.createdAt >= since && matches(spec.on, run.status)) fire(spec, ctx, run);
        ctx.saveState({ lastRunId } satisfies AfterState);
      }
    } catch (error) {
      ctx.log("warn", `after ${spec.after}: reading its runs failed; retrying`, { error: error instanceof Error ? error.message : String(error) });
    }
    timer = ctx.clock.setTimeout(check, AFTER_POLL_MS);
  };
  check();
  return {
    stop: () => {
      stopped = true;
      if (timer !== undefined) ctx.clock.clearTimeout(timer);
      timer = undefined;
    },
  };
}

function fire(spec: AfterSpec, ctx: SourceContext, run: UpstreamRun): void {
  const how = run.status === "completed" ? "succeeded" : run.status === "cancelled" ? "was cancelled" : "failed";
  const result = run.result.length > RESULT_CAP_CHARS ? `${run.result.slice(0, RESULT_CAP_CHARS)}\n… (cut at ${RESULT_CAP_CHARS} characters)` : run.result;
  // The key makes a repeat harmless: a new holder repeats a run whose firing the last one had not yet noted in its state.
  ctx.emit({ summary: `${spec.after} run #${run.runNo ?? run.id} ${how}`, data: result, key: `after:${run.id}` });
}

function matches(on: On, status: UpstreamRun["status"]): boolean {
  if (on === "any") return true;
  return on === "success" ? status === "completed" : status === "error" || status === "cancelled";
}

function readState(state: unknown): number {
  const id = (state as Partial<AfterState> | undefined)?.lastRunId;
  return typeof id === "number" && Number.isInteger(id) ? id : 0;
}
