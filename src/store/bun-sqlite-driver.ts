import type { Database } from "bun:sqlite";
import { createRequire } from "node:module";
import type { OpenSqliteOptions, SqlRow, SqliteDatabase, SqliteStatement, SqlValue } from "./sqlite-driver.ts";

/** `bun:sqlite`, loaded only when running under Bun (Node cannot resolve it). */
export function openBunSqlite(path: string, options: OpenSqliteOptions): SqliteDatabase {
  const require = createRequire(import.meta.url);
  const { Database: BunDatabase } = require("bun:sqlite") as typeof import("bun:sqlite");
  const db: Database = options.readonly
    ? new BunDatabase(path, { readonly: true, strict: true })
    : new BunDatabase(path, { create: true, readwrite: true, strict: true });
  return {
    path,
    exec: (sql) => void db.run(sql),
    prepare: (sql) => wrapStatement(db, sql),
    transaction: (fn) => db.transaction(fn).immediate(),
    close: () => db.close(),
  };
}

function wrapStatement(db: Database, sql: string): SqliteStatement {
  const statement = db.prepare<SqlRow, SqlValue[]>(sql);
  return {
    run: (...params) => ({ changes: statement.run(...params).changes }),
    get: (...params) => statement.get(...params) ?? undefined,
    all: (...params) => statement.all(...params),
  };
}
