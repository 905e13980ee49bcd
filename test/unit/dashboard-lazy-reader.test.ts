import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { LazyReader, NO_DATABASE } from "../../src/dashboard/lazy-reader.ts";
import { migrate } from "../../src/store/migrations.ts";
import { openSqlite } from "../../src/store/sqlite-driver.ts";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import { runningTask } from "../store/task-fixtures.ts";

describe("the dashboard's reader of a database that may not exist yet", () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), "lazy-reader-"))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("waits while the file is missing, creating nothing", () => {
    const reader = new LazyReader(join(dir, "sub", "tasks.db"));
    assert.equal(reader.get(), undefined);
    assert.equal(reader.dataVersion(), NO_DATABASE);
    assert.equal(reader.problem, undefined);
    assert.equal(existsSync(join(dir, "sub")), false);
    reader.close();
  });

  it("keeps waiting while the plugin is creating the file (empty, or only the ledger), then opens it", () => {
    const path = join(dir, "creating.db");
    writeFileSync(path, "");
    const reader = new LazyReader(path);
    assert.equal(reader.get(), undefined, "an empty file");
    const db = openSqlite(path);
    db.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
    assert.equal(reader.get(), undefined, "the ledger without the tables");
    assert.equal(reader.problem, undefined, "not a problem: it is on its way");
    migrate(db);
    db.close();
    const store = SqliteTaskStore.open({ path, projectId: "p" });
    store.save(runningTask("ses_one"));
    store.close();
    assert.deepEqual(reader.get()?.tasks.list().map((t) => t.id), ["ses_one"]);
    assert.notEqual(reader.dataVersion(), NO_DATABASE);
    reader.close();
  });

  it("says why a file that is there cannot be read, and leaves it alone", () => {
    const foreign = join(dir, "foreign.db");
    const db = openSqlite(foreign);
    db.exec("PRAGMA journal_mode = DELETE; CREATE TABLE notes (body TEXT)"); // someone else's, not in WAL mode
    db.close();
    const corrupt = join(dir, "corrupt.db");
    writeFileSync(corrupt, "this is not sqlite ".repeat(500));
    const before = readdirSync(dir).sort();
    const foreignReader = new LazyReader(foreign);
    assert.equal(foreignReader.get(), undefined);
    assert.match(foreignReader.problem ?? "", /holds no background tasks tables/);
    const corruptReader = new LazyReader(corrupt);
    assert.equal(corruptReader.get(), undefined);
    assert.match(corruptReader.problem ?? "", /Move it aside/);
    assert.deepEqual(readdirSync(dir).sort(), before);
  });
});
