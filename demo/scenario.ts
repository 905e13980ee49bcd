/**
 * What the demo's conversation says. The parent and the children talk to the same scripted mock
 * model, so their prompts carry its directives (see test/harness/mock-model.ts): `CALL <tool>
 * <json>` makes the model call that tool, `REPLY <text>` makes it answer, `SLOW <ms>` delays
 * every answer of the turn so the tasks take a moment, as real ones would.
 */
import { join } from "node:path";
import { call } from "../test/harness/plugin-stack.ts";
import { defaultResponder, lastUserText, type Responder } from "../test/harness/mock-model.ts";

export type ChildTask = { description: string; prompt: string };

export function childTasks(projectDir: string): ChildTask[] {
  return [
    {
      description: "say hi with bash",
      prompt: `SLOW 500\n${call("bash", { command: "echo hi", description: "Print hi" })}`,
    },
    {
      description: "summarise the README",
      prompt: `SLOW 1000\n${call("read", { filePath: join(projectDir, "README.md") })}\n${call("write", { filePath: "summary.md", content: SUMMARY })}`,
    },
  ];
}

const SUMMARY = "# Summary\nThe README says: test project.\n";

/** The parent's first message: both background_task calls in one message, so they form one batch. */
export function launchMessage(tasks: ChildTask[]): string {
  return tasks.map((t) => call("background_task", { ...t, agent: "general" })).join("\n");
}

export function outputMessage(taskId: string): string {
  return call("background_output", { task_id: taskId });
}

export const RESUME_PROMPT = `SLOW 500\n${call("bash", { command: "echo hi again", description: "Print hi again" })}`;

export function resumeMessage(taskId: string): string {
  return call("background_task", { description: "say hi again", prompt: RESUME_PROMPT, agent: "general", resume: taskId });
}

/** The automation the parent's model creates with task_create: every run's child prints the time. */
export const AUTOMATION = {
  title: "clock check",
  prompt: call("bash", { command: "date +%T", description: "Print the time" }),
  triggers: [{ every: "2s" }],
  max_runs: 2,
  notify: "always",
};

export function automationMessage(): string {
  return call("task_create", AUTOMATION);
}

/** What the parent's model answers when a notification wakes it (the default mock would just echo it). */
export const WOKEN_REPLY = "Thanks, I have the background results.";

/** The mock's default behaviour, plus a short answer to turns started by a notification. */
export const demoResponder: Responder = (req) => {
  if (!req.isTitle && lastUserText(req).startsWith("<background-task-notification")) return { text: WOKEN_REPLY };
  return defaultResponder(req);
};
