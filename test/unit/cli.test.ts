import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { main } from "../../src/cli/main.ts";
import type { Task } from "../../src/core/task.ts";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import { runningTask } from "../store/task-fixtures.ts";
import { MIGRATIONS } from "../../src/store/migrations.ts";

process.env.TZ = "UTC"; // the CLI prints local times

const T0 = Date.UTC(2025, 10, 24, 16, 0, 0);
let dir: string;
let db: string;

function task(id: string, overrides: Partial<Task> = {}): Task {
  return runningTask(id, {
    parentSessionID: "ses_parent1",
    description: `Task ${id}`,
    prompt: `Do ${id}`,
    progress: { toolCalls: 0, lastTools: [], lastActivityAt: T0 },
    createdAt: T0,
    promptedAt: T0,
    ...overrides,
  });
}

function seed(path: string): void {
  const alpha = SqliteTaskStore.open({ path, projectId: "proj_alpha" });
  const beta = SqliteTaskStore.open({ path, projectId: "proj_beta" });
  alpha.save(task("ses_abc111", { description: "Find the flaky test", status: "completed", result: "It is io.test.ts", settledAt: T0 + 65_000 }));
  alpha.save(task("ses_abc222", { createdAt: T0 + 60_000, parentSessionID: "ses_parent2" }));
  alpha.save(task("ses_cleared", { createdAt: T0 + 90_000, status: "error", error: "boom", clearedAt: T0 + 99_000 }));
  beta.save(task("ses_beta01", { createdAt: T0 + 30_000, status: "cancelled", agent: "explore" }));
  alpha.appendEvent({ taskId: "ses_abc111", at: T0, kind: "launched", detail: "general" });
  alpha.appendEvent({ taskId: "ses_abc111", at: T0 + 65_000, kind: "status:completed" });
  alpha.appendEvent({ taskId: "ses_abc111", at: T0 + 66_000, kind: "notified", detail: "wake" });
  alpha.enqueueNotification({ id: "n1", parentSessionID: "ses_parent1", taskId: "ses_abc111", text: "done", wake: true, createdAt: T0 + 65_000 });
  alpha.markDelivered("n1", T0 + 66_000);
  alpha.close();
  beta.close();
}

type Run = { code: number; stdout: string; stderr: string };

function run(argv: string[], env: Record<string, string | undefined> = {}): Run {
  const out = { stdout: "", stderr: "" };
  const code = main(argv, {
    stdout: (text) => void (out.stdout += text),
    stderr: (text) => void (out.stderr += text),
    env,
    now: () => T0 + 3_600_000,
  });
  assert.equal(typeof code, "number", "only proposals approve|reject waits");
  return { code: code as number, ...out };
}

const runDb = (...argv: string[]) => run([...argv, "--db", db]);
const lines = (text: string) => text.trimEnd().split("\n");

