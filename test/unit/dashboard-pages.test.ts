import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Automation, Run } from "../../src/automations/automation.ts";
import { AutomationRepository } from "../../src/store/automation-repository.ts";
import { ReadModel } from "../../src/store/reads/read-model.ts";
import { routePage } from "../../src/dashboard/dashboard-routes.ts";
import { durationChart } from "../../src/dashboard/duration-chart.ts";
import { escapeHtml, html } from "../../src/dashboard/html.ts";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import { SqliteEvidenceStore } from "../../src/store/sqlite-evidence-store.ts";
import { ProjectRepository } from "../../src/store/project-repository.ts";
import { runningTask } from "../store/task-fixtures.ts";

const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);
const HOUR = 3_600_000;

function automation(id: string, overrides: Partial<Automation> = {}): Automation {
  return {
    id, title: `Title of ${id}`, prompt: "REPLY ok", agent: "general", notify: "on_change", sessionMode: "fresh", overlap: "skip", catchUp: "skip",
    reportTo: "ses_parent", reportAgent: "build", enabled: true, createdBy: "ses_parent", createdAt: NOW - 48 * HOUR, updatedAt: NOW,
    runCount: 0, consecutiveFailures: 0, ...overrides,
  };
}

function run(automationId: string, n: number, overrides: Partial<Run> = {}): Omit<Run, "id"> {
  const startedAt = NOW - (10 - n) * HOUR;
  return { automationId, runNo: n, triggerId: "tr_hourly", firedBy: "schedule", plannedAt: startedAt, status: "completed", createdAt: startedAt, startedAt, endedAt: startedAt + 1000 * n, summary: `run ${n} ok`, ...overrides };
}

