import type { Automation, Trigger } from "../automations/automation.ts";
import { describeTrigger } from "../automations/trigger-spec.ts";
import { DAY_MS } from "../core/clock.ts";

/** A proposal nobody decides goes after this long. */
export const PROPOSAL_EXPIRY_MS = 7 * DAY_MS;

/** Two prompts this similar (Dice coefficient over their words) are the same proposal. */
export const NEAR_IDENTICAL = 0.9;

/** What a proposal is compared by: its title, its work (prompt and step commands) and its triggers. */
export type ProposalShape = { title: string; work: string; triggers: string[] };

export function proposalShape(a: Pick<Automation, "title" | "prompt" | "steps">, triggers: Trigger[]): ProposalShape {
  return { title: a.title, work: workText(a), triggers: triggers.map((t) => describeTrigger(t.spec)).sort() };
}

/** The prompt, then each step's command: what a run does. */
export function workText(a: Pick<Automation, "prompt" | "steps">): string {
  return [a.prompt, ...(a.steps ?? []).map((s) => s.run)].filter((part) => part.trim() !== "").join("\n");
}

/**
 * The same proposal: the same title (case and spacing ignored), or the same triggers and a
 * near-identical prompt.
 */
export function sameProposal(a: ProposalShape, b: ProposalShape): boolean {
  if (words(a.title).join(" ") === words(b.title).join(" ")) return true;
  return a.triggers.join("\n") === b.triggers.join("\n") && similarity(a.work, b.work) >= NEAR_IDENTICAL;
}

/** Dice coefficient over lowercase words (punctuation ignored): 1 for the same words, 0 for none shared. */
export function similarity(a: string, b: string): number {
  const left = words(a);
  const right = words(b);
  if (left.length === 0 && right.length === 0) return 1;
  const counts = new Map<string, number>();
  for (const w of left) counts.set(w, (counts.get(w) ?? 0) + 1);
  let shared = 0;
  for (const w of right) {
    const n = counts.get(w) ?? 0;
    if (n > 0) (shared++, counts.set(w, n - 1));
  }
  return (2 * shared) / (left.length + right.length);
}

function words(text: string): string[] {
  return text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);
}
