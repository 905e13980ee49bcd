import { tool, type ToolDefinition } from "@opencode-ai/plugin";
import type { z } from "zod";
import { RefusalError, errorMessage } from "../core/errors.ts";
import type { ModelRef } from "../core/task.ts";

/** What a tool needs to know about the call, read from the host's ToolContext. */
export type CallContext = {
  sessionID: string;
  messageID: string;
  agent: string;
  model?: ModelRef;
  abort: AbortSignal;
  /** OpenCode's permission prompt; resolves when allowed, rejects when the user rejects. */
  ask?: (input: { permission: string; patterns: string[]; always: string[]; metadata: Record<string, unknown> }) => Promise<void>;
};

type RawShape = Record<string, z.ZodType>;

/**
 * A plugin tool that parses its own arguments (the host does not), answers bad input with a
 * message that says how to fix the call, and never throws into the host.
 */
export function defineTool<Shape extends RawShape>(spec: {
  name: string;
  description: string;
  args: (s: typeof tool.schema) => Shape;
  /**
   * What the model is shown instead of `args`, when another tool's schema already shows the
   * shapes (every request carries every definition); the arguments are still parsed by `args`.
   */
  shown?: (s: typeof tool.schema) => RawShape;
  run: (args: z.infer<z.ZodObject<Shape>>, call: CallContext) => Promise<string>;
  onCrash: (message: string, error: unknown) => void;
}): ToolDefinition {
  // Zod schemas are costly to hold (about 9 KB each) and most tools are never called in a process:
  // what is parsed is built at the first call, unless it is also what the model is shown.
  const shown = spec.shown?.(tool.schema);
  let shape = shown ? undefined : spec.args(tool.schema);
  let schema: z.ZodObject<Shape> | undefined;
  return tool({
    description: spec.description,
    args: (shown ?? shape) as Shape,
    async execute(rawArgs, context) {
      schema ??= tool.schema.object(shape ??= spec.args(tool.schema)).strict();
      const parsed = schema.safeParse(rawArgs ?? {});
      if (!parsed.success) return `${spec.name}: invalid arguments. ${describeIssues(parsed.error.issues)}`;
      try {
        return await spec.run(parsed.data as z.infer<z.ZodObject<Shape>>, callContext(context));
      } catch (error) {
        if (error instanceof RefusalError) return `${spec.name}: ${error.message}`;
        spec.onCrash(`${spec.name} failed`, error);
        return `${spec.name} failed: ${errorMessage(error)}. Nothing was changed by this call; try again, or check the OpenCode log.`;
      }
    },
  });
}

function callContext(context: unknown): CallContext {
  const c = context as { sessionID: string; messageID: string; agent: string; abort: AbortSignal; ask?: CallContext["ask"]; extra?: { model?: { id?: string; modelID?: string; providerID?: string } } };
  const m = c.extra?.model;
  const modelID = m?.id ?? m?.modelID;
  return {
    sessionID: c.sessionID,
    messageID: c.messageID,
    agent: c.agent,
    model: m?.providerID && modelID ? { providerID: m.providerID, modelID } : undefined,
    abort: c.abort ?? new AbortController().signal,
    ask: typeof c.ask === "function" ? (input) => c.ask!(input) : undefined,
  };
}

function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const field = issue.path.length > 0 ? issue.path.join(".") : "arguments";
      if (issue.code === "unrecognized_keys") return `Unknown argument(s): ${issue.keys.join(", ")}.`;
      return `"${field}": ${issue.message}.`;
    })
    .join(" ");
}
