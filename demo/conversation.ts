/**
 * The parent conversation: launch two tasks in one message, let them finish in the background,
 * read one result with background_output, then resume that task with a follow-up.
 */
import { taskIdsIn, toolOutputs, waitUntil, type Stack } from "../test/harness/plugin-stack.ts";
import type { Narrator } from "./narrator.ts";
import { childTasks, launchMessage, outputMessage, resumeMessage } from "./scenario.ts";
import { bold, cyan, type Timeline } from "./timeline.ts";

const FIRST_TURN_MS = 60_000;
const TURN_MS = 30_000;
const BACKGROUND_MS = 45_000;

export class Conversation {
  constructor(
    private readonly stack: Stack,
    private readonly timeline: Timeline,
    private readonly narrator: Narrator,
    private readonly parentID: string,
  ) {}

  /** Returns the task ids, in launch order. */
  async launchTwoTasks(): Promise<string[]> {
    const tasks = childTasks(this.stack.server.projectDir);
    this.timeline.step(`${bold("parent prompt sent")}: call background_task twice in one message (one batch)`);
    for (const t of tasks) this.timeline.detail(`"${t.description}", child prompt: ${t.prompt.replace("\n", " / ")}`);
    const outputs = await this.turn(launchMessage(tasks), "background_task", FIRST_TURN_MS, "the first prompt of a fresh server is slow");
    const ids = outputs.flatMap(taskIdsIn);
    if (ids.length !== 2) throw new Error(`expected two task ids, got: ${outputs.join("\n---\n")}`);
    await this.narrator.flush();
    const batch = /batch: (\S+)/.exec(outputs[0])?.[1];
    this.timeline.step(`${bold("tasks launched")} in batch ${batch}, and the parent's turn is over:`);
    for (const output of outputs) {
      const [id] = taskIdsIn(output);
      const description = /^Launched background task [^:]*: (.*)$/m.exec(output)?.[1];
      this.timeline.detail(`${cyan(this.narrator.labelOf(id))} = ${id} "${description}"`);
    }
    return ids;
  }

  /** Waits until every task has been notified `times` times and the parent's turn about it is over. */
  async waitForNotifications(ids: string[], times = 1): Promise<void> {
    await waitUntil(async () => (await this.notified(ids, times)) && (await this.parentIdle()), {
      timeoutMs: BACKGROUND_MS, intervalMs: 100, what: "the parent notified about every task",
    });
    await this.narrator.flush();
  }

  async readOutput(taskId: string): Promise<void> {
    this.timeline.step(`${bold("parent prompt sent")}: background_output for ${this.narrator.labelOf(taskId)}`);
    const [output] = await this.turn(outputMessage(taskId), "background_output", TURN_MS);
    this.timeline.step(`${bold("background_output")} answered:`);
    for (const line of output.split("\n")) this.timeline.detail(`| ${line}`);
  }

  async resume(taskId: string): Promise<void> {
    this.timeline.step(`${bold("parent prompt sent")}: background_task with resume: "${taskId}" (a follow-up in the same child session)`);
    const [output] = await this.turn(resumeMessage(taskId), "background_task", TURN_MS);
    this.timeline.step(`${bold("resume launched")}: ${/^[^.]*\./.exec(output)?.[0] ?? output}`);
  }

  /** Sends one user prompt, waits for the parent's turn, and returns the new outputs of `tool`. */
  private async turn(text: string, tool: string, timeoutMs: number, note = ""): Promise<string[]> {
    const before = (await toolOutputs(this.stack, this.parentID, tool)).length;
    const started = Date.now();
    await withTimeout(this.stack.say(this.parentID, text), timeoutMs, `the parent's turn (${tool})`);
    await this.narrator.flush();
    const outputs = (await toolOutputs(this.stack, this.parentID, tool)).slice(before);
    if (outputs.length === 0) throw new Error(`the parent's turn made no ${tool} call`);
    this.timeline.detail(`(parent turn took ${((Date.now() - started) / 1000).toFixed(1)}s${note ? `: ${note}` : ""})`);
    return outputs;
  }

  private async notified(ids: string[], times: number): Promise<boolean> {
    const notes = await this.stack.notifications(this.parentID);
    return ids.every((id) => notes.filter((n) => n.includes(`task_id="${id}"`)).length >= times);
  }

  /** No run in progress, and the last message is a finished assistant answer (so a woken turn is over too). */
  private async parentIdle(): Promise<boolean> {
    const statuses = (await this.stack.server.client.session.status()).data as Record<string, unknown> | undefined;
    if (statuses?.[this.parentID]) return false;
    const last = (await this.stack.messages(this.parentID)).at(-1);
    return last?.info.role === "assistant" && Boolean(last.info.time?.completed);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 1000}s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
