import { tool, type ToolDefinition } from "@opencode-ai/plugin";
import type { Clock } from "../core/clock.ts";
import type { TaskManager } from "../core/task-manager.ts";
import type { Options } from "../options.ts";
import { backgroundTaskTool } from "./background-task.ts";
import { backgroundOutputTool } from "./background-output.ts";
import { backgroundListTool } from "./background-list.ts";
import { backgroundCancelTool } from "./background-cancel.ts";
import { backgroundClearTool } from "./background-clear.ts";
import type { EvidenceService } from "../evidence/evidence-service.ts";

export const TOOL_NAMES = ["background_task", "background_output", "background_list", "background_cancel", "background_clear"] as const;

type Ready = { manager: TaskManager; clock: Clock; options: Options; onCrash: (m: string, e: unknown) => void; evidence?: EvidenceService };
type Unavailable = { unavailable: string };

/** The plugin's tools; when the plugin cannot work, each tool answers why instead. */
export function buildTools(deps: Ready | Unavailable): Record<string, ToolDefinition> {
  if ("unavailable" in deps) return unavailableTools(deps.unavailable);
  const { manager, clock, options, onCrash, evidence } = deps;
  return {
    background_task: backgroundTaskTool({ manager, onCrash }),
    background_output: backgroundOutputTool({
      manager, clock, onCrash, evidence,
      defaultTimeoutSeconds: options.defaultBlockTimeoutSeconds,
      maxTimeoutSeconds: options.maxBlockTimeoutSeconds,
    }),
    background_list: backgroundListTool({ manager, clock, onCrash }),
    background_cancel: backgroundCancelTool({ manager, onCrash }),
    background_clear: backgroundClearTool({ manager, onCrash }),
  };
}

function unavailableTools(reason: string): Record<string, ToolDefinition> {
  const message = `Background tasks are unavailable: ${reason}`;
  const answer = tool({ description: message, args: {}, execute: async () => message });
  return Object.fromEntries(TOOL_NAMES.map((name) => [name, answer]));
}