describe("dashboard pages", () => {
  let dir: string;
  let reader: ReadModel;
  const page = (path: string) => routePage(reader, new URL(path, "http://127.0.0.1"), NOW);

  before(() => {
    dir = mkdtempSync(join(tmpdir(), "dash-pages-"));
    const path = join(dir, "tasks.db");
    const store = SqliteTaskStore.open({ path, projectId: "proj" });
    const autos = new AutomationRepository(store.db, "proj");
    autos.saveAutomation(automation("au1", { title: `Nightly "<img src=x onerror=alert(1)>"`, consecutiveFailures: 2, runCount: 5 }));
    autos.saveTrigger({ id: "tr_hourly", automationId: "au1", spec: { kind: "interval", every: "1h", everyMs: HOUR }, createdAt: NOW - 48 * HOUR, nextAt: NOW + HOUR });
    autos.saveTrigger({ id: "tr_cron", automationId: "au1", spec: { kind: "cron", cron: "0 9 * * *", timezone: "Europe/Paris" }, createdAt: NOW - 48 * HOUR, nextAt: Date.UTC(2026, 10, 27, 8, 0, 0) });
    for (let n = 1; n <= 3; n++) autos.insertRun(run("au1", n));
    autos.insertRun(run("au1", 4, { status: "error", summary: "tests failed", taskId: "ses_run4" }));
    autos.insertRun(run("au1", 5, { status: "error", summary: "tests failed again", triggerId: undefined, plannedAt: undefined, firedBy: "manual", taskId: "ses_run4" }));
    autos.insertRun({ automationId: "au1", triggerId: "tr_hourly", firedBy: "schedule", plannedAt: NOW - 20 * HOUR, status: "missed", skipReason: "missed", missedCount: 3, createdAt: NOW - 20 * HOUR });
    autos.saveAutomation(automation("au3", { title: "On deploy" }));
    autos.saveTrigger({ id: "tr_watch", automationId: "au3", spec: { kind: "watch", paths: ["src/"], ignore: [], debounce: "1s", debounceMs: 1000 }, createdAt: NOW - HOUR });
    autos.saveTrigger({ id: "tr_hook", automationId: "au3", spec: { kind: "webhook", name: "deploy", url: "http://127.0.0.1:4097/hooks/deploy" }, createdAt: NOW - HOUR });
    store.db.prepare("INSERT INTO webhooks (name, project_id, trigger_id, secret, created_at) VALUES ('deploy', 'proj', 'tr_hook', 'whsec_never-on-the-page', 0)").run();
    store.db.prepare("INSERT INTO webhook_deliveries (project_id, trigger_id, delivery_id, received_at, status, summary) VALUES ('proj', 'tr_hook', 'd1', 0, 'pending', 'POST /hooks/deploy')").run();
    autos.insertRun(run("au3", 1, { triggerId: "tr_watch", firedBy: "watch", plannedAt: undefined, eventSummary: "src/a.ts and 3 more changed", eventFolded: 2 }));
    const failedRun = autos.insertRun(run("au3", 2, { triggerId: "tr_hook", firedBy: "webhook", plannedAt: undefined, eventSummary: "POST /hooks/deploy" }))!;
    store.db.prepare(`INSERT INTO channel_deliveries (project_id, id, status, attempts, next_attempt_at, created_at, ended_at, last_error, run_id, automation_id, channel, host, notice)
      VALUES ('proj', 'cd1', 'failed', 57, 0, ?, ?, 'HTTP 500', ?, 'au3', 'team', 'hooks.slack.com', '{}')`).run(NOW - HOUR, NOW - 60_000, failedRun.id);
    autos.saveAutomation(automation("au2", { enabled: false, pausedReason: "paused after 3 failed runs in a row", reportToGoneAt: NOW - HOUR }));
    store.save(runningTask("ses_claims", { description: "Claims green tests", status: "completed", result: "All tests pass.", createdAt: NOW - HOUR, promptedAt: NOW - HOUR, settledAt: NOW - 60_000 }));
    store.save(runningTask("ses_run4", { batchId: "auto_au1_4", createdAt: NOW - 2 * HOUR }));
    store.save(runningTask("ses_lookalike", { batchId: "auto_au9_1", createdAt: NOW - 2 * HOUR }));
    const evidence = new SqliteEvidenceStore(store.db, "proj");
    evidence.put({ taskId: "ses_claims", run: 0, kind: "command", key: "call_1", data: { callID: "call_1", command: "npm test", exitCode: 1, seq: 1 } });
    evidence.put({ taskId: "ses_claims", run: 0, kind: "contradiction", key: "all", data: [{ kind: "tests-failed", message: "The result says the tests pass, but npm test exited with 1" }] });
    new ProjectRepository(store.db).record("proj", "/home/u/my-app&<x>", NOW);
    store.close();
    const unnamed = SqliteTaskStore.open({ path, projectId: "4f1e9ab0hash" });
    unnamed.save(runningTask("ses_unnamed", { createdAt: NOW - HOUR }));
    unnamed.close();
    reader = ReadModel.open(path);
  });

  after(() => {
    reader?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("html escapes every interpolated value and keeps nested markup", () => {
    assert.equal(escapeHtml(`<a href="x">'&'</a>`), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
    assert.equal(html`<p title="${`"><script>`}">${["<b>", html`<i>ok</i>`]}</p>`.value, `<p title="&quot;&gt;&lt;script&gt;">&lt;b&gt;<i>ok</i></p>`);
  });

  it("the automation page shows the definition escaped, each trigger's next runs, the failure streak and the chart", () => {
    const { status, body } = page("/automation?project=proj&id=au1");
    assert.equal(status, 200);
    assert.match(body, /Nightly &quot;&lt;img src=x onerror=alert\(1\)&gt;&quot;/);
    assert.ok(!body.includes("<img"), "no markup from the title");
    assert.match(body, /2 consecutive failed runs/);
    assert.match(body, /every 1h/);
    assert.match(body, /cron 0 9 \* \* \*.*Europe\/Paris/);
    const nextHourly = [1, 2, 3].map((k) => `data-ts="${NOW + k * HOUR}"`);
    for (const ts of nextHourly) assert.ok(body.includes(ts), `next run ${ts}`);
    assert.equal((body.match(/<rect class="bar"/g) ?? []).length, 6, "five runs and one missed row");
    assert.match(body, /data-status="error"[^>]*fill="#d33"/);
  });

  it("event triggers in words, what waits for them, and the event that fired each run; never a webhook secret", () => {
    const { body } = page("/automation?project=proj&id=au3");
    assert.match(body, /when src\/ change/);
    assert.match(body, /POST http:\/\/127\.0\.0\.1:4097\/hooks\/deploy/);
    assert.match(body, /1 webhook deliveries wait for an OpenCode process of this project/);
    assert.match(body, /watch: src\/a\.ts and 3 more changed \(\+2 folded\)/);
    assert.ok(!body.includes("never-on-the-page"));
  });

  it("home lists a channel delivery that was given up under needs attention, by name and host", () => {
    const { body } = page("/?project=proj");
    assert.match(body, /On deploy run #2: not delivered to team \(hooks\.slack\.com\) after 57 attempts: HTTP 500/);
  });

  it("filters the run history by status, trigger and date", () => {
    const rows = (query: string) => (page(`/automation?project=proj&id=au1&${query}`).body.split('id="history"')[1]!.match(/data-run="\d+"/g) ?? []).length;
    assert.equal(rows(""), 6);
    assert.equal(rows("status=error"), 2);
    assert.equal(rows("trigger=manual"), 1);
    assert.equal(rows("trigger=tr_hourly&status=completed"), 3);
    const day = new Date(NOW - 20 * HOUR);
    const iso = `${day.getFullYear()}-${String(day.getMonth() + 1).padStart(2, "0")}-${String(day.getDate()).padStart(2, "0")}`;
    assert.equal(rows(`from=${iso}&to=${iso}&status=missed`), 1);
    assert.equal(rows("from=2030-01-01"), 0);
  });

  it("home counts a paused automation's reason, a report-to session gone and an evidence flag and a channel given up as needing attention", () => {
    const { body } = page("/?project=proj");
    assert.match(body, /<title>\(4\) Home/);
    assert.match(body, /Claims green tests: The result says the tests pass, but npm test exited with 1/);
    assert.match(body, /paused after 3 failed runs in a row/);
    assert.match(body, /the session it reports to \(ses_parent\) was deleted/);
  });

  it("the task page shows the evidence of each run", () => {
    const { body } = page("/task?project=proj&id=ses_claims");
    assert.match(body, /id="evidence"/);
    assert.match(body, /WARNING: The result says the tests pass, but npm test exited with 1/);
    assert.match(body, /npm test — exit 1/);
  });

  it("the project selector and pages name a project by its folder (full path as title), by its id when unknown", () => {
    const { body } = page("/?project=proj");
    assert.match(body, /<option value="proj" title="\/home\/u\/my-app&amp;&lt;x&gt;" selected>my-app&amp;&lt;x&gt;<\/option>/);
    assert.match(body, /<option value="4f1e9ab0hash" title="4f1e9ab0hash">4f1e9ab0hash<\/option>/);
    assert.match(page("/task?project=proj&id=ses_claims").body, /<dt>Project<\/dt><dd><span class="project" title="\/home\/u\/my-app&amp;&lt;x&gt;">my-app&amp;&lt;x&gt;<\/span>/);
    assert.match(page("/automation?project=proj&id=au1").body, /<dd><span class="project" title="\/home\/u\/my-app&amp;&lt;x&gt;">my-app/);
    assert.match(page("/task?project=4f1e9ab0hash&id=ses_unnamed").body, /<dt>Project<\/dt><dd><span class="project" title="4f1e9ab0hash">4f1e9ab0hash<\/span>/);
  });

  it("a database from before the projects table lists projects by id", () => {
    const oldDir = mkdtempSync(join(tmpdir(), "dash-old-"));
    const path = join(oldDir, "tasks.db");
    const store = SqliteTaskStore.open({ path, projectId: "p1" });
    store.save(runningTask("ses_1"));
    store.db.exec("DROP TABLE projects"); // as a version-8 database has it
    store.close();
    const old = ReadModel.open(path);
    try {
      assert.deepEqual(old.projects(), [{ id: "p1" }]);
    } finally {
      old.close();
      rmSync(oldDir, { recursive: true, force: true });
    }
  });

  it("a task page links the run it is in by the run's task_id, not by its batch id", () => {
    const batch = (id: string) => page(`/task?project=proj&id=${id}`).body.match(/<dt>Batch<\/dt><dd[^>]*>(.*?)<\/dd>/)![1];
    assert.match(batch("ses_run4")!, /auto_au1_4 — run 5 of <a href="[^"]*id=au1[^"]*">automation au1<\/a>/, "run 5 continued the session its batch id says run 4 began");
    assert.equal(batch("ses_lookalike"), "auto_au9_1", "a batch id shaped like a run name links nothing");
  });

  it("an unknown automation or task is a 404 page, not an error", () => {
    assert.equal(page("/automation?project=proj&id=nope").status, 404);
    assert.equal(page("/task?id=x").status, 404);
    assert.equal(page("/nowhere").status, 404);
  });

  it("the chart says so when there are no runs", () => {
    assert.match(durationChart([], NOW).value, /No runs to chart yet/);
  });
});
