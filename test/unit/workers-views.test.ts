import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Automation } from "../../src/automations/automation.ts";
import { AutomationRepository } from "../../src/store/automation-repository.ts";
import { main } from "../../src/cli/main.ts";
import type { Task } from "../../src/core/task.ts";
import { routePage } from "../../src/dashboard/dashboard-routes.ts";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import { ReadModel } from "../../src/store/reads/read-model.ts";
import type { ProjectWorker } from "../../src/store/reads/worker-reads.ts";
import { WorkerHealthRepository } from "../../src/store/worker-health-repository.ts";
import { runningTask } from "../store/task-fixtures.ts";

process.env.TZ = "UTC"; // the CLI prints local times

const NOW = Date.UTC(2026, 10, 26, 14, 0, 0);
const DOWN_SINCE = Date.UTC(2026, 10, 26, 13, 52, 0);
const MIN = 60_000;
const BOX_ERROR = "HTTP 502 <html>bad gateway</html>";

function task(id: string, overrides: Partial<Task> = {}): Task {
  return runningTask(id, { description: `Task ${id}`, createdAt: NOW - 30 * MIN, promptedAt: NOW - 30 * MIN, startedAt: NOW - 30 * MIN, progress: { toolCalls: 1, lastTools: ["bash"], lastActivityAt: NOW - MIN }, ...overrides });
}

function automation(id: string, overrides: Partial<Automation> = {}): Automation {
  return {
    id, title: `Title of ${id}`, prompt: "REPLY ok", agent: "general", notify: "on_change", sessionMode: "fresh", overlap: "skip", catchUp: "skip",
    reportTo: "ses_parent", reportAgent: "build", enabled: true, createdBy: "ses_parent", createdAt: NOW - 48 * 60 * MIN, updatedAt: NOW,
    runCount: 0, consecutiveFailures: 0, ...overrides,
  };
}

/**
 * proj: worker box (unreachable, 3 running, 1 queued), spare (healthy, 1 running), idle (unauthorized, nothing on it), one local task;
 * other: its own worker box (healthy, 1 running); plain: no workers.
 */
function seed(path: string): void {
  const proj = SqliteTaskStore.open({ path, projectId: "proj" });
  const health = new WorkerHealthRepository(proj.db, "proj");
  health.save({ name: "box", host: "10.0.0.5:4096", capacity: 8, state: "unreachable", since: DOWN_SINCE, error: BOX_ERROR, checkedAt: NOW - 5000 });
  health.save({ name: "spare", host: "spare.lan:4096", capacity: 4, state: "healthy", since: NOW - 60 * MIN, checkedAt: NOW - 5000 });
  health.save({ name: "idle", host: "idle.lan", capacity: 2, state: "unauthorized", since: NOW - 2 * MIN, error: "401: check IDLE_PASSWORD", checkedAt: NOW - 5000 });
  proj.save(task("ses_box1", { worker: "box" }));
  proj.save(task("ses_box2", { worker: "box", createdAt: NOW - 29 * MIN }));
  proj.save(task("ses_box3", { worker: "box", status: "resumed", createdAt: NOW - 28 * MIN }));
  proj.save(task("ses_boxq", { worker: "box", status: "queued", startedAt: undefined, createdAt: NOW - 27 * MIN }));
  proj.save(task("ses_boxdone", { worker: "box", status: "completed", result: "done on box", settledAt: NOW - 40 * MIN, createdAt: NOW - 50 * MIN }));
  proj.save(task("ses_spare1", { worker: "spare", createdAt: NOW - 26 * MIN }));
  proj.save(task("ses_local1", { createdAt: NOW - 25 * MIN }));
  const autos = new AutomationRepository(proj.db, "proj");
  autos.saveAutomation(automation("auBox", { worker: "box" }));
  autos.saveAutomation(automation("auAuto", { worker: "auto" }));
  autos.saveAutomation(automation("auHere"));
  const run = (runNo: number, taskId: string | undefined) => autos.insertRun({ automationId: "auBox", runNo, firedBy: "manual", status: taskId ? "completed" : "skipped", createdAt: NOW - (10 - runNo) * MIN, ...(taskId ? { taskId } : { skipReason: "overlap" }) });
  run(1, "ses_boxdone");
  run(2, "ses_local1");
  run(3, undefined);
  run(4, "ses_gone"); // its task removed by retention: where it ran is unknown
  proj.close();
  const other = SqliteTaskStore.open({ path, projectId: "other" });
  new WorkerHealthRepository(other.db, "other").save({ name: "box", host: "box.other:4096", capacity: 2, state: "healthy", since: NOW - MIN, checkedAt: NOW });
  other.save(task("ses_other1", { worker: "box" }));
  other.close();
  const plain = SqliteTaskStore.open({ path, projectId: "plain" });
  plain.save(task("ses_plain1"));
  plain.close();
}

