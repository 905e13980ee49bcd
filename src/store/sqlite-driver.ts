import { openBetterSqlite } from "./better-sqlite-driver.ts";
import { openBunSqlite } from "./bun-sqlite-driver.ts";
import { toStoreUnavailable } from "./store-unavailable-error.ts";

export type SqlValue = string | number | bigint | null | Uint8Array;
export type SqlRow = Record<string, unknown>;

export interface SqliteStatement {
  run(...params: SqlValue[]): { changes: number };
  /** The first row, or undefined when there is none. */
  get(...params: SqlValue[]): SqlRow | undefined;
  all(...params: SqlValue[]): SqlRow[];
}

/** The little both drivers share: `bun:sqlite` inside OpenCode, `better-sqlite3` under Node. */
export interface SqliteDatabase {
  readonly path: string;
  exec(sql: string): void;
  prepare(sql: string): SqliteStatement;
  /** Runs fn inside BEGIN IMMEDIATE, so a writer never fails halfway on a lock upgrade. */
  transaction<T>(fn: () => T): T;
  close(): void;
}

export type OpenSqliteOptions = {
  readonly?: boolean;
  /** Runs before the file is switched to WAL mode: a file it rejects is left unchanged. */
  verify?: (db: SqliteDatabase) => void;
};

export const BUSY_TIMEOUT_MS = 5000;

/**
 * Opens a database with the driver of the running runtime, with a busy timeout and WAL mode.
 * Any failure (unreadable, corrupt, locked, disk full) becomes a StoreUnavailableError.
 */
export function openSqlite(path: string, options: OpenSqliteOptions = {}): SqliteDatabase {
  let db: SqliteDatabase | undefined;
  try {
    db = typeof Bun !== "undefined" ? openBunSqlite(path, options) : openBetterSqlite(path, options);
    configure(db, options);
    return db;
  } catch (error) {
    db?.close();
    throw toStoreUnavailable(path, error);
  }
}

function configure(db: SqliteDatabase, options: OpenSqliteOptions): void {
  db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  // Reading the schema is what reveals a corrupt or foreign file; opening alone reads nothing.
  db.prepare("SELECT count(*) AS n FROM sqlite_master").get();
  options.verify?.(db);
  if (options.readonly) return;
  db.exec("PRAGMA journal_mode = WAL");
  // In WAL mode NORMAL survives any process crash (the plugin's risk); only a power cut can
  // lose the last commits, never corrupt the file. FULL would fsync on every settle.
  db.exec("PRAGMA synchronous = NORMAL");
}
