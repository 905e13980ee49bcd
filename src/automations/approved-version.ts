import { createHash } from "node:crypto";
import type { Automation, TriggerSpec } from "./automation.ts";
import type { AutomationFields } from "./automation-catalog.ts";

/** What the user approves of an automation: everything that decides what its runs do, and where their results go. */
export type ApprovedDefinition = Pick<Automation, "prompt" | "agent" | "notify" | "model" | "channels" | "report" | "worker" | "steps" | "expect" | "budget" | "isolation" | "promptWhen"> & {
  triggers: TriggerSpec[];
};

/** The definition the user last approved, and how many approvals it took to get there (1: the first). */
export type Approval = { version: number; definition: ApprovedDefinition };

type Definable = Pick<AutomationFields, "prompt" | "agent" | "notify"> & Partial<AutomationFields>;

/**
 * The definition as approved, normalized so that equal meanings compare equal (no empty lists,
 * the local worker and the session report as absent, triggers in a stable order without their ids).
 */
export function approvedDefinition(a: Definable, triggers: TriggerSpec[]): ApprovedDefinition {
  return dropUndefined({
    prompt: a.prompt, agent: a.agent, notify: a.notify, model: a.model,
    channels: a.channels?.length ? a.channels : undefined,
    report: a.report === "channels" ? "channels" : undefined,
    worker: a.worker && a.worker !== "local" ? a.worker : undefined,
    steps: a.steps?.length ? a.steps : undefined,
    expect: a.expect, budget: a.budget,
    isolation: a.isolation === "worktree" ? "worktree" : undefined,
    promptWhen: a.promptWhen === "always" ? "always" : undefined,
    triggers: triggers.map((t) => canonicalJson(t)).sort().map((t) => JSON.parse(t) as TriggerSpec),
  });
}

/**
 * What an approval is asked as (OpenCode's pattern and its "always" rule): the automation's id,
 * the version being approved and a hash of exactly what is shown. An "always" answer then covers
 * that automation at that definition only: never another automation with the same title, never
 * a later or different version. Only letters, digits, `@` and `-`: OpenCode reads `*` and `?` as wildcards.
 */
export function approvalKey(id: string, version: number, definition: ApprovedDefinition): string {
  const hash = createHash("sha256").update(canonicalJson(definition)).digest("hex").slice(0, 12);
  return `${id}@v${version}-${hash}`;
}

/**
 * Who approved what is stored: the key the user was asked (checked against what is actually
 * written), or USER_APPROVAL for the user's own act on the dashboard or the CLI.
 */
export const USER_APPROVAL = "user's own act";

/** The approval that approving `definition` would record, with its key. */
export function nextApproval(a: Pick<Automation, "id" | "approved">, definition: ApprovedDefinition): Approval & { key: string } {
  const version = (a.approved?.version ?? 0) + 1;
  return { version, definition, key: approvalKey(a.id, version, definition) };
}

/** JSON with object keys sorted, so the same definition hashes the same whichever process wrote it. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([x], [y]) => (x < y ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

function dropUndefined<T extends object>(value: T): T {
  for (const key of Object.keys(value) as (keyof T)[]) if (value[key] === undefined) delete value[key];
  return value;
}
