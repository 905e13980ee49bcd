import type { Host } from "../host/host.ts";
import type { TaskStore } from "./task-store.ts";
import type { TaskSummary } from "./task-summary.ts";

/** Longer chains than this are a bad row or a loop, not a real tree. */
const MAX_CHAIN = 64;

/**
 * Which tasks a tool call may name. A background child (or an OpenCode subagent session below
 * one) may name only the tasks below its own task: an unattended model must not resume, cancel,
 * read or even learn the ids of the user's other work. The user's session names any task.
 */
export type TaskScope = {
  /** The task whose tree the caller is in (its own, or the task a subagent session runs under); undefined: the user. */
  owner?: string;
  sees(task: Pick<TaskSummary, "parentSessionID">): boolean;
};

export const WHOLE_PROJECT: TaskScope = { sees: () => true };

/**
 * Finds the task a calling session belongs to. A session that is no task may be OpenCode's own
 * subagent (the `task` tool) of a child: its parentID chain, read from the host's session list,
 * reaches the child's session. A session's parent never changes, so what the list said is kept.
 */
export class TaskScopes {
  /** Session id → parent id (null: none, or not in the host's list), as the host last listed it. */
  private parents = new Map<string, string | null>();

  constructor(
    private host: Pick<Host, "listSessions">,
    private store: Pick<TaskStore, "get" | "list">,
    private onError: (message: string, error: unknown) => void = () => {},
  ) {}

  async scopeOf(callerSessionID: string): Promise<TaskScope> {
    let scope = this.known(callerSessionID);
    while (scope === undefined) {
      try {
        await this.learn(this.unknownFor(callerSessionID));
      } catch (error) {
        // Whether the caller is inside a task is unknown: it reaches only what it launched itself, until the host answers.
        this.onError(`Could not read the session list to scope session ${callerSessionID}'s task tools`, error);
        return { owner: callerSessionID, sees: (task) => this.reaches(task.parentSessionID, callerSessionID) };
      }
      scope = this.known(callerSessionID);
    }
    return scope;
  }

  /** The scope when what is remembered decides it, without asking the host; else undefined. */
  known(callerSessionID: string): TaskScope | undefined {
    if (this.unknownFor(callerSessionID).length > 0) return undefined;
    const owner = this.ownerOf(callerSessionID);
    if (owner === undefined) return WHOLE_PROJECT;
    return { owner, sees: (task) => this.reaches(task.parentSessionID, owner) };
  }

  /**
   * Sessions whose parent must be learnt first: on the caller's chain and, for a caller inside a
   * task, every launcher that is no task (a subagent session's launches hang below it, not a task).
   */
  private unknownFor(callerSessionID: string): string[] {
    let id: string | undefined = callerSessionID;
    for (let n = 0; id && n < MAX_CHAIN && !this.store.get(id); n++) {
      if (!this.parents.has(id)) return [id];
      id = this.parents.get(id) ?? undefined;
    }
    if (!id || !this.store.get(id)) return [];
    const launchers = new Set(this.store.list({ includeCleared: true }).map((t) => t.parentSessionID));
    return [...launchers].filter((l) => !this.parents.has(l) && !this.store.get(l));
  }

  /** The nearest task at or above the session, through tasks' launchers and sessions' parents. */
  private ownerOf(sessionID: string): string | undefined {
    let id: string | undefined = sessionID;
    for (let n = 0; id && n < MAX_CHAIN; n++) {
      if (this.store.get(id)) return id;
      id = this.parents.get(id) ?? undefined;
    }
    return undefined;
  }

  /** Whether walking up from `sessionID` meets `owner`. */
  private reaches(sessionID: string, owner: string): boolean {
    let id: string | undefined = sessionID;
    for (let n = 0; id && n < MAX_CHAIN; n++) {
      if (id === owner) return true;
      id = this.store.get(id)?.parentSessionID ?? this.parents.get(id) ?? undefined;
    }
    return false;
  }

  /** One listing for all of `ids`; those it does not hold are remembered as having no parent. */
  private async learn(ids: string[]): Promise<void> {
    for (const session of await this.host.listSessions()) this.parents.set(session.id, session.parentID ?? null);
    for (const id of ids) if (!this.parents.has(id)) this.parents.set(id, null);
  }
}
