import { tool, type ToolDefinition } from "@opencode-ai/plugin";
import type { Clock } from "../core/clock.ts";
import type { TaskManager } from "../core/task-manager.ts";
import type { Options } from "../options/options.ts";
import { backgroundTaskTool } from "./background-task.ts";
import { backgroundOutputTool } from "./background-output.ts";
import { backgroundListTool } from "./background-list.ts";
import { backgroundCancelTool } from "./background-cancel.ts";
import { backgroundClearTool } from "./background-clear.ts";
import { backgroundMergeTool } from "./background-merge.ts";
import type { EvidenceService } from "../evidence/evidence-service.ts";
import type { Automations } from "../automations/automation-layer.ts";
import type { AutomationAccess } from "../automations/automation-access.ts";
import { errorMessage } from "../core/errors.ts";
import type { SpendLines } from "../cost/task-spend.ts";
import { taskCreateTool } from "./task-create.ts";
import { taskProposeTool } from "./task-propose.ts";
import { taskReadTool } from "./task-read.ts";
import { taskListTool } from "./task-list.ts";
import { taskUpdateTool } from "./task-update.ts";
import { taskDeleteTool } from "./task-delete.ts";
import { taskRunTool } from "./task-run.ts";
import { taskTriggerAddTool } from "./task-trigger-add.ts";
import { taskTriggerRemoveTool } from "./task-trigger-remove.ts";
import { withShownAsks } from "./shown-asks.ts";
import type { ToolCallDisplay } from "../host/tool-call-display.ts";

export const TOOL_NAMES = ["background_task", "background_output", "background_list", "background_cancel", "background_clear", "background_merge"] as const;
export const AUTOMATION_TOOL_NAMES = [
  "task_create", "task_propose", "task_read", "task_list", "task_update", "task_delete", "task_run", "task_trigger_add", "task_trigger_remove",
] as const;

type Ready = { manager: TaskManager; clock: Clock; options: Options; onCrash: (m: string, e: unknown) => void; evidence?: EvidenceService; automations?: AutomationAccess; spend?: SpendLines; display?: ToolCallDisplay };
type Unavailable = { unavailable: string };

/** The plugin's tools; when the plugin cannot work, each tool answers why instead. */
export function buildTools(deps: Ready | Unavailable): Record<string, ToolDefinition> {
  if ("unavailable" in deps) return unavailableTools(deps.unavailable);
  const { manager, clock, options, onCrash, evidence, automations, spend, display } = deps;
  return withShownAsks({
    ...(automations ? lazyAutomationTools(automations, onCrash, hasWorkers(options)) : {}),
    background_task: backgroundTaskTool({ manager, onCrash, hasWorkers: hasWorkers(options), defaultIsolation: options.defaultIsolation }),
    background_output: backgroundOutputTool({
      manager, clock, onCrash, evidence, spend,
      defaultTimeoutSeconds: options.defaultBlockTimeoutSeconds,
      maxTimeoutSeconds: options.maxBlockTimeoutSeconds,
    }),
    background_list: backgroundListTool({ manager, clock, onCrash, spend }),
    background_cancel: backgroundCancelTool({ manager, onCrash, automations }),
    background_clear: backgroundClearTool({ manager, clock, onCrash }),
    background_merge: backgroundMergeTool({ manager, clock, onCrash }),
  }, display);
}

/** The nine task_* tools: scheduled background work (not a to-do list). */
export function automationTools(automations: Automations, onCrash: (m: string, e: unknown) => void, withWorkers = false): Record<string, ToolDefinition> {
  const deps = { automations, onCrash, hasWorkers: withWorkers };
  return {
    task_create: taskCreateTool(deps),
    task_propose: taskProposeTool(deps),
    task_read: taskReadTool(deps),
    task_list: taskListTool(deps),
    task_update: taskUpdateTool(deps),
    task_delete: taskDeleteTool(deps),
    task_run: taskRunTool(deps),
    task_trigger_add: taskTriggerAddTool(deps),
    task_trigger_remove: taskTriggerRemoveTool(deps),
  };
}

/**
 * The task_* tools as the model sees them from the start; the automation layer they call is
 * loaded at the first call (most projects have no automation, and every process pays for imports).
 */
function lazyAutomationTools(access: AutomationAccess, onCrash: (m: string, e: unknown) => void, withWorkers: boolean): Record<string, ToolDefinition> {
  const shown = automationTools(NOT_LOADED, onCrash, withWorkers);
  let loaded: Record<string, ToolDefinition> | undefined;
  const execute = (name: string): ToolDefinition["execute"] => async (args, context) => {
    let service: Automations;
    try {
      service = await access.load();
    } catch (error) {
      onCrash("Automations could not start", error);
      return `${name} failed: automations could not start (${errorMessage(error)}). Nothing was changed; check the OpenCode log.`;
    }
    loaded ??= automationTools(service, onCrash, withWorkers);
    return loaded[name]!.execute(args, context);
  };
  return Object.fromEntries(Object.entries(shown).map(([name, definition]) => [name, { ...definition, execute: execute(name) }]));
}

/** What the shown task_* tools hold before the layer is loaded: their definitions never touch it. */
const NOT_LOADED = new Proxy({}, {
  get: () => {
    throw new Error("the automation layer is not loaded yet");
  },
}) as Automations;

const hasWorkers = (options: Options) => (options as { workers?: unknown[] }).workers?.length ? true : false;

function unavailableTools(reason: string): Record<string, ToolDefinition> {
  const message = `Background tasks are unavailable: ${reason}`;
  const answer = tool({ description: message, args: {}, execute: async () => message });
  return Object.fromEntries([...TOOL_NAMES, ...AUTOMATION_TOOL_NAMES].map((name) => [name, answer]));
}
