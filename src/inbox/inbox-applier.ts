import { claimLive } from "../core/claims.ts";
import type { Clock } from "../core/clock.ts";
import { errorMessage } from "../core/errors.ts";
import { COMMAND_LEASE_MS } from "../store/command-repository.ts";
import type { Store } from "../store/store.ts";
import type { CommandHandler } from "./apply-command.ts";
import type { InboxCommand } from "./inbox-command.ts";

/** How often an idle plugin asks SQLite whether anything was committed (one pragma). */
export const INBOX_POLL_MS = 500;
/** A command its owner (the process running the child) has not taken this long is taken by any instance. */
export const OWNER_GRACE_MS = 3000;

/**
 * Applies the dashboard's commands for this project. One unref'd timer reads SQLite's
 * data_version (no table read) and looks at the inbox only when another connection committed;
 * each command is claimed in a transaction first, so with several OpenCode processes on one
 * database exactly one applies it. A command another process owns (a child running there) is
 * left to it for OWNER_GRACE_MS, then taken by anyone (its owner is gone). A command claimed by an
 * instance that stopped before recording its outcome is taken over (core/claims.ts). Stops on dispose.
 */
export class InboxApplier {
  private timer: unknown;
  private version: number | undefined;
  private draining: Promise<void> | undefined;
  private stopped = false;

  constructor(
    /** The project's inbox, the commit counter, and this instance's name in claims. */
    private store: Pick<Store, "commands" | "dataVersion" | "projectId" | "holder">,
    private handler: CommandHandler,
    private clock: Clock,
    private onCrash: (message: string, error: unknown) => void,
    private pollMs = INBOX_POLL_MS,
  ) {}

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
      const version = this.store.dataVersion();
      if (version === this.version) return;
      this.version = version;
      const open = this.store.commands.open(this.store.projectId);
      if (open.length === 0) return;
      // Another instance's claim: looked at again each tick, to take it over if that instance stops.
      if (open.some((c) => c.status === "claimed")) this.version = undefined;
      this.draining = this.drain(open).finally(() => (this.draining = undefined));
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

  private async drain(commands: InboxCommand[]): Promise<void> {
    for (const command of commands) {
      // A claimed one is another instance's until its claim lapses (no write transaction until then).
      if (command.status === "claimed" && this.claimedElsewhere(command)) continue;
      if (command.status === "pending" && !(await this.mayTake(command))) {
        this.version = undefined; // look again at the next tick, whether or not anything changes
        continue;
      }
      if (!this.store.commands.claim(command.id, this.store.holder, this.clock.now())) continue; // another instance has it
      try {
        this.store.commands.finish(command.id, "done", await this.handler.apply(command), this.clock.now());
      } catch (error) {
        this.finishFailed(command.id, errorMessage(error));
      }
    }
  }

  private claimedElsewhere(command: InboxCommand): boolean {
    const claim = { by: command.claimedBy ?? "", at: command.claimedAt ?? 0 };
    return command.claimedBy !== undefined && claimLive(claim, this.clock.now(), COMMAND_LEASE_MS);
  }

  private async mayTake(command: InboxCommand): Promise<boolean> {
    if (this.clock.now() - command.createdAt >= OWNER_GRACE_MS) return true;
    try {
      return await this.handler.owns(command);
    } catch (error) {
      this.onCrash("Could not tell whether a dashboard command is this OpenCode's", error);
      return false;
    }
  }

  private finishFailed(id: number, why: string): void {
    try {
      this.store.commands.finish(id, "failed", why, this.clock.now());
    } catch (error) {
      this.onCrash(`Could not record the outcome of dashboard command ${id}`, error);
    }
  }
}
