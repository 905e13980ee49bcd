import type { Clock } from "./clock.ts";
import { errorMessage } from "./errors.ts";

/** A store error is shown to the user for this long after it happened, unless a write succeeded since. */
export const STORE_ERROR_SHOWN_MS = 60_000;

export type StoreFailure = { message: string; at: number };

/**
 * Watches a store for the user's sake: remembers the last error a store call threw (SQLITE_BUSY
 * after the busy timeout, disk full, a damaged database) until a later write transaction commits,
 * so `background_list` can say that what it shows may be stale. Errors thrown by the work inside
 * a transaction (a refusal, a listener) are not store errors and are not remembered.
 */
export class StoreHealth {
  private last: StoreFailure | undefined;
  private depth = 0;

  constructor(private clock: Clock) {}

  /** The last store error, while it is recent and no write has succeeded since. */
  failure(): StoreFailure | undefined {
    if (this.last && this.clock.now() - this.last.at <= STORE_ERROR_SHOWN_MS) return this.last;
    return undefined;
  }

  /** The same store, every method call watched (each method wrapped once, on first use). */
  watch<S extends object>(store: S): S {
    const wrapped = new Map<PropertyKey, unknown>();
    return new Proxy(store, {
      get: (target, property) => {
        const value = Reflect.get(target, property, target);
        if (typeof value !== "function") return value;
        if (!wrapped.has(property)) wrapped.set(property, this.wrap(target, property, value as (...args: unknown[]) => unknown));
        return wrapped.get(property);
      },
    });
  }

  private wrap(target: object, property: PropertyKey, method: (...args: unknown[]) => unknown): unknown {
    if (property === "transaction") return <T>(fn: () => T) => this.transaction(target as { transaction<R>(f: () => R): R }, fn);
    return (...args: unknown[]) => {
      try {
        return method.apply(target, args);
      } catch (error) {
        this.record(error);
        throw error;
      }
    };
  }

  private transaction<T>(target: { transaction<R>(f: () => R): R }, fn: () => T): T {
    let thrownByWork = false;
    this.depth++;
    try {
      const result = target.transaction(() => {
        try {
          return fn();
        } catch (error) {
          thrownByWork = true;
          throw error;
        }
      });
      if (this.depth === 1) this.last = undefined;
      return result;
    } catch (error) {
      if (!thrownByWork) this.record(error);
      throw error;
    } finally {
      this.depth--;
    }
  }

  private record(error: unknown): void {
    this.last = { message: errorMessage(error), at: this.clock.now() };
  }
}
