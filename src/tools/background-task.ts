import type { tool } from "@opencode-ai/plugin";
import type { TaskManager } from "../core/task-manager.ts";
import type { Task } from "../core/task.ts";
import { TaskError } from "../core/errors.ts";
import { parseBudget, type Budget } from "../core/budget.ts";
import { formatBudget } from "../cost/budget-text.ts";
import { defineTool } from "./tool-kit.ts";
import { allowExpectCommand, checkExpect, expectArg, shownExpectArg } from "./expect-arg.ts";
import { allowedBudget } from "./budget-approval.ts";
import { refuseResume } from "../core/task-launcher.ts";

const DESCRIPTION = `Run work in a child session: task id now, result later. One message's calls form a batch.
fork: child gets this conversation; resume: a task id to go on with.
expect: files must exist, command exit 0, else the child works on.`;

type Deps = { manager: TaskManager; onCrash: (message: string, error: unknown) => void; hasWorkers?: boolean; defaultIsolation?: "worktree" | "none" };

export function backgroundTaskTool({ manager, onCrash, hasWorkers = false, defaultIsolation = "none" }: Deps) {
  const args = (s: typeof tool.schema) => ({
    description: s.string().describe("3-8 word label"),
    prompt: s.string(),
    agent: s.string().describe("e.g. general, explore"),
    fork: s.boolean().optional(),
    resume: s.string().optional(),
    expect: expectArg(s),
    milestones: s.boolean().optional(),
    budget: s.object({ usd: s.number().optional(), tokens: s.number().optional() }).strict().optional(),
    isolation: s.enum(["worktree", "none"]).optional(),
    worker: s.string().optional(),
  });
  return defineTool({
    name: "background_task",
    description: DESCRIPTION,
    args,
    // Every request carries the schema: what is shown is lighter than what is parsed (strictly, with
    // the bounds), and without workers configured, worker is still accepted ("local", "auto") but not shown.
    shown: (s: typeof tool.schema) => {
      const { worker, ...rest } = args(s);
      return {
        ...rest,
        expect: shownExpectArg(s),
        budget: s.any().optional().describe("{usd?,tokens?}; tokens: in+out+reasoning, no cache"),
        ...(hasWorkers ? { worker } : {}),
      };
    },
    onCrash,
    async run(args, call) {
      checkTexts(args);
      if (args.fork && args.resume) {
        throw new TaskError("fork and resume are mutually exclusive: fork starts a new child from this conversation, resume continues an existing task's own session. Pass only one.");
      }
      checkExpect(args.expect);
      const requested = args.budget && checkedBudget(args.budget);
      if (args.resume && (args.expect || args.milestones !== undefined || args.worker !== undefined || args.isolation !== undefined)) {
        throw new TaskError("expect, milestones, isolation and worker are set when a task is launched; a resume keeps the task's own. Leave them out of the resume.");
      }
      const remote = args.worker !== undefined && args.worker.trim() !== "local" && args.worker.trim() !== "";
      if (remote && args.expect?.command) {
        throw new TaskError("expect.command runs on this machine, but a child on a worker works on the worker's checkout: leave out expect.command (expect.files is checked on the worker), or use worker \"local\".");
      }
      const scope = await manager.scopeOf(call.sessionID);
      if (args.resume) {
        const resumed = manager.find(args.resume, scope);
        refuseResume(resumed, requested); // before the user is asked about its budget
        const { budget, note } = await allowedBudget(manager, scope, call, { requested, resumed, description: resumed.description });
        const task = await manager.resume(resumed.id, args.prompt, call.agent, call.model, budget, scope);
        const budgetNow = budget ? ` Its budget is now ${formatBudget(budget)}, counted over all it has spent.` : "";
        return `Resumed background task ${task.id} (resume #${task.resumeCount}).${budgetNow}${note ? ` ${note}` : ""} You will be notified when it answers; or call background_output with task_id "${task.id}".`;
      }
      const { budget, note } = await allowedBudget(manager, scope, call, { requested, description: args.description });
      if (args.expect?.command) {
        const refused = `Running \`${args.expect.command}\` after the task was not allowed (bash permission). Launch it without expect.command, or with a command the user allows.`;
        await allowExpectCommand(args.expect.command, call, "a background task", refused);
      }
      const task = await manager.launch({
        parentSessionID: call.sessionID, parentMessageID: call.messageID, parentAgent: call.agent,
        parentModel: call.model, description: args.description, prompt: args.prompt, agent: args.agent, fork: args.fork,
        extras: { expect: args.expect, milestones: args.milestones }, ...(args.worker !== undefined ? { worker: args.worker } : {}),
        isolation: args.isolation ?? defaultIsolation, ...(budget ? { budget } : {}),
      });
      const queued = task.status === "queued" ? " (queued: the concurrency limit is reached; it starts when a slot frees)" : "";
      return [
        `Launched background task ${task.id}${task.isForked ? " (forked)" : ""}${task.worker ? ` on worker ${task.worker}` : ""}: ${task.description}${queued}`,
        `task_id: ${task.id}`,
        `batch: ${task.batchId}`,
        ...(task.budget ? [`budget: ${formatBudget(task.budget)}, with the tasks it launches; past it the task is stopped.`] : []),
        ...(note ? [note] : []),
        ...worktreeLines(task),
        "It runs in the background; you will be notified here when it finishes. Use background_output to check on it.",
      ].join("\n");
    },
  });
}

/** Where an isolated child works (a nested task of an isolated child shares its parent's worktree and has none of its own). */
function worktreeLines(task: Task): string[] {
  if (!task.worktree) return [];
  const { path, branch, base } = task.worktree;
  return [`worktree: ${path} (branch ${branch}, from HEAD ${base.slice(0, 7)}). Uncommitted changes of your checkout are not carried over; its result lists what it changed, and background_merge brings it back.`];
}

/** Before anything happens (a permission asked, a resume claimed): a bad budget changes nothing. */
function checkedBudget(value: unknown): Budget {
  const parsed = parseBudget(value, "budget");
  if (parsed.problem !== undefined) throw new TaskError(parsed.problem);
  return parsed.budget;
}

/** Checked here rather than in the schema: every model request carries the schema (a shared budget). */
function checkTexts(args: { description: string; prompt: string; agent: string; resume?: string }): void {
  if (args.description.trim() === "" || args.description.length > 200) throw new TaskError("description must be a 3-8 word label (1-200 characters).");
  if (args.prompt.trim() === "") throw new TaskError("prompt must not be empty: say what the child should do.");
  if (args.agent.trim() === "") throw new TaskError('agent must not be empty, e.g. "general".');
  if (args.resume !== undefined && args.resume.trim() === "") throw new TaskError("resume must be a task id shown by background_list, or left out.");
}
