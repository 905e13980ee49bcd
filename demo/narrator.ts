/**
 * Turns the server's event stream into timeline lines for what happens in the background: the
 * children's tool calls, each task or automation run settling, the notifications and automation
 * reports reaching the parent (with their evidence line), and the parent turns they start.
 * Events are handled one at a time, in order.
 */
import type { EventLog } from "../test/harness/events.ts";
import { waitUntil } from "../test/harness/events.ts";
import { describeToolCall, type ToolState } from "./describe-tool-call.ts";
import type { PluginDatabase } from "./plugin-database.ts";
import { cyan, green, oneLine, yellow, type Timeline } from "./timeline.ts";

type AnyEvent = { type: string; properties: any };

// Attributes in any order (the notifier adds a `key` marker to every notification it sends).
const NOTIFICATION = /<background-task-notification\b[^>]*?\btask_id="([^"]+)"[^>]*?\bstatus="([^"]+)"[^>]*>\n([\s\S]*?)<\/background-task-notification>/g;
const AUTOMATION_REPORT = /<automation-run\b[^>]*?\brun="(\d+)"[^>]*?\bstatus="([^"]+)"[^>]*>\n([\s\S]*?)<\/automation-run>/g;
/** The title the plugin gives an automation run's child session. */
const AUTOMATION_RUN_TITLE = /\(automation run #(\d+)\)/;
const DB_WAIT = { timeoutMs: 10_000, intervalMs: 50 };

export class Narrator {
  private next = 0;
  private tasksSeen = 0;
  private chain = Promise.resolve();
  private timer?: NodeJS.Timeout;
  private readonly labels = new Map<string, string>();
  private readonly seen = new Set<string>();
  private readonly notificationMessages = new Set<string>();
  private readonly wokenReplies = new Set<string>();
  private readonly notifiedCount = new Map<string, number>();
  private shownWholeMessage = false;

  constructor(
    private readonly events: EventLog,
    private readonly timeline: Timeline,
    private readonly db: PluginDatabase,
    private readonly parentID: string,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.flush(), 25);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Handles every event received so far. */
  flush(): Promise<void> {
    this.chain = this.chain.then(() => this.drain());
    return this.chain;
  }

  /** "task A" for a child session of the parent (letters in launch order), "automation run #1" for a run's child. */
  labelOf(sessionID: string): string {
    return this.labels.get(sessionID) ?? sessionID;
  }

  private async drain(): Promise<void> {
    while (this.next < this.events.events.length) {
      const event = this.events.events[this.next++] as unknown as AnyEvent;
      try {
        await this.handle(event);
      } catch (error) {
        this.timeline.step(yellow(`(could not narrate ${event.type}: ${error instanceof Error ? error.message : error})`));
      }
    }
  }

  private async handle(event: AnyEvent): Promise<void> {
    const p = event.properties ?? {};
    if (event.type === "session.created" && p.info?.parentID === this.parentID) this.addChild(p.info);
    if (event.type === "message.part.updated" && p.part?.type === "tool" && this.labels.has(p.part.sessionID)) this.childTool(p.part);
    if (event.type === "session.idle" && this.labels.has(p.sessionID)) await this.childIdle(p.sessionID);
    if (event.type === "message.updated" && p.info?.sessionID === this.parentID) this.parentMessage(p.info);
    if (event.type === "message.part.updated" && p.part?.type === "text" && p.part.sessionID === this.parentID) await this.parentText(p.part);
  }

  private addChild(info: { id: string; title?: string }): void {
    if (this.labels.has(info.id)) return;
    const run = AUTOMATION_RUN_TITLE.exec(info.title ?? "")?.[1];
    this.labels.set(info.id, run ? `automation run #${run}` : `task ${String.fromCharCode(65 + this.tasksSeen++)}`);
  }

  private childTool(part: { sessionID: string; callID: string; tool: string; state: ToolState }): void {
    const { status } = part.state;
    if ((status !== "completed" && status !== "error") || this.once(`tool:${part.callID}`)) return;
    this.timeline.step(`${cyan(this.labelOf(part.sessionID))} progress: tool call ${describeToolCall(part.tool, part.state)}`);
  }

  /** The child's turn is over; the plugin settles the task on this event. */
  private async childIdle(taskId: string): Promise<void> {
    const settled = await waitUntil(() => this.settledTask(taskId), { ...DB_WAIT, what: `${this.labelOf(taskId)} settled` });
    if (this.once(`settled:${taskId}:${settled.resumeCount}`)) return;
    const took = ((settled.settledAt! - settled.promptedAt) / 1000).toFixed(1);
    const resumed = settled.resumeCount > 0 ? ` (resume #${settled.resumeCount})` : "";
    const outcome = settled.status === "completed" ? `result ${quoted(settled.result ?? "")}` : `error ${quoted(settled.error ?? "")}`;
    this.timeline.step(`${cyan(this.labelOf(taskId))} ${green(settled.status)}${resumed} in ${took}s, ${outcome}`);
  }

  private settledTask(taskId: string) {
    const task = this.db.tasksOf(this.parentID).find((t) => t.id === taskId);
    const done = task && task.status !== "running" && task.status !== "resumed" && (task.settledAt ?? 0) >= task.promptedAt;
    return done ? task : undefined;
  }

  private parentMessage(info: { id: string; role: string; parentID?: string }): void {
    if (info.role === "assistant" && info.parentID && this.notificationMessages.has(info.parentID)) this.wokenReplies.add(info.id);
  }

  private async parentText(part: { id: string; messageID: string; text: string }): Promise<void> {
    if (!part.text || this.seen.has(`text:${part.id}`)) return;
    if (part.text.includes("<background-task-notification") || part.text.includes("<automation-run")) {
      this.once(`text:${part.id}`);
      this.notificationMessages.add(part.messageID);
      await this.notification(part.text);
      this.automationReports(part.text);
    } else if (this.wokenReplies.has(part.messageID)) {
      this.once(`text:${part.id}`);
      this.timeline.step(`parent turn (started by the notification) replied: ${JSON.stringify(oneLine(part.text, 60))}`);
    }
  }

  /** One notification message; it can carry several tasks' notifications. */
  private async notification(text: string): Promise<void> {
    const notes = [...text.matchAll(NOTIFICATION)].map(([, taskId, status, body]) => ({ taskId, status, body }));
    if (notes.length === 0) return;
    const how = await Promise.all(notes.map((n) => this.deliveryOf(n.taskId)));
    const woke = how.includes("woke parent");
    const what = notes.map((n) => `${this.labelOf(n.taskId)} ${n.status}`).join(", ");
    const effect = woke ? green("started a parent turn") : "delivered quietly, no parent turn";
    this.timeline.step(`${yellow("parent notified")} about ${what} -> ${effect}`);
    if (this.shownWholeMessage) for (const n of notes) this.showHeaderAndEvidence(n.body);
    else this.showWholeMessage(text);
  }

  /** The notification's first line, and its evidence line: what the child really did. */
  private showHeaderAndEvidence(body: string): void {
    this.timeline.detail(oneLine(body.split("\n")[0], 100));
    const evidence = /^Evidence: .*$/m.exec(body)?.[0];
    if (evidence) this.timeline.detail(oneLine(evidence, 160));
  }

  /** The reports of automation runs in one message: the automation reporting back to the session that created it. */
  private automationReports(text: string): void {
    for (const [, run, status, body] of text.matchAll(AUTOMATION_REPORT)) {
      const [header, ...result] = body.trim().split("\n");
      this.timeline.step(`${yellow("parent notified")} about automation run #${run} ${status} (the automation reports back)`);
      this.timeline.detail(oneLine(header, 100));
      this.timeline.detail(`result: ${JSON.stringify(oneLine(result.join("\n"), 60))}`);
    }
  }

  /** The first notification verbatim, so the reader sees what the parent's model is given. */
  private showWholeMessage(text: string): void {
    this.shownWholeMessage = true;
    this.timeline.detail("the message the parent session received:");
    for (const line of text.split("\n")) this.timeline.detail(`| ${line}`);
  }

  private deliveryOf(taskId: string): Promise<string> {
    const nth = this.notifiedCount.get(taskId) ?? 0;
    this.notifiedCount.set(taskId, nth + 1);
    return waitUntil(() => this.db.notifiedDetail(taskId, nth), { ...DB_WAIT, what: `${this.labelOf(taskId)}'s notification recorded` });
  }

  /** True if key was seen before; marks it seen. */
  private once(key: string): boolean {
    if (this.seen.has(key)) return true;
    this.seen.add(key);
    return false;
  }
}

/** A result on one line, without the markup some tools wrap their output in. */
function quoted(text: string): string {
  return JSON.stringify(oneLine(text.replace(/<\/?[a-z]+>/g, " "), 80));
}
