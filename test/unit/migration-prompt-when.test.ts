import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlite } from "../../src/store/sqlite-driver.ts";
import { MIGRATIONS } from "../../src/store/migrations.ts";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import { AutomationRepository } from "../../src/store/automation-repository.ts";
import { approvedDefinition } from "../../src/automations/approved-version.ts";
import { changesSince } from "../../src/automations/widening.ts";

const VERSION = MIGRATIONS.find((m) => m.name.includes("prompt_when"))!.version;

describe(`migration ${VERSION}: prompt_when`, () => {
  const dir = mkdtempSync(join(tmpdir(), "ocbt-prompt-when-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("automations stored with steps and a prompt keep running it after the steps (always); steps only or prompt only get the default", () => {
    const path = join(dir, "before.db");
    const old = openSqlite(path);
    old.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
    for (const m of MIGRATIONS.filter((m) => m.version < VERSION)) {
      old.exec(m.sql);
      old.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, 0)").run(m.version, m.name);
    }
    const steps = JSON.stringify([{ name: "test", run: "npm test", timeoutMs: 300000 }]);
    const definition = (prompt: string) => JSON.stringify({ version: 1, definition: { prompt, agent: "general", notify: "never", steps: JSON.parse(steps), triggers: [] } });
    const rows: [string, string, string | null, string | null][] = [
      ["au_both", "Fix what failed.", steps, definition("Fix what failed.")],
      ["au_steps", "", steps, definition("")],
      ["au_prompt", "Summarise.", null, null],
    ];
    for (const [id, prompt, stepsJson, approved] of rows) {
      old.prepare(`INSERT INTO automations (project_id, id, title, prompt, agent, notify, session_mode, overlap, catch_up, report_to, report_agent,
        enabled, created_by, created_at, updated_at, steps, approved) VALUES ('p', ?, 't', ?, 'general', 'never', 'fresh', 'skip', 'skip', 'ses_1', 'general', 1, 'ses_1', 1, 1, ?, ?)`).run(id, prompt, stepsJson, approved);
    }
    old.close();

    SqliteTaskStore.open({ path, projectId: "p" }).close();
    const db = openSqlite(path);
    const repo = new AutomationRepository(db, "p");
    const [both, stepsOnly, promptOnly] = ["au_both", "au_steps", "au_prompt"].map((id) => repo.automation(id)!);
    assert.deepEqual([both!.promptWhen, stepsOnly!.promptWhen, promptOnly!.promptWhen], ["always", undefined, undefined]);
    // The approved definition says the same: enabling it later shows no change it did not make.
    assert.equal(both!.approved!.definition.promptWhen, "always");
    assert.deepEqual(changesSince(both!.approved!.definition, approvedDefinition(both!, [])), []);
    assert.equal(stepsOnly!.approved!.definition.promptWhen, undefined);
    db.close();
  });
});
