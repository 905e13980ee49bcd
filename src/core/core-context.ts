import type { Clock } from "./clock.ts";
import type { Host } from "../host/host.ts";
import type { TaskStore } from "./task-store.ts";
import type { SpendSink } from "./spend-sink.ts";
import type { WorktreeSupport } from "./task-worktree.ts";
import { errorMessage } from "./errors.ts";

/** The host log as the core uses it: logging never throws, and detached work is always caught. */
export class CoreLog {
  constructor(private host: Host) {}

  error(message: string, error: unknown): void {
    this.write("error", message, { error: errorMessage(error) });
  }

  info(message: string, extra: Record<string, unknown>): void {
    this.write("info", message, extra);
  }

  /**
   * Lets work go on in the background with nothing awaiting it: a failure is logged through the
   * host, never left as an unhandled rejection inside OpenCode.
   */
  detach(what: string, work: Promise<unknown>): void {
    work.catch((error) => this.error(what, error));
  }

  private write(level: "info" | "error", message: string, extra: Record<string, unknown>): void {
    // If logging itself fails there is nowhere left to report it; the host must not see a throw.
    try {
      this.host.log(level, message, extra).catch(() => undefined);
    } catch {
      // a host whose log throws synchronously: same as above
    }
  }
}

/** What every part of the task core works with, handed to each part explicitly by the manager. */
export type CoreContext = {
  readonly host: Host;
  readonly store: TaskStore;
  readonly clock: Clock;
  readonly log: CoreLog;
  /** Where children's model requests are counted (src/cost); none: spend is not recorded. */
  readonly spend?: SpendSink;
  /** The git side of isolation (src/worktrees); none: isolation "worktree" is refused. */
  readonly worktrees?: WorktreeSupport;
};
