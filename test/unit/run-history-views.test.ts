import { test } from "node:test";
import assert from "node:assert/strict";
import Database from "better-sqlite3";
import { main } from "../../src/cli/main.ts";
import { Store } from "../../src/store/store.ts";
import { ReadModel } from "../../src/store/reads/read-model.ts";
import { automationPage, readAutomation } from "../../src/dashboard/automation-page.ts";
import { runDayText } from "../../src/automations/run-day-text.ts";
import { automationFixture, tempDb } from "../helpers/automation-fixture.ts";
import { automationTools } from "../../src/tools/build-tools.ts";

const DAY_12 = Date.UTC(2026, 10, 12, 9);

/** A real database file: one automation whose 12 Nov runs (10 ok, 2 skipped) were folded, and 10 newer runs kept. */
async function foldedDatabase() {
  const db = tempDb();
  const f = automationFixture(db.path);
  const id = f.create({ title: "ping", prompt: "say ping", notify: "never", enabled: false }, [{ every: "1m" }]).id;
  f.close();
  const raw = new Database(db.path);
  const insert = raw.prepare(`INSERT INTO automation_runs (project_id, automation_id, fired_by, status, run_no, created_at, started_at, ended_at, summary)
    VALUES ('proj', ?, 'schedule', ?, ?, ?, ?, ?, 'fine')`);
  for (let i = 0; i < 12; i++) insert.run(id, i < 10 ? "completed" : "skipped", i < 10 ? i + 1 : null, DAY_12 + i * 60_000, DAY_12 + i * 60_000, DAY_12 + i * 60_000 + 500);
  for (let i = 0; i < 10; i++) insert.run(id, "completed", 100 + i, Date.now() - i * 60_000, Date.now() - i * 60_000, Date.now() - i * 60_000 + 500);
  raw.close();
  const store = Store.open({ path: db.path, projectId: "proj" });
  assert.equal(await store.runHistory.fold({ keepRuns: 10, now: Date.now() }), 12);
  store.close();
  return { db, id };
}

function cli(argv: string[]) {
  let stdout = "";
  let stderr = "";
  const code = main(argv, { stdout: (t: string) => void (stdout += t), stderr: (t: string) => void (stderr += t), env: {} } as never);
  return { code, stdout, stderr };
}

test("a folded day reads as one line: date, quiet runs by outcome, spend", async () => {
  const line = runDayText({ automationId: "a", day: "2026-11-12", completed: 1410, skipped: 2, missed: 0, costUsd: 0, requests: 0, firstAt: 0, lastAt: 0 });
  assert.match(line, /^12 Nov( 2026)?: 1,412 quiet runs \(1,410 ok, 2 skipped\), \$0\.00$/);
});

test("CLI runs shows the kept runs, then the folded days; --json gives them as foldedDays", async () => {
  const { db, id } = await foldedDatabase();
  try {
    const out = cli(["runs", id, "--db", db.path]);
    assert.equal(out.code, 0, out.stderr);
    assert.equal((out.stdout.match(/ completed /g) ?? []).length, 10, "the newest ten runs are listed whole");
    assert.match(out.stdout, /Older quiet runs, folded by day/);
    assert.match(out.stdout, /^- 12 Nov( 2026)?: 12 quiet runs \(10 ok, 2 skipped\), \$0\.00$/m);
    const json = JSON.parse(cli(["runs", id, "--db", db.path, "--json"]).stdout);
    assert.deepEqual(json.foldedDays.map((d: { day: string; completed: number; skipped: number }) => [d.day, d.completed, d.skipped]), [["2026-11-12", 10, 2]]);
  } finally {
    db.cleanup();
  }
});

test("the dashboard's automation page lists the folded days under the run history", async () => {
  const { db, id } = await foldedDatabase();
  const reader = ReadModel.open(db.path);
  try {
    const data = readAutomation(reader, "proj", new URLSearchParams({ id }))!;
    const body = automationPage(data, { projects: [], project: "proj", path: "/" }, Date.now()).value;
    assert.match(body, /<li data-day="2026-11-12">12 Nov( 2026)?: 12 quiet runs \(10 ok, 2 skipped\), \$0\.00<\/li>/);
  } finally {
    reader.close();
    db.cleanup();
  }
});

test("task_read lists the folded days after the recent runs", async () => {
  const db = tempDb();
  const f = automationFixture(db.path);
  try {
    const id = f.create({ title: "ping", prompt: "say ping", notify: "never", enabled: false }, [{ every: "1m" }]).id;
    const raw = new Database(db.path);
    const insert = raw.prepare("INSERT INTO automation_runs (project_id, automation_id, fired_by, status, created_at, ended_at) VALUES ('proj', ?, 'schedule', 'completed', ?, ?)");
    for (let i = 0; i < 12; i++) insert.run(id, DAY_12 + i, DAY_12 + i + 1);
    raw.close();
    const store = Store.open({ path: db.path, projectId: "proj" });
    await store.runHistory.fold({ keepRuns: 10, now: Date.now() });
    store.close();
    const read = await automationTools(f.automations, () => {}).task_read!.execute({ id } as never, { sessionID: "ses_p" } as never);
    assert.match(String(read), /Older quiet runs, folded by day \(UTC; option historyRuns\):\n- 12 Nov( 2026)?: 2 quiet runs \(2 ok\), \$0\.00$/);
  } finally {
    f.close();
    db.cleanup();
  }
});
