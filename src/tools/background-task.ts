import type { TaskManager } from "../core/task-manager.ts";
import { TaskError } from "../core/errors.ts";
import { defineTool } from "./tool-kit.ts";
import { allowExpectCommand, checkExpect, expectArg } from "./expect-arg.ts";

const DESCRIPTION = `Run work in a background child agent session while this conversation goes on. Returns at once with a task id; you are notified in this session when it finishes (or read it with background_output).
- Fresh: give description, prompt and agent.
- fork: true — the child starts with this conversation's context (long tool outputs truncated, capped in tokens), so you need not re-explain.
- resume: "<task id>" with a prompt — continue a completed task's session with a follow-up, keeping its full history.
fork and resume cannot be combined. Several calls in one message form a batch (one shared batch id).
- expect: { files: ["report.md"], command: "npm test" } — evidence required before the task counts as done: the files must exist and be non-empty, the command must exit 0 in the project. If not, the child is sent back to work (up to maxContinuations times), then the task fails with evidence_missing.
- milestones: true — short notices (started, expectation met, outcome) that never start a turn here.
Every result comes with evidence taken from the child's own tool calls (files written, commands run, failed tools).`;

type Deps = { manager: TaskManager; onCrash: (message: string, error: unknown) => void };

export function backgroundTaskTool({ manager, onCrash }: Deps) {
  return defineTool({
    name: "background_task",
    description: DESCRIPTION,
    args: (s) => ({
      description: s.string().min(1).max(200).describe("A short (3-8 word) label for the task"),
      prompt: s.string().min(1).describe("The full instructions for the child agent"),
      agent: s.string().min(1).describe("The agent that does the work, e.g. general or explore"),
      fork: s.boolean().optional().describe("Start the child with this conversation's context"),
      resume: s.string().min(1).optional().describe("A completed task's id to continue with this prompt"),
      expect: expectArg(s),
      milestones: s.boolean().optional().describe("Send short notices (started, expectation met, outcome) that never start a turn"),
    }),
    onCrash,
    async run(args, call) {
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
