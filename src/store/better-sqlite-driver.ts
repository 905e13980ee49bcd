import type BetterSqlite3 from "better-sqlite3";
import { createRequire } from "node:module";
import type { OpenSqliteOptions, SqlRow, SqliteDatabase, SqliteStatement } from "./sqlite-driver.ts";

/** `better-sqlite3` (major 12), loaded only under Node: it does not load inside Bun. */
export function openBetterSqlite(path: string, options: OpenSqliteOptions): SqliteDatabase {
  const require = createRequire(import.meta.url);
  const Database = require("better-sqlite3") as typeof BetterSqlite3;
  const db = new Database(path, { readonly: options.readonly ?? false, fileMustExist: options.readonly ?? false });
  return {
    path,
    exec: (sql) => void db.exec(sql),
    prepare: (sql) => wrapStatement(db, sql),
    transaction: (fn) => db.transaction(fn).immediate(),
    close: () => db.close(),
  };
}

function wrapStatement(db: BetterSqlite3.Database, sql: string): SqliteStatement {
  const statement = db.prepare<unknown[], SqlRow>(sql);
  return {
    run: (...params) => ({ changes: statement.run(...params).changes }),
    get: (...params) => statement.get(...params),
    all: (...params) => statement.all(...params),
  };
}
