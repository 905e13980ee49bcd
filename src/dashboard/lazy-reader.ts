import { existsSync } from "node:fs";
import { StoreUnavailableError } from "../store/store-unavailable-error.ts";
import { ReadModel } from "../store/reads/read-model.ts";

/** The data version while there is no database: never one SQLite reports (it counts up from 1). */
export const NO_DATABASE = -1;

/**
 * The dashboard's reader of a database that may not exist yet: the dashboard can start before
 * OpenCode has run the plugin, and opens the file at the first use after the plugin created and
 * migrated it, so no restart is needed. It never creates the file: only the plugin does.
 */
export class LazyReader {
  private reader: ReadModel | undefined;
  /** Why the file is there but cannot be read (not merely still being created); undefined otherwise. */
  problem: string | undefined;

  constructor(readonly path: string) {}

  /** The reader, or undefined while there is no database yet. Costs one stat while waiting. */
  get(): ReadModel | undefined {
    if (this.reader || !existsSync(this.path)) return this.reader;
    try {
      this.reader = ReadModel.open(this.path);
      this.problem = undefined;
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error;
      this.problem = error.reason === "missing" ? undefined : error.message;
    }
    return this.reader;
  }

  /** The reader's data version, NO_DATABASE while waiting: the live feed sees the database appear as a change. */
  dataVersion(): number {
    return this.get()?.dataVersion() ?? NO_DATABASE;
  }

  close(): void {
    this.reader?.close();
    this.reader = undefined;
  }
}
