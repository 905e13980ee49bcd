import type { MessageUsage } from "../host/host.ts";

/**
 * Where the core reports what its children's model requests cost (src/cost implements it): each
 * assistant message's numbers as events and polls bring them, and the line shown when a task settles.
 */
export type SpendSink = {
  /** Idempotent per message id: the latest numbers of a message count, once. Never throws. */
  record(taskId: string, messageId: string, usage: MessageUsage): void;
  /** The task's spend with its descendants', as shown (`$0.081 · 15.0k tok`); undefined before any request. */
  line(taskId: string): string | undefined;
  forget(taskId: string): void;
};
