import type { MessageUsage } from "../host/host.ts";
import { messageSpend, sumSpend, type Spend } from "./spend.ts";

/**
 * The latest spend of each assistant message, by task: the host repeats `message.updated` for the
 * same message (zeros first, then the final numbers twice), so a message counts once, with its
 * latest value, never the sum of its updates.
 */
export class SpendLedger {
  private readonly byTask = new Map<string, Map<string, Spend>>();

  /** The message's spend when it is new or changed (worth writing down); undefined when it adds nothing. */
  record(taskId: string, messageId: string, usage: MessageUsage): Spend | undefined {
    let messages = this.byTask.get(taskId);
    const before = messages?.get(messageId);
    // The repeated final update (every request has one) allocates nothing.
    if (before && sameUsage(before, usage)) return undefined;
    const spend = messageSpend(usage);
    if (!spend) return undefined;
    if (!messages) this.byTask.set(taskId, (messages = new Map()));
    messages.set(messageId, spend);
    return spend;
  }

  /** The message's latest spend as recorded; undefined before its first non-zero update. */
  latest(taskId: string, messageId: string): Spend | undefined {
    return this.byTask.get(taskId)?.get(messageId);
  }

  /** What this ledger has seen of a task (this process only: the store has every process's). */
  total(taskId: string): Spend {
    return sumSpend(this.byTask.get(taskId)?.values() ?? []);
  }

  forget(taskId: string): void {
    this.byTask.delete(taskId);
  }
}

function sameUsage(spend: Spend, usage: MessageUsage): boolean {
  const t = spend.tokens;
  return spend.costUsd === usage.costUsd && t.input === usage.input && t.output === usage.output &&
    t.reasoning === usage.reasoning && t.cacheRead === usage.cacheRead && t.cacheWrite === usage.cacheWrite;
}
