import type { SqliteDatabase, SqliteStatement } from "./sqlite-driver.ts";

/** Prepared statements kept by their SQL text, so each is compiled once per connection. */
export class StatementCache {
  private readonly statements = new Map<string, SqliteStatement>();

  prepare(db: SqliteDatabase, text: string): SqliteStatement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }

  clear(): void {
    this.statements.clear();
  }
}
