import type { CoreContext } from "./core-context.ts";
import { claimLive } from "./claims.ts";
import type { Task } from "./task.ts";

/**
 * Which running tasks this plugin instance drives. A task's row names its owner with a lease
 * (TaskStore.claimTask): the instance that starts, resumes or takes over a child holds it, renews
 * it while alive, and is the only one that reads the child's state from its host to settle it.
 * OpenCode's session status is per process (a child streaming in one process is idle to another),
 * so no instance ever judges a task alive or interrupted from its own host unless it holds it.
 */
export class TaskOwnership {
  private readonly held = new Set<string>();

  constructor(
    private ctx: CoreContext,
    /** This instance in claims (core/claims.ts newClaimer). */
    readonly claimer: string,
    /** How long a claim keeps others out without a renewal (LEASES.taskMs). */
    readonly leaseMs: number,
  ) {}

  /** Takes the running task when nobody live holds it (inside the caller's transaction, if any). True when this instance holds it now. */
  take(taskId: string): boolean {
    if (!this.ctx.store.claimTask(taskId, this.claimer, this.ctx.clock.now(), this.leaseMs)) return false;
    this.held.add(taskId);
    return true;
  }

  holds(taskId: string): boolean {
    return this.held.has(taskId);
  }

  /**
   * The task settled, here or by another instance's cancel: its row is free, whoever held it (a
   * holder elsewhere learns so at its next renewal), so a later resume is taken by the resumer.
   */
  settled(taskId: string): void {
    this.held.delete(taskId);
    const owner = this.ctx.store.taskClaim(taskId)?.by;
    if (owner) this.ctx.store.releaseTask(taskId, owner);
  }

  /** This instance stops: everything it held is free for the others at once. */
  releaseAll(): void {
    this.held.clear();
    this.ctx.store.releaseTask(undefined, this.claimer);
  }

  /**
   * Renews every claim in one write. Returns the tasks lost meanwhile: taken over by another
   * process after this one's lease ran out (a stall, a clock jump), or settled elsewhere. This
   * instance must stop driving them.
   */
  renew(): string[] {
    if (this.held.size === 0) return [];
    const still = this.ctx.store.renewTaskClaims(this.claimer, this.ctx.clock.now());
    const lost = [...this.held].filter((id) => !still.has(id));
    for (const id of lost) this.held.delete(id);
    return lost;
  }

  /** Of these running tasks, the ones this instance does not hold and nobody live does: free to take over. */
  orphans(active: Task[]): Task[] {
    const now = this.ctx.clock.now();
    return active.filter((task) => {
      if (this.held.has(task.id)) return false;
      const claim = this.ctx.store.taskClaim(task.id);
      return !claim || !claimLive(claim, now, this.leaseMs);
    });
  }
}
