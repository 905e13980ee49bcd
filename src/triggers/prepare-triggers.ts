import { TRIGGER_KINDS, kindOf } from "./kinds/registry.ts";
import type { PrepareContext, TriggerKind } from "./kinds/trigger-kind.ts";
import type { TriggerSpec } from "./kinds/registry.ts";
import { TriggerSpecError } from "./trigger-input.ts";

/** What preparing triggers may look up in the project (the automation catalog gives it). */
export type TriggerLookups = {
  directory: string;
  automationExists(id: string): boolean;
  /** An automation's stored triggers' specs. */
  specsOf(automationId: string): TriggerSpec[];
  /** Absent when this process runs no event triggers (then no webhook can be made). */
  webhooks?: { taken(name: string): boolean; url(name: string): string };
};

/**
 * Each trigger's kind checks and claims what it needs before anything is stored (a webhook's
 * free name and URL, `github: "."`'s repository, an `after` chain without a cycle). Returns the
 * new webhooks' names by trigger id; throws TriggerSpecError "triggers[i]: ..." naming the fix.
 */
export async function prepareTriggers(triggers: { id: string; automationId: string; spec: TriggerSpec }[], look: TriggerLookups): Promise<Map<string, string>> {
  const webhooks = new Map<string, string>();
  for (const [i, trigger] of triggers.entries()) {
    const kind = kindOf(trigger.spec) as TriggerKind;
    if (!kind.prepare) continue;
    try {
      const prepared = await kind.prepare(trigger.spec, context(trigger.automationId, look, [...webhooks.values()]));
      if (prepared?.webhook) webhooks.set(trigger.id, prepared.webhook);
    } catch (error) {
      if (error instanceof TriggerSpecError) throw new TriggerSpecError(`triggers[${i}]: ${error.message}`);
      throw error;
    }
  }
  return webhooks;
}

/**
 * The kinds' checks against the other stored triggers, again: call inside the transaction that
 * stores `triggers`, with lookups that read the store now. Throws TriggerSpecError "triggers[i]: ...".
 */
export function recheckTriggers(triggers: { automationId: string; spec: TriggerSpec }[], specsOf: TriggerLookups["specsOf"]): void {
  for (const [i, trigger] of triggers.entries()) {
    try {
      (kindOf(trigger.spec) as TriggerKind).recheck?.(trigger.spec, { automationId: trigger.automationId, specsOf });
    } catch (error) {
      if (error instanceof TriggerSpecError) throw new TriggerSpecError(`triggers[${i}]: ${error.message}`);
      throw error;
    }
  }
}

function context(automationId: string, look: TriggerLookups, namesInThisCall: string[]): PrepareContext {
  return {
    automationId,
    directory: look.directory,
    automationExists: look.automationExists,
    specsOf: look.specsOf,
    webhookTaken: (name) => namesInThisCall.includes(name) || (look.webhooks?.taken(name) ?? false),
    webhookUrl: (name) => look.webhooks?.url(name),
  };
}

/** Commands the user's bash permission must allow before these triggers are stored. */
export function commandNeeds(specs: TriggerSpec[]): { command: string; refusal: (refused: string) => string }[] {
  return specs.flatMap((spec) => (kindOf(spec) as TriggerKind).commands?.(spec) ?? []);
}

/** task_create's description of `triggers` (every definition costs characters in each model request: keys speak for themselves). */
export const TRIGGERS_BRIEF = ["One kind key each", ...(TRIGGER_KINDS as readonly TriggerKind[]).flatMap((k) => (k.brief ? [`${k.key}: ${k.brief}`] : []))].join("; ");
