/**
 * Read-only look into the plugin's own SQLite database (in the server's private home), for what
 * the event stream does not say: whether a notification started a parent turn, and the final
 * state of each task.
 */
import { join } from "node:path";
import { defaultDbPath } from "../src/store/default-db-path.ts";
import { ReadModel } from "../src/store/reads/read-model.ts";
import type { ProjectTask } from "../src/store/reads/task-reads.ts";

export class PluginDatabase {
  private reader?: ReadModel;

  constructor(private readonly path: string) {}

  /** The database the plugin uses by default inside the server's home. */
  static inHome(homeDir: string): PluginDatabase {
    return new PluginDatabase(defaultDbPath({ XDG_DATA_HOME: join(homeDir, ".local/share") }));
  }

  tasksOf(parentSessionID: string): ProjectTask[] {
    return this.open().tasks.list({ parentSessionID, includeCleared: true });
  }

  /**
   * How the nth (0-based) notification about a task went out, once the plugin has recorded it:
   * "woke parent" (it started a parent turn) or "no turn" (delivered quietly).
   */
  notifiedDetail(taskId: string, nth: number): string | undefined {
    return this.notifiedDetails(taskId)[nth];
  }

  /** How each notification about a task went out so far, oldest first. */
  notifiedDetails(taskId: string): string[] {
    return this.open().tasks.allEvents()
      .filter((e) => e.taskId === taskId && e.kind === "notified")
      .map((e) => e.detail ?? "");
  }

  close(): void {
    this.reader?.close();
    this.reader = undefined;
  }

  private open(): ReadModel {
    return (this.reader ??= ReadModel.open(this.path));
  }
}
