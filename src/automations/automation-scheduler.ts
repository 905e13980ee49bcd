import { ACTIVE_RUN, type Run, type Trigger } from "./automation.ts";
import type { AutomationContext } from "./automation-context.ts";
import type { Firing, RunStarter } from "./run-starter.ts";
import { nextOccurrence, occurrencesBetween } from "./trigger-spec.ts";

/** The longest single sleep: bounds how late a clock jump or another process's new automation is seen. */
export const MAX_SLEEP_MS = 60_000;
/** An occurrence planned this long before the process started still fires (a restart or a second process). */
export const START_GRACE_MS = 10_000;

/**
 * Fires due triggers with one timer set to the next due time (never a fast tick), unref'd so it
 * keeps no process alive, re-armed after every change. Each occurrence is claimed by inserting
 * its unique (trigger, planned time) row, so with several processes on one database the
 * database picks the one that fires it. Occurrences planned before this process started are
 * recorded as one `missed` row per trigger (with catch_up: once, one run follows).
 */
export class AutomationScheduler {
  private timer: unknown;
  private armedFor: number | undefined;
  private startedAt = 0;
  private stopped = false;

  constructor(
    private ctx: AutomationContext,
    private starter: RunStarter,
    /** Called after every wake (housekeeping that needs no timer of its own). */
    private afterWake: () => void = () => {},
  ) {}

  start(): void {
    this.startedAt = this.ctx.clock.now();
    this.stopped = false;
    this.wake();
  }

  /** Call after any change to automations or triggers: sets the one timer to the next due time. */
  rearm(): void {
    if (this.stopped) return;
    const { clock, store } = this.ctx;
    const next = store.nextDueAt();
    // Nothing due here still checks once a minute: another process on the database may add an
    // automation and exit, and then this one must fire it.
    const delay = next === undefined ? MAX_SLEEP_MS : Math.min(Math.max(0, next - clock.now()), MAX_SLEEP_MS);
    const at = clock.now() + delay;
    if (this.timer !== undefined && this.armedFor === at) return;
    this.clear();
    this.armedFor = at;
    this.timer = clock.setTimeout(() => this.wake(), delay);
    (this.timer as { unref?: () => void }).unref?.();
  }

  stop(): void {
    this.stopped = true;
    this.clear();
  }

  /** Whether a timer is set (for tests and the idle count). */
  isArmed(): boolean {
    return this.timer !== undefined;
  }

  /** Fires what is due now; a late wake (sleep, clock jump) fires each trigger once. */
  wake(): void {
    this.clear(); // called directly (start), a pending timer must not fire a second wake

    try {
      const started: Run[] = [];
      for (const trigger of this.ctx.store.dueTriggers(this.ctx.clock.now())) started.push(...this.handle(trigger));
      for (const run of started) void this.starter.launch(run);
      this.afterWake();
    } catch (error) {
      this.ctx.logError("The automation scheduler failed; it retries at its next wake", error);
    } finally {
      this.rearm();
    }
  }

  /** Claims a trigger's due occurrences in one transaction; returns the runs to launch. */
  private handle(due: Trigger): Run[] {
    try {
      return this.claim(due);
    } catch (error) {
      if (error instanceof OccurrenceTaken) return []; // rolled back: another process fired it
      throw error;
    }
  }

  private claim(due: Trigger): Run[] {
    const { store, clock } = this.ctx;
    return store.transaction(() => {
      const trigger = store.trigger(due.id);
      const a = trigger && store.automation(trigger.automationId);
      if (!trigger || !a || !a.enabled || a.doneAt !== undefined) return [];
      const now = clock.now();
      const after = trigger.lastPlannedAt ?? trigger.createdAt;
      const occ = occurrencesBetween(trigger, after, now);
      if (occ.count === 0 || occ.last === undefined || occ.first === undefined) {
        store.saveTrigger({ ...trigger, nextAt: nextOccurrence(trigger, Math.max(after, now)) });
        return [];
      }
      const fireAt = occ.last >= this.startedAt - START_GRACE_MS ? occ.last : undefined;
      const missed = fireAt === undefined ? occ : occurrencesBetween(trigger, after, fireAt - 1);
      const firings: Firing[] = [];
      if (missed.count > 0) {
        const row = this.ctx.runs.insert({
          automationId: a.id, triggerId: trigger.id, firedBy: "schedule", plannedAt: missed.first, status: "missed",
          skipReason: "missed", missedCount: missed.count, missedUntil: missed.last, createdAt: now,
        });
        if (!row) return []; // another process recorded these
        // Once per definition: a catch-up already running (another trigger's) covers this one too.
        const catching = store.runsWithStatus(a.id, ACTIVE_RUN).length > 0;
        if (fireAt === undefined && a.catchUp === "once" && !catching) firings.push({ triggerId: trigger.id, firedBy: "catch_up" });
      }
      if (fireAt !== undefined) firings.push({ triggerId: trigger.id, firedBy: "schedule", plannedAt: fireAt });
      store.saveTrigger({ ...trigger, lastPlannedAt: occ.last, nextAt: nextOccurrence(trigger, occ.last) });
      const runs: Run[] = [];
      for (const firing of firings) {
        const latest = store.automation(a.id)!;
        const run = this.starter.admit(latest, firing);
        if (!run && firing.plannedAt !== undefined) throw new OccurrenceTaken();
        if (run?.status === "starting") runs.push(run);
      }
      return runs;
    });
  }

  private clear(): void {
    if (this.timer !== undefined) this.ctx.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = undefined;
  }
}

class OccurrenceTaken extends Error {}
