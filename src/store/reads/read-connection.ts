import { existsSync } from "node:fs";
import { openSqlite, type SqliteDatabase, type SqliteStatement } from "../sqlite-driver.ts";
import { StatementCache } from "../statement-cache.ts";
import { StoreUnavailableError } from "../store-unavailable-error.ts";

/**
 * The read model's one read-only connection, shared by its reads by concern. It never blocks the
 * plugin's writers (WAL). Tables from later migrations may be missing in an older database, or
 * appear while it is open (the plugin migrates the file): `has` looks again after every commit.
 */
export class ReadConnection {
  private statements = new StatementCache();
  private tables = new Set<string>();
  private tablesVersion = -1;

  /** Opens read-only; never creates the file. Throws StoreUnavailableError. */
  static open(path: string): ReadConnection {
    if (!existsSync(path)) throw new StoreUnavailableError(path, "missing", "the file does not exist");
    return new ReadConnection(openSqlite(path, { readonly: true, verify: assertTaskDatabase }));
  }

  private constructor(readonly db: SqliteDatabase) {}

  /** Changes whenever another connection commits: one pragma, no table read. */
  dataVersion(): number {
    return Number(this.sql("PRAGMA data_version").get()?.data_version);
  }

  /** Whether a table exists now. */
  has(table: string): boolean {
    const version = this.dataVersion();
    if (version !== this.tablesVersion) {
      this.tablesVersion = version;
      this.tables = new Set(this.sql("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((row) => String(row.name)));
    }
    return this.tables.has(table);
  }

  /** Whether a table has a column now: a column a later migration adds may be missing in an older database. */
  hasColumn(table: string, column: string): boolean {
    return this.has(table) && this.sql("SELECT 1 FROM pragma_table_info(?) WHERE name = ?").get(table, column) !== undefined;
  }

  /** A prepared statement, compiled once per connection. */
  sql(text: string): SqliteStatement {
    return this.statements.prepare(this.db, text);
  }

  close(): void {
    this.statements.clear();
    this.db.close();
  }
}

/**
 * Refuses a file without the plugin's ledger. One with no tables yet, or the ledger alone, is
 * one the plugin is creating right now (it makes the file, then migrates): "missing" for now.
 */
function assertTaskDatabase(db: SqliteDatabase): void {
  const tables = new Set(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((row) => String(row.name)));
  if (tables.has("schema_migrations") && tables.has("tasks")) return;
  if (tables.size === 0 || tables.has("schema_migrations")) throw new StoreUnavailableError(db.path, "missing", "the plugin has not finished creating it");
  throw new StoreUnavailableError(db.path, "foreign", "it holds no background tasks tables");
}
