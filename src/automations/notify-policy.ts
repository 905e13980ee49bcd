import type { Automation } from "./automation.ts";

/** `stableText`: what on_change compares instead of the result (a steps-only run's result carries durations). */
export type RunOutcome = { status: "completed" | "error" | "cancelled"; result?: string; error?: string; stableText?: string };

/**
 * Whether a finished run is told to the report-to session, and if not, why. `hash` is the run's
 * trimmed result's hash; the automation is as it was before this run.
 */
export function decideNotify(a: Automation, outcome: RunOutcome, hash: string | undefined): { notify: boolean; note: string } {
  const failed = outcome.status !== "completed";
  switch (a.notify) {
    case "always":
      return { notify: true, note: "notify: always" };
    case "never":
      return { notify: false, note: "notify: never (history only)" };
    case "on_failure":
      if (failed) return { notify: true, note: `on_failure: the run ${outcome.status === "error" ? "failed" : "was cancelled"}` };
      if (a.consecutiveFailures > 0) return { notify: true, note: "on_failure: first success after a failure" };
      return { notify: false, note: "on_failure: succeeded as before" };
    case "on_change":
      if (failed) return { notify: false, note: "on_change: the run failed; failures are told when they pause the automation" };
      if (a.lastResultHash === undefined) return { notify: true, note: "on_change: first result" };
      if (a.lastResultHash !== hash) return { notify: true, note: "on_change: the result changed" };
      return { notify: false, note: "on_change: same result as the last successful run" };
  }
}