/** A database as it was before migration 15: no worker columns, no worker_health. */
function seedBefore15(path: string): void {
  const store = SqliteTaskStore.open({ path, projectId: "proj" });
  store.save(task("ses_old1", { status: "completed", result: "ok", settledAt: NOW - MIN }));
  const autos = new AutomationRepository(store.db, "proj");
  autos.saveAutomation(automation("auOld"));
  autos.insertRun({ automationId: "auOld", runNo: 1, firedBy: "manual", status: "completed", createdAt: NOW - MIN, taskId: "ses_old1" });
  store.db.exec("DROP TABLE worker_health; ALTER TABLE tasks DROP COLUMN worker; ALTER TABLE automations DROP COLUMN worker; DELETE FROM schema_migrations WHERE version >= 15");
  store.close();
}

function cli(...argv: string[]): { code: number; stdout: string; stderr: string } {
  const out = { stdout: "", stderr: "" };
  const code = main(argv, { stdout: (t) => void (out.stdout += t), stderr: (t) => void (out.stderr += t), env: {}, now: () => NOW });
  return { code: code as number, ...out };
}

describe("workers in the read model, the dashboard and the CLI", () => {
  let dir: string;
  let db: string;
  let oldDb: string;
  let reader: ReadModel;
  const page = (path: string) => routePage(reader, new URL(path, "http://127.0.0.1"), NOW);
  const row = (body: string, attr: string) => body.match(new RegExp(`<tr ${attr}>[\\s\\S]*?</tr>`))?.[0] ?? "";

  before(() => {
    dir = mkdtempSync(join(tmpdir(), "workers-views-"));
    db = join(dir, "tasks.db");
    oldDb = join(dir, "old.db");
    seed(db);
    seedBefore15(oldDb);
    reader = ReadModel.open(db);
  });

  after(() => {
    reader?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe("ReadModel", () => {
    it("lists each project's workers with the tasks each runs (running and resumed) and has queued", () => {
      const brief = (w: ProjectWorker) => [w.projectId, w.name, w.host, w.state, w.capacity, w.running, w.queued];
      assert.deepEqual(reader.workers.list("proj").map(brief), [
        ["proj", "box", "10.0.0.5:4096", "unreachable", 8, 3, 1],
        ["proj", "idle", "idle.lan", "unauthorized", 2, 0, 0],
        ["proj", "spare", "spare.lan:4096", "healthy", 4, 1, 0],
      ]);
      assert.deepEqual(reader.workers.list().map(brief).map((w) => w.slice(0, 2)), [["other", "box"], ["proj", "box"], ["proj", "idle"], ["proj", "spare"]]);
      assert.equal(reader.workers.list("other")[0]!.running, 1, "another project's tasks on a worker of the same name count there only");
      assert.deepEqual(reader.workers.list("plain"), []);
      const box = reader.workers.list("proj")[0]!;
      assert.equal(box.since, DOWN_SINCE);
      assert.equal(box.error, BOX_ERROR);
      assert.equal(box.checkedAt, NOW - 5000);
      assert.equal("error" in reader.workers.list("proj")[2]!, false, "a healthy worker has no error");
    });

    it("tasks carry their worker; runs carry their task's worker (null: local; absent: no task, or it is gone)", () => {
      assert.equal(reader.tasks.get("proj", "ses_box1")?.worker, "box");
      assert.equal(reader.tasks.get("proj", "ses_local1")?.worker, undefined);
      assert.deepEqual(reader.tasks.active("proj").map((t) => t.worker ?? "local"), ["box", "box", "box", "box", "spare", "local"]);
      const runs = reader.automations.runs("proj", "auBox");
      assert.deepEqual(runs.map((r) => [r.runNo, r.taskWorker]), [[4, undefined], [3, undefined], [2, null], [1, "box"]]);
      assert.deepEqual(reader.automations.recentRuns("proj").map((r) => r.taskWorker), [undefined, undefined, null, "box"]);
      assert.deepEqual(reader.automations.runs("proj", "auBox", { status: "skipped" }).map((r) => r.runNo), [3], "the run filter still applies");
    });

    it("a database from before migration 15 has no workers, and its runs' tasks ran here", () => {
      const old = ReadModel.open(oldDb);
      try {
        assert.deepEqual(old.workers.list(), []);
        assert.deepEqual(old.automations.runs("proj", "auOld").map((r) => r.taskWorker), [null]);
        assert.deepEqual(old.automations.recentRuns().map((r) => r.taskWorker), [null]);
      } finally {
        old.close();
      }
    });
  });

  describe("dashboard pages", () => {
    it("home lists the project's workers: host, health since when and why, running / capacity, queued", () => {
      const { status, body } = page("/?project=proj");
      assert.equal(status, 200);
      assert.match(body, /<section id="workers"><h2>Workers \(3\)<\/h2>/);
      const box = row(body, 'data-worker="box"');
      assert.match(box, /<td>box<\/td><td class="id">10\.0\.0\.5:4096<\/td>/);
      assert.match(box, new RegExp(`class="status s-unreachable">unreachable</span> since <time datetime="${new Date(DOWN_SINCE).toISOString()}"`));
      assert.ok(box.includes("(HTTP 502 &lt;html&gt;bad gateway&lt;/html&gt;)"), "the error, escaped");
      assert.match(box, /<td>3 \/ 8<\/td><td>1<\/td>/);
      assert.match(row(body, 'data-worker="spare"'), /s-healthy">healthy<\/span> since .*<td>1 \/ 4<\/td><td>0<\/td>/s);
      assert.doesNotMatch(body, /<th>project<\/th>/, "one project: no project column");
    });

    it("an unhealthy worker holding running tasks needs attention (counted in the title); one holding none does not", () => {
      const { body } = page("/?project=proj");
      const attention = body.split('id="attention"')[1]!.split("</section>")[0]!;
      assert.match(attention, new RegExp(`<span class="tag">worker</span> <a href="#workers">worker box unreachable since <time datetime="${new Date(DOWN_SINCE).toISOString()}"[^>]*>[^<]+</time>; 3 running tasks held \\(HTTP 502 &lt;html&gt;`));
      assert.doesNotMatch(attention, /worker idle/, "unauthorized but running nothing");
      assert.doesNotMatch(attention, /worker spare/);
      assert.match(body, /<title>\(1\) Home/);
    });

    it("every task row says where it runs; a task held on an unhealthy worker says since when", () => {
      const { body } = page("/?project=proj");
      const active = body.split('id="active"')[1]!.split("</section>")[0]!;
      assert.match(row(active, 'data-task="ses_box1"'), /<span class="where">worker box<\/span><br><strong class="s-error worker-held">unreachable since <time/);
      assert.match(row(active, 'data-task="ses_spare1"'), /<span class="where">worker spare<\/span><\/td>/);
      assert.match(row(active, 'data-task="ses_local1"'), /<span class="where">local<\/span><\/td>/);
      const recent = body.split('id="recent"')[1]!.split("</section>")[0]!;
      assert.match(row(recent, 'data-task="ses_boxdone"'), /<span class="where">worker box<\/span><\/td>/, "settled: where it ran, no held note");
    });

    it("no workers section for a project without workers; all projects name each worker's project", () => {
      assert.doesNotMatch(page("/?project=plain").body, /id="workers"/);
      const all = page("/").body;
      assert.match(all, /<h2>Workers \(4\)<\/h2>.*<th>project<\/th>/s);
      assert.match(row(all, 'data-worker="box"'), /box\.other:4096.*<td>1 \/ 2<\/td>.*title="other"/s);
    });

    it("the task page says where it runs in its header facts, with the worker's health and how to open it there", () => {
      const box = page("/task?project=proj&id=ses_box1").body;
      assert.match(box, /<dt>Runs on<\/dt><dd id="task-where">worker box <span class="id">10\.0\.0\.5:4096<\/span> — <span class="status s-unreachable">unreachable<\/span> since <time/);
      assert.match(box, /Held: it goes on if the worker answers again within the grace period/);
      assert.match(box, /<code>opencode --session ses_box1<\/code> on worker box \(10\.0\.0\.5:4096\), in its checkout of the project/);
      const done = page("/task?project=proj&id=ses_boxdone").body;
      assert.match(done, /id="task-where">worker box/);
      assert.doesNotMatch(done, /Held:/, "a settled task is not held");
      const local = page("/task?project=proj&id=ses_local1").body;
      assert.match(local, /<dt>Runs on<\/dt><dd id="task-where">local<\/dd>/);
      assert.match(local, /<code>opencode --session ses_local1<\/code> \(in the project&#39;s directory\)/);
    });

    it("the automation page shows its worker, and under each run with a task where that task ran", () => {
      const body = page("/automation?project=proj&id=auBox").body;
      assert.match(body, /<dt>Worker<\/dt><dd id="automation-worker">worker box<\/dd>/);
      const history = body.split('id="history"')[1]!;
      const where = (n: number) => row(history, `data-run="${n}"`).match(/<div class="small where">([^<]*)<\/div>/)?.[1];
      assert.deepEqual([1, 2, 3, 4].map(where), ["worker box", "local", undefined, undefined]);
      assert.match(page("/automation?project=proj&id=auAuto").body, /id="automation-worker">auto: this OpenCode until its slots are full/);
      assert.doesNotMatch(page("/automation?project=proj&id=auHere").body, /<dt>Worker<\/dt>/);
      const runs = page("/?project=proj").body.split('id="runs"')[1]!;
      assert.match(runs, /1 \(manual\)<div class="small where">worker box<\/div>/);
    });

    it("a database from before migration 15 renders home, task and automation pages", () => {
      const old = ReadModel.open(oldDb);
      try {
        const get = (path: string) => routePage(old, new URL(path, "http://127.0.0.1"), NOW);
        const home = get("/?project=proj");
        assert.equal(home.status, 200);
        assert.doesNotMatch(home.body, /id="workers"/);
        assert.match(get("/task?project=proj&id=ses_old1").body, /id="task-where">local</);
        assert.match(get("/automation?project=proj&id=auOld").body, /<div class="small where">local<\/div>/);
      } finally {
        old.close();
      }
    });
  });

  describe("CLI", () => {
    it("list has a WHERE column: local or the worker's name; --json carries worker", () => {
      const { code, stdout, stderr } = cli("list", "--project", "proj", "--db", db);
      assert.equal(code, 0, stderr);
      const [header, ...rows] = stdout.trimEnd().split("\n");
      assert.match(header!, /^ID\s+STATUS\s+AGENT\s+WHERE\s+PROJECT\s+CREATED\s+SPENT\s+DESCRIPTION$/);
      const where = (id: string) => rows.find((r) => r.startsWith(id))?.split(/\s{2,}/)[3];
      assert.deepEqual(["ses_box1", "ses_spare1", "ses_local1"].map(where), ["box", "spare", "local"]);
      const tasks = JSON.parse(cli("list", "--json", "--db", db).stdout) as Task[];
      assert.equal(tasks.find((t) => t.id === "ses_box1")?.worker, "box");
    });

    it("show says where the task runs, with the worker's host and health", () => {
      const box = cli("show", "ses_box1", "--db", db);
      assert.equal(box.code, 0, box.stderr);
      assert.match(box.stdout, /\n {2}Runs on {6}worker box \(10\.0\.0\.5:4096, unreachable since 2026-11-26 13:52:00: HTTP 502 <html>bad gateway<\/html>\)\n/);
      assert.match(cli("show", "ses_spare1", "--db", db).stdout, /Runs on {6}worker spare \(spare\.lan:4096, healthy since 2026-11-26 13:00:00\)\n/);
      assert.match(cli("show", "ses_local1", "--db", db).stdout, /Runs on {6}local\n/);
    });

    it("workers prints each worker's host, health, since, running/capacity, queued and error", () => {
      const { code, stdout, stderr } = cli("workers", "--project", "proj", "--db", db);
      assert.equal(code, 0, stderr);
      assert.deepEqual(stdout.trimEnd().split("\n").map((line) => line.split(/\s{2,}/)), [
        ["NAME", "HOST", "HEALTH", "SINCE", "RUNNING/CAPACITY", "QUEUED", "ERROR", "PROJECT"],
        ["box", "10.0.0.5:4096", "unreachable", "2026-11-26 13:52:00", "3/8", "1", BOX_ERROR, "proj"],
        ["idle", "idle.lan", "unauthorized", "2026-11-26 13:58:00", "0/2", "0", "401: check IDLE_PASSWORD", "proj"],
        ["spare", "spare.lan:4096", "healthy", "2026-11-26 13:00:00", "1/4", "0", "-", "proj"],
      ]);
      assert.equal(cli("workers", "--db", db).stdout.trimEnd().split("\n").length, 5, "every project's workers without --project");
    });

    it("workers --json gives every field; none configured says so", () => {
      const workers = JSON.parse(cli("workers", "--json", "--project", "other", "--db", db).stdout) as ProjectWorker[];
      assert.deepEqual(workers, [{ projectId: "other", name: "box", host: "box.other:4096", capacity: 2, state: "healthy", since: NOW - MIN, checkedAt: NOW, running: 1, queued: 0 }]);
      for (const argv of [["--project", "plain", "--db", db], ["--db", oldDb]]) {
        const { code, stdout } = cli("workers", ...argv);
        assert.equal(code, 0);
        assert.match(stdout, /^No workers configured\./);
      }
      assert.deepEqual(JSON.parse(cli("workers", "--json", "--db", oldDb).stdout), []);
    });

    it("workers takes no argument and no task filters; help lists it", () => {
      assert.equal(cli("workers", "box", "--db", db).code, 2);
      assert.match(cli("workers", "--status", "running").stderr, /--status does not apply to workers/);
      assert.match(cli("--help").stdout, /workers \[--project <id>\] \[--json\]/);
    });
  });
});
