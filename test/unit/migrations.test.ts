import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlite } from "../../src/store/sqlite-driver.ts";
import { MIGRATIONS, appliedVersions } from "../../src/store/migrations.ts";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import { runningTask } from "../store/task-fixtures.ts";
import { AutomationRepository } from "../../src/store/automation-repository.ts";
import { neverApproved } from "../../src/automations/automation.ts";

describe("migrations", () => {
  const dir = mkdtempSync(join(tmpdir(), "ocbt-migrate-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("a database written by the first schema is upgraded in place, its tasks kept", () => {
    const path = join(dir, "v1.db");
    const old = openSqlite(path);
    old.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
    old.exec(MIGRATIONS[0].sql);
    old.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (1, 'v1', 0)").run();
    old.prepare(`INSERT INTO tasks (project_id, id, parent_session_id, batch_id, description, prompt, agent, model, parent_agent,
      status, is_forked, resume_count, tool_calls, last_tools, last_activity_at, created_at, prompted_at)
      VALUES ('p', 'ses_old', 'ses_parent', 'msg_1', 'old task', 'do it', 'general', '{"providerID":"a","modelID":"b"}', 'build',
      'completed', 0, 0, 0, '[]', 5, 5, 5)`).run();
    old.close();

    const store = SqliteTaskStore.open({ path, projectId: "p" });
    const task = store.get("ses_old")!;
    assert.equal(task.description, "old task");
    assert.equal(task.startedAt, undefined);
    store.save(runningTask("ses_new", { startedAt: 42 }));
    assert.equal(store.get("ses_new")!.startedAt, 42);
    store.close();
    const db = openSqlite(path);
    assert.deepEqual(appliedVersions(db), MIGRATIONS.map((m) => m.version));
    db.close();
  });

  it("migration 19: an unfinished run named by its task's batch id only gets the task_id link; ended and taskless runs are left", () => {
    const path = join(dir, "v18.db");
    const old = openSqlite(path);
    old.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
    for (const m of MIGRATIONS.filter((m) => m.version <= 18)) {
      old.exec(m.sql);
      old.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, 0)").run(m.version, m.name);
    }
    const task = (id: string, batch: string) => old.prepare(`INSERT INTO tasks (project_id, id, parent_session_id, batch_id, description, prompt, agent, model, parent_agent,
      status, is_forked, resume_count, tool_calls, last_tools, last_activity_at, created_at, prompted_at)
      VALUES ('p', ?, 'ses_parent', ?, 'run', 'do it', 'general', '{"providerID":"a","modelID":"b"}', 'build', 'running', 0, 0, 0, '[]', 5, 5, 5)`).run(id, batch);
    const run = (no: number, status: string) => old.prepare(`INSERT INTO automation_runs (project_id, automation_id, run_no, fired_by, status, created_at)
      VALUES ('p', 'au1', ?, 'manual', ?, 5)`).run(no, status);
    task("ses_crashed", "auto_au1_1");
    run(1, "running"); // its process died between saving the task and linking the run
    run(2, "completed"); // steps only: never had a task
    task("ses_other", "auto_au1_3");
    run(3, "error"); // ended: not touched
    old.close();

    SqliteTaskStore.open({ path, projectId: "p" }).close();
    const db = openSqlite(path);
    const links = db.prepare("SELECT run_no, task_id FROM automation_runs ORDER BY run_no").all().map((r) => [r.run_no, r.task_id]);
    assert.deepEqual(links, [[1, "ses_crashed"], [2, null], [3, null]]);
    db.close();
  });

  it("migration 29: automations stored before have no approval (enabling asks with all of it); one recorded is read back", () => {
    const path = join(dir, "v28.db");
    const old = openSqlite(path);
    old.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
    for (const m of MIGRATIONS.filter((m) => m.version <= 28)) {
      old.exec(m.sql);
      old.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, 0)").run(m.version, m.name);
    }
    for (const [id, enabled] of [["au_paused", 0], ["au_on", 1]] as const) {
      old.prepare(`INSERT INTO automations (project_id, id, title, prompt, agent, notify, session_mode, overlap, catch_up, report_to, report_agent,
        enabled, created_by, created_at, updated_at) VALUES ('p', ?, 'nightly', 'x', 'general', 'never', 'fresh', 'skip', 'skip', 'ses_1', 'general', ?, 'ses_1', 1, 1)`).run(id, enabled);
    }
    old.close();

    SqliteTaskStore.open({ path, projectId: "p" }).close();
    const db = openSqlite(path);
    const repo = new AutomationRepository(db, "p");
    const [paused, on] = [repo.automation("au_paused")!, repo.automation("au_on")!];
    assert.deepEqual([paused.approved, on.approved], [undefined, undefined]);
    assert.deepEqual([neverApproved(paused), neverApproved(on)], [true, false], "created disabled and never run: as before");
    const approved = { version: 3, definition: { prompt: "x", agent: "general", notify: "never" as const, triggers: [] } };
    repo.saveAutomation({ ...on, approved });
    assert.deepEqual(repo.automation("au_on")!.approved, approved);
    db.close();
  });
});
