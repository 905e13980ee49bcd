import type { TaskManager } from "../core/task-manager.ts";
import { TaskError } from "../core/errors.ts";
import { defineTool } from "./tool-kit.ts";
import { allowExpectCommand, checkExpect, expectArg } from "./expect-arg.ts";

const DESCRIPTION = `Run work in a background child agent session; returns its task id at once. This session is told the result when it ends. Calls in one message form a batch.
fork: true gives the child this conversation's context; resume: "<task id>" continues a completed task's session.
expect: files that must exist and a command that must exit 0, else the child is sent back to work.`;

type Deps = { manager: TaskManager; onCrash: (message: string, error: unknown) => void };

export function backgroundTaskTool({ manager, onCrash }: Deps) {
  return defineTool({
    name: "background_task",
    description: DESCRIPTION,
    args: (s) => ({
      description: s.string().describe("3-8 word label"),
      prompt: s.string(),
      agent: s.string().describe("e.g. general, explore"),
      fork: s.boolean().optional(),
      resume: s.string().optional(),
      expect: expectArg(s),
      milestones: s.boolean().optional(),
    }),
    onCrash,
    async run(args, call) {
      checkTexts(args);
      if (args.fork && args.resume) {
        throw new TaskError("fork and resume are mutually exclusive: fork starts a new child from this conversation, resume continues an existing task's own session. Pass only one.");
      }
      checkExpect(args.expect);
      if (args.resume && (args.expect || args.milestones !== undefined)) {
        throw new TaskError("expect and milestones are set when a task is launched; a resume keeps the task's own. Leave them out of the resume.");
      }
      if (args.resume) {
        const task = await manager.resume(args.resume, args.prompt, call.agent, call.model);
        return `Resumed background task ${task.id} (resume #${task.resumeCount}). You will be notified when it answers; or call background_output with task_id "${task.id}".`;
      }
      if (args.expect?.command) {
        const refused = `Running \`${args.expect.command}\` after the task was not allowed (bash permission). Launch it without expect.command, or with a command the user allows.`;
        await allowExpectCommand(args.expect.command, call, "a background task", refused);
      }
      const task = await manager.launch({
        parentSessionID: call.sessionID, parentMessageID: call.messageID, parentAgent: call.agent,
        parentModel: call.model, description: args.description, prompt: args.prompt, agent: args.agent, fork: args.fork,
        extras: { expect: args.expect, milestones: args.milestones },
      });
      const queued = task.status === "queued" ? " (queued: the concurrency limit is reached; it starts when a slot frees)" : "";
      return [
        `Launched background task ${task.id}${task.isForked ? " (forked)" : ""}: ${task.description}${queued}`,
        `task_id: ${task.id}`,
        `batch: ${task.batchId}`,
        "It runs in the background; you will be notified here when it finishes. Use background_output to check on it.",
      ].join("\n");
    },
  });
}

/** Checked here rather than in the schema: every model request carries the schema (a shared budget). */
function checkTexts(args: { description: string; prompt: string; agent: string; resume?: string }): void {
  if (args.description.trim() === "" || args.description.length > 200) throw new TaskError("description must be a 3-8 word label (1-200 characters).");
  if (args.prompt.trim() === "") throw new TaskError("prompt must not be empty: say what the child should do.");
  if (args.agent.trim() === "") throw new TaskError('agent must not be empty, e.g. "general".');
  if (args.resume !== undefined && args.resume.trim() === "") throw new TaskError("resume must be a task id shown by background_list, or left out.");
}
