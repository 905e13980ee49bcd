import { randomBytes } from "node:crypto";
import type { Clock } from "../core/clock.ts";
import { errorMessage } from "../core/errors.ts";
import type { SqliteDatabase } from "../store/sqlite-driver.ts";
import type { ApplyCommand } from "./apply-command.ts";
import { CommandInbox } from "./command-inbox.ts";

/** How often an idle plugin asks SQLite whether anything was committed (one pragma). */
export const INBOX_POLL_MS = 500;

/**
 * Applies the dashboard's commands for this project. One unref'd timer reads SQLite's
 * data_version (no table read) and looks at the inbox only when another connection committed;
 * each command is claimed in a transaction first, so with several OpenCode processes on one
 * database exactly one applies it. Stops on dispose.
 */
export class InboxApplier {
  readonly instanceId = `pid${process.pid}-${randomBytes(4).toString("hex")}`;
  private inbox: CommandInbox;
  private timer: unknown;
  private version: number | undefined;
  private draining: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private db: SqliteDatabase,
    private projectId: string,
    private apply: ApplyCommand,
    private clock: Clock,
    private onCrash: (message: string, error: unknown) => void,
    private pollMs = INBOX_POLL_MS,
  ) {
    this.inbox = new CommandInbox(db);
  }

  /** Starts polling; does nothing after stop (a dispose that came first wins). */
  start(): void {
    if (this.timer === undefined) this.tick();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Resolves when the commands seen so far are applied (for tests). */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /** One check now: reads the inbox when the database changed since the last look. */
  check(): void {
    if (this.draining) return;
    try {
      const version = Number(this.db.prepare("PRAGMA data_version").get()?.data_version);
      if (version === this.version) return;
      this.version = version;
      const pending = this.inbox.pending(this.projectId);
      if (pending.length === 0) return;
      this.draining = this.drain(pending.map((c) => c.id)).finally(() => (this.draining = undefined));
    } catch (error) {
      this.onCrash("Could not read the dashboard's commands; trying again shortly", error);
    }
  }

  private tick(): void {
    if (this.stopped) return;
    this.check();
    this.timer = this.clock.setTimeout(() => this.tick(), this.pollMs);
    (this.timer as { unref?: () => void }).unref?.();
  }

  private async drain(ids: number[]): Promise<void> {
    for (const id of ids) {
      if (!this.inbox.claim(id, this.instanceId, this.clock.now())) continue; // another instance has it
      const command = this.inbox.get(id)!;
      try {
        this.inbox.finish(id, "done", await this.apply(command), this.clock.now());
      } catch (error) {
        this.finishFailed(id, errorMessage(error));
      }
    }
  }

  private finishFailed(id: number, why: string): void {
    try {
      this.inbox.finish(id, "failed", why, this.clock.now());
    } catch (error) {
      this.onCrash(`Could not record the outcome of dashboard command ${id}`, error);
    }
  }
}