describe("opencode-errands CLI", () => {
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "obt-cli-"));
    db = join(dir, "tasks.db");
    seed(db);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("list prints a table of every project's tasks, oldest first, without cleared ones", () => {
    const { code, stdout, stderr } = runDb("list");
    assert.equal(code, 0, stderr);
    const [header, ...rows] = lines(stdout);
    assert.match(header!, /^ID\s+STATUS\s+AGENT\s+WHERE\s+PROJECT\s+CREATED\s+SPENT\s+DESCRIPTION$/);
    assert.deepEqual(
      rows.slice(0, 3).map((row) => row.split(/\s{2,}/).slice(0, 6)),
      [
        ["ses_abc111", "completed", "general", "local", "proj_alpha", "2025-11-24 16:00:00"],
        ["ses_beta01", "cancelled", "explore", "local", "proj_beta", "2025-11-24 16:00:30"],
        ["ses_abc222", "running", "general", "local", "proj_alpha", "2025-11-24 16:01:00"],
      ],
    );
    assert.match(stdout, /Find the flaky test/);
    assert.doesNotMatch(stdout, /ses_cleared/);
    assert.equal(rows.at(-1), "3 tasks: 1 completed, 1 cancelled, 1 running");
  });

  it("list --all includes cleared tasks, marked as such", () => {
    const { stdout } = runDb("list", "--all");
    assert.match(stdout, /ses_cleared\s+error \(cleared\)/);
  });

  it("list --json gives whole tasks with their project for scripts", () => {
    const { code, stdout } = runDb("list", "--json");
    assert.equal(code, 0);
    const tasks = JSON.parse(stdout) as (Task & { projectId: string })[];
    assert.deepEqual(
      tasks.map((t) => [t.projectId, t.id]),
      [
        ["proj_alpha", "ses_abc111"],
        ["proj_beta", "ses_beta01"],
        ["proj_alpha", "ses_abc222"],
      ],
    );
    assert.deepEqual(tasks[0], { projectId: "proj_alpha", ...task("ses_abc111", { description: "Find the flaky test", status: "completed", result: "It is io.test.ts", settledAt: T0 + 65_000 }) });
  });

  it("list filters by project, status and parent session", () => {
    const ids = (...argv: string[]) => (JSON.parse(runDb("list", "--json", ...argv).stdout) as Task[]).map((t) => t.id);
    assert.deepEqual(ids("--project", "proj_beta"), ["ses_beta01"]);
    assert.deepEqual(ids("--status", "running,cancelled"), ["ses_beta01", "ses_abc222"]);
    assert.deepEqual(ids("--status", "running", "--status", "completed"), ["ses_abc111", "ses_abc222"]);
    assert.deepEqual(ids("--parent", "ses_parent2"), ["ses_abc222"]);
    assert.deepEqual(ids("--project", "proj_alpha", "--status", "error", "--all"), ["ses_cleared"]);
  });

  it("list says so when nothing matches", () => {
    const { code, stdout } = runDb("list", "--project", "proj_none");
    assert.equal(code, 0);
    assert.match(stdout, /^No tasks match these filters\. Cleared tasks are hidden; add --all/);
  });

  it("show accepts a unique id prefix and prints the task and its timeline", () => {
    const { code, stdout, stderr } = runDb("show", "ses_abc1");
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^Task ses_abc111\n/);
    assert.match(stdout, /Project {6}proj_alpha/);
    assert.match(stdout, /Status {7}completed/);
    assert.match(stdout, /Result\n {2}It is io\.test\.ts/);
    const timeline = lines(stdout.slice(stdout.indexOf("Timeline")));
    assert.deepEqual(timeline, [
      "Timeline",
      "  2025-11-24 16:00:00      +0s  launched          general",
      "  2025-11-24 16:01:05  +1m 05s  status:completed",
      "  2025-11-24 16:01:06  +1m 06s  notified          wake",
    ]);
  });

  it("show accepts a prefix without ses_, as the tools do", () => {
    const { code, stdout, stderr } = runDb("show", "abc1");
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^Task ses_abc111\n/);
    assert.match(runDb("show", "abc").stderr, /'abc' matches 2 tasks/);
    assert.match(runDb("show", "zzz").stderr, /No task has an id starting with 'zzz'/);
  });

  it("show --json includes the events", () => {
    const shown = JSON.parse(runDb("show", "ses_abc111", "--json").stdout);
    assert.equal(shown.projectId, "proj_alpha");
    assert.deepEqual(
      shown.events.map((e: { kind: string }) => e.kind),
      ["launched", "status:completed", "notified"],
    );
  });

  it("show explains an ambiguous prefix and an unknown id, exit 1", () => {
    const ambiguous = runDb("show", "ses_abc");
    assert.equal(ambiguous.code, 1);
    assert.match(ambiguous.stderr, /'ses_abc' matches 2 tasks; give more of the id:\n {2}ses_abc111 {2}\(proj_alpha\)\n {2}ses_abc222/);
    const unknown = runDb("show", "ses_zzz");
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /No task has an id starting with 'ses_zzz'\. Run `opencode-errands list --all`/);
  });

  it("export --json dumps tasks (cleared too), events and notifications", () => {
    const { code, stdout } = runDb("export", "--json");
    assert.equal(code, 0);
    const dump = JSON.parse(stdout);
    assert.equal(dump.format, "opencode-errands-export");
    assert.deepEqual(dump.schemaVersions, MIGRATIONS.map((m) => m.version));
    assert.equal(dump.exportedAt, new Date(T0 + 3_600_000).toISOString());
    assert.equal(dump.tasks.length, 4);
    assert.equal(dump.events.length, 3);
    assert.deepEqual(dump.notifications, [
      { projectId: "proj_alpha", id: "n1", parentSessionID: "ses_parent1", taskId: "ses_abc111", text: "done", wake: true, createdAt: T0 + 65_000, deliveredAt: T0 + 66_000 },
    ]);
  });

  it("reads the default path under XDG_DATA_HOME", () => {
    const dataHome = join(dir, "xdg");
    seed(join(dataHome, "opencode-errands", "errands.db"));
    const { code, stdout } = run(["list", "--json"], { XDG_DATA_HOME: dataHome });
    assert.equal(code, 0);
    assert.equal(JSON.parse(stdout).length, 3);
  });

  it("a missing database: exit 1, names the path and what to do", () => {
    const missing = join(dir, "nowhere", "tasks.db");
    const { code, stdout, stderr } = run(["list", "--db", missing]);
    assert.equal(code, 1);
    assert.equal(stdout, "");
    assert.ok(stderr.includes(missing));
    assert.match(stderr, /no database yet.*first runs a background task/i);
    assert.match(stderr, /--db <path>/);
  });

  it("a corrupt database: exit 1, says to move it aside, leaves it unchanged", () => {
    const corrupt = join(dir, "corrupt.db");
    writeFileSync(corrupt, "this is not sqlite ".repeat(500));
    const before = readFileSync(corrupt);
    const { code, stderr } = run(["list", "--db", corrupt]);
    assert.equal(code, 1);
    assert.match(stderr, /Move it aside/);
    assert.ok(readFileSync(corrupt).equals(before));
  });

  it("reading leaves the database file unchanged", () => {
    const before = readFileSync(db);
    runDb("list");
    runDb("export");
    assert.ok(readFileSync(db).equals(before));
  });

  it("wrong usage exits 2 with a pointer to --help", () => {
    const cases: [string[], RegExp][] = [
      [[], /No command given/],
      [["frob"], /Unknown command 'frob'\. Commands: list, show, export, dashboard, automations, runs, webhooks, proposals, workers, costs, worktrees\./],
      [["list", "--status", "done"], /Unknown status 'done'\. Statuses: queued, running, resumed, completed, error, cancelled\./],
      [["show"], /show needs a task id/],
      [["show", "a", "b"], /show takes one task id/],
      [["show", "a", "--status", "running"], /--status does not apply to show/],
      [["list", "extra"], /Unexpected argument 'extra' for list/],
      [["list", "--bogus"], /Unknown option '--bogus'\./],
      [["dashboard", "--port", "http"], /--port http is not a port/],
      [["dashboard", "--port", "70000"], /--port 70000 is not a port/],
      [["list", "--port", "1"], /--port does not apply to list/],
    ];
    for (const [argv, message] of cases) {
      const result = run(argv);
      assert.equal(result.code, 2, `exit code for ${argv.join(" ")}`);
      assert.match(result.stderr, message);
      assert.match(result.stderr, /Run `opencode-errands --help` for usage\./);
    }
  });

  it("--help and help print usage, exit 0", () => {
    for (const argv of [["--help"], ["-h"], ["help"], ["list", "--help"]]) {
      const { code, stdout } = run(argv);
      assert.equal(code, 0);
      assert.match(stdout, /^opencode-errands: inspect/);
      assert.match(stdout, /list \[--project <id>\]/);
      assert.match(stdout, /Exit codes: 0 success, 1 failure/);
    }
  });

  it("the bin launcher runs the CLI under plain Node and passes the exit code on", () => {
    const bin = join(import.meta.dirname, "..", "..", "bin", "opencode-errands.mjs");
    const ok = spawnSync(process.execPath, [bin, "list", "--db", db], { encoding: "utf8", env: { ...process.env, TZ: "UTC" } });
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /ses_abc111\s+completed/);
    const bad = spawnSync(process.execPath, [bin, "frob"], { encoding: "utf8" });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /Unknown command 'frob'/);
  });
});
