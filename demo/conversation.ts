/**
 * The parent conversation: launch two tasks in one message, let them finish in the background,
 * read one result with background_output, resume that task with a follow-up, then create an
 * automation (the user approves OpenCode's permission prompt) and hear both of its runs report back.
 */
import { taskIdsIn, toolOutputs, waitUntil, type Stack } from "../test/harness/plugin-stack.ts";
import type { Narrator } from "./narrator.ts";
import { answerPermission, waitForPermission } from "./permission.ts";
import { AUTOMATION, automationMessage, childTasks, launchMessage, outputMessage, resumeMessage } from "./scenario.ts";
import { bold, cyan, green, yellow, type Timeline } from "./timeline.ts";

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
    for (const t of tasks) this.timeline.detail(`"${t.description}", child prompt: ${t.prompt.replaceAll("\n", " / ")}`);
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
    await this.waitForParent(() => this.notified(ids, times), "the parent notified about every task");
  }

  /** The parent's model calls task_create; OpenCode asks the user, who approves once. */
  async createAutomation(): Promise<void> {
    const { title, triggers, max_runs, notify } = AUTOMATION;
    this.timeline.step(`${bold("parent prompt sent")}: task_create "${title}", triggers ${JSON.stringify(triggers)}, max_runs ${max_runs}, notify ${notify}`);
    this.timeline.detail(`each run's child prompt: ${AUTOMATION.prompt}`);
    const from = this.stack.events.events.length;
    const [output] = await this.turn(automationMessage(), "task_create", TURN_MS, "", () => this.approve(from));
    const [created, ...rest] = output.split("\n");
    this.timeline.step(`${bold("automation created")}: ${created}`);
    for (const line of rest) this.timeline.detail(line);
  }

  /**
   * Waits until the automation has reported `runs` runs to the parent and the parent's turn about
   * them is over. Reports that wait while the parent is busy arrive together in one message.
   */
  async waitForAutomationReports(runs: number): Promise<void> {
    const count = (text: string) => text.split("<automation-run ").length - 1;
    const reported = async () => (await this.stack.notifications(this.parentID)).reduce((n, text) => n + count(text), 0) >= runs;
    await this.waitForParent(reported, `${runs} automation reports`);
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

  /** Answers the permission prompt that task_create raises, as the user would in the TUI. */
  private async approve(fromEvent: number): Promise<void> {
    const asked = await waitForPermission(this.stack, this.parentID, fromEvent);
    const triggers = Array.isArray(asked.metadata?.triggers) ? ` (${asked.metadata.triggers.join(", ")})` : "";
    // The pattern is the automation's approved version (id@v<n>-<hash>): "always" covers that version, never its title.
    const title = typeof asked.metadata?.title === "string" ? asked.metadata.title : asked.patterns.join(", ");
    this.timeline.step(`${yellow("OpenCode asks the user")}: permission ${asked.permission} for "${title}"${triggers}, version ${asked.patterns.join(", ")}`);
    await answerPermission(this.stack, asked.id, "once");
    this.timeline.step(`${green("the user approved it")} (the demo answered "once" through the server's permission API, as the TUI would)`);
  }

  private async waitForParent(done: () => Promise<boolean>, what: string): Promise<void> {
    await waitUntil(async () => (await done()) && (await this.parentIdle()), { timeoutMs: BACKGROUND_MS, intervalMs: 100, what });
    await this.narrator.flush();
  }

  /**
   * Sends one user prompt, waits for the parent's turn (and `during`, run alongside it), and
   * returns the new outputs of `tool`.
   */
  private async turn(text: string, tool: string, timeoutMs: number, note = "", during?: () => Promise<void>): Promise<string[]> {
    const before = (await toolOutputs(this.stack, this.parentID, tool)).length;
    const started = Date.now();
    await withTimeout(Promise.all([this.stack.say(this.parentID, text), during?.()]), timeoutMs, `the parent's turn (${tool})`);
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
