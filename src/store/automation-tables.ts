import { AutomationRepository } from "./automation-repository.ts";
import { ChannelOutboxRepository } from "./channel-outbox-repository.ts";
import { ProposalRepository } from "./proposal-repository.ts";
import type { SqliteDatabase } from "./sqlite-driver.ts";
import { TriggerRepository } from "./trigger-repository.ts";

/** The tables of the automation layer, imported with it: a project without automations never loads them. */
export type AutomationTables = {
  automations: AutomationRepository;
  /** Event triggers' state and notes, their leases, webhooks and webhook deliveries. */
  triggers: TriggerRepository;
  proposals: ProposalRepository;
  channelOutbox: ChannelOutboxRepository;
};

/** On the Store's connection, so their writes join the task store's transactions. */
export function automationTables(db: SqliteDatabase, projectId: string, holder: string): AutomationTables {
  return {
    automations: new AutomationRepository(db, projectId),
    triggers: new TriggerRepository(db, projectId),
    proposals: new ProposalRepository(db, projectId),
    channelOutbox: new ChannelOutboxRepository(db, projectId, holder),
  };
}
