import type { Task } from "./task.ts";
import type { CoreContext } from "./core-context.ts";

/** Who hears about settles, in one typed map. One doc line per event says when it fires. */
export type SettleEventMap = {
  /**
   * Inside the settle's store transaction, after the task row and the parent's notification are
   * saved: a listener's writes commit with the settle. One that throws is rolled back alone
   * (nested transaction) and logged; the settle stands.
   */
  settling: (task: Task) => void;
  /** After the settle committed, in the order listeners were added. A throw or rejection is logged. */
  settled: (task: Task) => void | Promise<unknown>;
};

/** The settle's listeners. Emitting never throws into the settle. */
export class SettleEvents {
  private listeners: { [K in keyof SettleEventMap]: SettleEventMap[K][] } = { settling: [], settled: [] };

  constructor(private ctx: CoreContext) {}

  on<K extends keyof SettleEventMap>(event: K, listener: SettleEventMap[K]): void {
    this.listeners[event].push(listener);
  }

  /** Call inside the settle's transaction. */
  emitSettling(task: Task): void {
    for (const listener of this.listeners.settling) {
      try {
        this.ctx.store.transaction(() => listener(structuredClone(task)));
      } catch (error) {
        this.ctx.log.error(`A settle listener failed for task ${task.id}; the settle stands`, error);
      }
    }
  }

  emitSettled(task: Task): void {
    for (const listener of this.listeners.settled) {
      try {
        const work = listener(task);
        if (work) this.ctx.log.detach(`After settling task ${task.id}`, work);
      } catch (error) {
        this.ctx.log.error(`After settling task ${task.id}`, error);
      }
    }
  }
}
