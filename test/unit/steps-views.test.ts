import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Automation, Run } from "../../src/automations/automation.ts";
import { AutomationRepository } from "../../src/store/automation-repository.ts";
import { parseSteps } from "../../src/automations/step-spec.ts";
import { main } from "../../src/cli/main.ts";
import { routePage } from "../../src/dashboard/dashboard-routes.ts";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import { ReadModel } from "../../src/store/reads/read-model.ts";
import { runLine } from "../../src/automations/automation-text.ts";

const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);

const automation: Automation = {
  id: "austeps1", title: "tests pass", prompt: "", steps: parseSteps([{ name: "pull", run: "git pull --ff-only", timeout: "2m" }, { name: "test", run: "npm test", continue_on_error: false }]),
  agent: "general", notify: "on_change", sessionMode: "fresh", overlap: "skip", catchUp: "skip", reportTo: "ses_parent", reportAgent: "build",
  enabled: true, createdBy: "ses_parent", createdAt: NOW - 3_600_000, updatedAt: NOW, runCount: 2, consecutiveFailures: 1,
};

const failed: Omit<Run, "id"> = {
  automationId: "austeps1", runNo: 1, firedBy: "manual", status: "error", createdAt: NOW - 60_000, startedAt: NOW - 60_000, endedAt: NOW - 50_000,
  summary: 'Step "test" failed: `npm test` exited with code 1 after 9.0s.', stepsBy: "h:1:n",
  steps: [
    { name: "pull", run: "git pull --ff-only", status: "passed", exitCode: 0, durationMs: 400, tail: "Already up to date." },
    { name: "test", run: "npm test", status: "failed", exitCode: 1, durationMs: 9000, tail: "not ok 3 - <b>parser</b>\n1 failing" },
  ],
};
const retried: Omit<Run, "id"> = {
  automationId: "austeps1", runNo: 3, firedBy: "manual", status: "completed", createdAt: NOW - 4000, startedAt: NOW - 4000, endedAt: NOW - 3000, summary: "Steps: 2 of 2 passed.", stepsBy: "h:1:n",
  steps: [
    { name: "pull", run: "git pull --ff-only", status: "passed", exitCode: 0, durationMs: 400 },
    { name: "test", run: "npm test", status: "passed", exitCode: 0, durationMs: 900, tail: "ok", tries: [{ status: "failed", exitCode: 1, durationMs: 800, tail: "flake <i>1</i>" }, { status: "timed_out", exitCode: 124, durationMs: 60000 }] },
  ],
};
const running: Omit<Run, "id"> = {
  automationId: "austeps1", runNo: 2, firedBy: "manual", status: "running", createdAt: NOW - 5000, startedAt: NOW - 5000, stepsBy: "h:1:n",
  steps: [{ name: "pull", run: "git pull --ff-only", status: "running" }, { name: "test", run: "npm test", status: "not_run" }],
};

describe("step results in the CLI and the dashboard", () => {
  let dir: string;
  let path: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "steps-views-"));
    path = join(dir, "tasks.db");
    const store = SqliteTaskStore.open({ path, projectId: "proj" });
    const autos = new AutomationRepository(store.db, "proj");
    autos.saveAutomation(automation);
    autos.insertRun(failed);
    autos.insertRun(running);
    autos.insertRun(retried);
    store.close();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("`runs` shows each step's exit code and the failed step's last output line; --json has the tails", () => {
    let stdout = "";
    assert.equal(main(["runs", "austeps", "--db", path], { stdout: (t: string) => void (stdout += t), stderr: () => {}, env: {} } as never), 0);
    assert.match(stdout, /STEPS +RESULT\n/);
    assert.match(stdout, /#1 +error .*pull 0, test 1: "1 failing" +Step "test" failed/);
    assert.match(stdout, /#2 +running .*pull running, test -/);
    let json = "";
    main(["runs", "austeps", "--db", path, "--json"], { stdout: (t: string) => void (json += t), stderr: () => {}, env: {} } as never);
    assert.equal(JSON.parse(json).runs.find((r: Run) => r.runNo === 1).steps[1].tail, "not ok 3 - <b>parser</b>\n1 failing");
  });

  it("the automation page lists the steps, each run's step status and output tail (escaped), and a Cancel for a run in its steps phase", () => {
    const reader = ReadModel.open(path);
    try {
      const { body } = routePage(reader, new URL("http://127.0.0.1/automation?project=proj&id=austeps1"), NOW);
      assert.match(body, /<h2>Steps<\/h2><table class="step-defs">.*<td>pull<\/td><td><code class="exact">git pull --ff-only<\/code><\/td><td>2m<\/td><td>stop<\/td>/s);
      assert.match(body, /None: steps only, no model runs\./);
      assert.match(body, /<li data-step="test"><span class="status s-failed">failed<\/span> test: exit 1 in 9\.0s<details><summary>output<\/summary><pre>not ok 3 - &lt;b&gt;parser&lt;\/b&gt;\n1 failing<\/pre><\/details><\/li>/);
      assert.doesNotMatch(body, /<b>parser/);
      const row2 = body.slice(body.indexOf('data-run="2"'));
      assert.match(row2, /<input type="hidden" name="kind" value="cancel_task">.*<input type="hidden" name="target" value="auto_austeps1_2">/s);
      const row1 = body.slice(body.indexOf('data-run="1"'));
      assert.doesNotMatch(row1, /value="auto_austeps1_1"/);
    } finally {
      reader.close();
    }
  });

  it("a retried step shows each try: the CLI's runs table its exit codes, task_read's run line and the dashboard each try with its output", () => {
    let stdout = "";
    main(["runs", "austeps", "--db", path], { stdout: (t: string) => void (stdout += t), stderr: () => {}, env: {} } as never);
    assert.match(stdout, /#3 +completed .*pull 0, test 1→timeout→0 /);
    assert.equal(runLine({ ...retried, id: 3 }, []).includes("test: exit 0 in 0.9s (try 3; before: exit 1 in 0.8s, timed out in 60.0s)"), true, runLine({ ...retried, id: 3 }, []));
    const reader = ReadModel.open(path);
    try {
      const { body } = routePage(reader, new URL("http://127.0.0.1/automation?project=proj&id=austeps1"), NOW);
      assert.match(body, /test: exit 0 in 0\.9s \(try 3; before: exit 1 in 0\.8s, timed out in 60\.0s\)<details data-try="1"><summary>output of try 1<\/summary><pre>flake &lt;i&gt;1&lt;\/i&gt;<\/pre><\/details><details><summary>output of try 3<\/summary><pre>ok<\/pre>/);
    } finally {
      reader.close();
    }
  });
});
