import type { ToolDefinition } from "@opencode-ai/plugin";
import type { ToolCallDisplay } from "../host/tool-call-display.ts";

type AskInput = { permission: string; patterns: string[]; always: string[]; metadata: Record<string, unknown> };
type AskingContext = { sessionID: string; messageID: string; callID?: string; ask?: (input: AskInput) => Promise<void> };

/**
 * What a permission prompt of OpenCode 1.18.33's TUI can show of an ask, laid on the linked tool
 * call's input: a `bash` prompt reads the input's `description` and `command`; any other plugin
 * permission shows only its name, so its metadata goes on the tool's transcript line (which shows
 * the input's string values); an `edit` prompt draws its own diff from the metadata.
 */
export function shownFor(input: AskInput): Record<string, string> {
  const m = input.metadata ?? {};
  if (input.permission === "edit") return {};
  if (input.permission === "bash") return text({ description: m.description, command: m.command });
  return text(m);
}

function text(fields: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined || value === null) continue;
    out[key] = typeof value === "string" ? value : Array.isArray(value) ? value.map(String).join("; ") : JSON.stringify(value);
  }
  return out;
}

/** Every tool's asks show what they are about while the prompt is open (see ToolCallDisplay). */
export function withShownAsks(tools: Record<string, ToolDefinition>, display: ToolCallDisplay | undefined): Record<string, ToolDefinition> {
  if (!display) return tools;
  return Object.fromEntries(Object.entries(tools).map(([name, definition]) => [name, {
    ...definition,
    execute: (args: never, context: never) => definition.execute(args, showing(context, display) as never),
  }]));
}

function showing(context: AskingContext, display: ToolCallDisplay): AskingContext {
  const { ask, callID, sessionID, messageID } = context;
  if (typeof ask !== "function" || !callID) return context;
  return {
    ...context,
    ask: (input) => {
      const shown = shownFor(input);
      return Object.keys(shown).length ? display.during({ sessionID, messageID, callID }, shown, () => ask(input)) : ask(input);
    },
  };
}
