import type { AutomationCatalog } from "./automation-catalog.ts";
import type { RunLifecycle } from "./run-lifecycle.ts";
import type { ProposalService } from "../proposals/proposal-service.ts";

/**
 * The automation layer as the tools, the command inbox and discovery use it: the catalog of
 * definitions and triggers, the run lifecycle, and the proposals waiting for the user.
 */
export type Automations = {
  readonly catalog: AutomationCatalog;
  readonly runs: RunLifecycle;
  readonly proposals: ProposalService;
};
