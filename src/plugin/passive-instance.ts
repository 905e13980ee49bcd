import { tool, type Hooks, type ToolDefinition } from "@opencode-ai/plugin";
import { activeInstance } from "./instances.ts";

type OnCrash = (message: string, error: unknown) => void;

/**
 * The plugin in a task's worktree directory: it opens and starts nothing (no store, scheduler,
 * watcher, listener, poller, dashboard or retention) and hands every hook and tool call to the
 * project's active instance in this process. Without one, its tools say so and its events are
 * dropped (the active instance's poll sees those sessions when it starts).
 */
export function passiveHooks(projectId: string, toolNames: readonly string[], onCrash: OnCrash): Hooks {
  const active = () => activeInstance(projectId);
  return {
    tool: forwardedTools(projectId, toolNames),
    config: async (config) => active()?.config?.(config),
    event: async (input) => active()?.event?.(input),
    "tool.execute.before": async (call, output) => active()?.["tool.execute.before"]?.(call, output),
    // A budget-stopped child in a worktree is held here before its next model request.
    "chat.params": async (input, output) => active()?.["chat.params"]?.(input, output),
    "experimental.compaction.autocontinue": async (input, output) => active()?.["experimental.compaction.autocontinue"]?.(input, output),
    "experimental.chat.messages.transform": async (input, output) => {
      try {
        await active()?.["experimental.chat.messages.transform"]?.(input, output);
      } catch (error) {
        onCrash("A worktree session's request went out unprocessed", error);
      }
    },
  };
}

/**
 * The active instance's tools as it shows them (the model in the worktree sees the same ones);
 * each call goes to the active instance found at call time.
 */
function forwardedTools(projectId: string, toolNames: readonly string[]): Record<string, ToolDefinition> {
  const shown = activeInstance(projectId)?.tool ?? {};
  const names = Object.keys(shown).length > 0 ? Object.keys(shown) : toolNames;
  return Object.fromEntries(names.map((name) => [name, {
    ...(shown[name] ?? tool({ description: NO_ACTIVE, args: {}, execute: async () => NO_ACTIVE })),
    execute: async (args: unknown, context: unknown) => {
      const target = activeInstance(projectId)?.tool?.[name];
      if (!target) return `${name}: ${NO_ACTIVE}`;
      return target.execute(args as never, context as never);
    },
  } as ToolDefinition]));
}

const NO_ACTIVE = "Background tasks are unavailable in this directory: it is the git worktree of a background task, and the OpenCode process has no instance of its project's main checkout. Open OpenCode in the project's own directory and call it there.";
