import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { assertOwnDatabase, migrate } from "./migrations.ts";
import { openSqlite, type SqliteDatabase } from "./sqlite-driver.ts";
import { StoreUnavailableError, toStoreUnavailable } from "./store-unavailable-error.ts";

/**
 * Opens the plugin's database for writing and brings its schema up to date. `create`: the folder
 * and the file are made when missing (the plugin); otherwise only an existing file is opened (the
 * command line and the dashboard never make one). Never deletes or overwrites a file: one that
 * holds other tables is refused. Throws StoreUnavailableError.
 */
export function openDatabase(path: string, { create }: { create: boolean }): SqliteDatabase {
  if (create) ensureFolder(path);
  else if (!existsSync(path)) throw new StoreUnavailableError(path, "missing", "the file does not exist");
  const db = openSqlite(path, { verify: assertOwnDatabase });
  try {
    migrate(db);
  } catch (error) {
    db.close();
    throw toStoreUnavailable(path, error);
  }
  return db;
}

function ensureFolder(path: string): void {
  if (path === ":memory:") return;
  try {
    mkdirSync(dirname(path), { recursive: true });
  } catch (error) {
    throw toStoreUnavailable(path, error);
  }
}
