import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Automation, Run } from "../../src/automations/automation.ts";
import type { Spend } from "../../src/cost/spend.ts";
import { routePage } from "../../src/dashboard/dashboard-routes.ts";
import type { ForkMessage } from "../../src/fork/fork-types.ts";
import { AutomationRepository } from "../../src/store/automation-repository.ts";
import { ReadModel } from "../../src/store/reads/read-model.ts";
import { SpendRepository } from "../../src/store/spend-repository.ts";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import { runningTask } from "../store/task-fixtures.ts";

const NOW = new Date(2026, 10, 26, 12, 0, 0).getTime();
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const spend = (costUsd: number, input: number, output = 0): Spend => ({ tokens: { input, output, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, costUsd, requests: 1 });

/** Secrets a child's tool call carried: none may reach the page whole. */
const GH_TOKEN = `ghp_${"a1B2c3D4".repeat(5)}`;
const BEARER = "Bearer s3cr3tbearervalue99";
const PASSWORD = "hunter2-but-longer";

function automation(id: string, overrides: Partial<Automation> = {}): Automation {
  return {
    id, title: `Title of ${id}`, prompt: "REPLY ok", agent: "general", notify: "on_change", sessionMode: "fresh", overlap: "skip", catchUp: "skip",
    reportTo: "ses_parent", reportAgent: "build", enabled: true, createdBy: "ses_parent", createdAt: NOW - 48 * HOUR, updatedAt: NOW,
    runCount: 0, consecutiveFailures: 0, ...overrides,
  };
}

function run(automationId: string, n: number, overrides: Partial<Run> = {}): Omit<Run, "id"> {
  const at = NOW - (10 - n) * HOUR;
  return { automationId, runNo: n, triggerId: undefined, firedBy: "manual", status: "completed", createdAt: at, startedAt: at, endedAt: at + 1000, ...overrides };
}

/** An assistant message as OpenCode's session API returns it. */
function assistant(id: string, created: number, parts: ForkMessage["parts"], usage = { input: 4000, output: 1000, cost: 0.027 }): ForkMessage {
  return {
    info: { id, role: "assistant", time: { created, completed: created + 500 }, providerID: "mock", modelID: "priced-model", finish: "tool-calls",
      tokens: { input: usage.input, output: usage.output, reasoning: 0, cache: { read: 0, write: 0 } }, cost: usage.cost },
    parts,
  };
}

const toolCall = (callID: string, tool: string, input: Record<string, unknown>, output: string) =>
  ({ type: "tool", callID, tool, state: { status: "completed", input, output, title: tool, metadata: {}, time: { start: 0, end: 1 } } });

describe("dashboard: what tasks and runs cost", () => {
  let dir: string;
  let reader: ReadModel;
  const page = (path: string, extras?: Parameters<typeof routePage>[3]) => routePage(reader, new URL(path, "http://127.0.0.1"), NOW, extras);

  before(() => {
    dir = mkdtempSync(join(tmpdir(), "dash-spend-"));
    const path = join(dir, "tasks.db");
    const store = SqliteTaskStore.open({ path, projectId: "proj" });
    const rows = new SpendRepository(store.db, "proj");
    const autos = new AutomationRepository(store.db, "proj");
    autos.saveAutomation(automation("au1", { title: "Nightly check" }));
    store.save(runningTask("ses_run1", { description: "nightly run", status: "completed", createdAt: NOW - 9 * HOUR, settledAt: NOW - 8 * HOUR, result: "ok" }));
    autos.insertRun(run("au1", 1, { taskId: "ses_run1" }));
    autos.insertRun(run("au1", 2, { status: "skipped", skipReason: "daily budget reached ($2.03 of $2.00)", startedAt: undefined, endedAt: undefined, createdAt: NOW - HOUR }));
    autos.insertRun(run("au1", 3, { status: "skipped", skipReason: "daily budget reached ($2.03 of $2.00)", startedAt: undefined, endedAt: undefined, createdAt: NOW - 30 * 60_000 }));
    store.save(runningTask("ses_direct", { description: "direct survey", status: "completed", createdAt: NOW - 3 * DAY, settledAt: NOW - 3 * DAY + HOUR, result: "done", model: { providerID: "mock", modelID: "priced-model" } }));
    store.save(runningTask("ses_kid", { description: "its helper", parentSessionID: "ses_direct", status: "completed", createdAt: NOW - 3 * DAY + 60_000, settledAt: NOW - 3 * DAY + HOUR }));
    store.save(runningTask("ses_free", { description: "free model task", status: "completed", createdAt: NOW - 2 * HOUR, settledAt: NOW - HOUR, model: { providerID: "local", modelID: "llama" } }));
    // Launched inside the 30 days by a task from before them: its spend counts at that launch, out of the charts.
    store.save(runningTask("ses_old", { description: "old parent", status: "completed", createdAt: NOW - 40 * DAY, settledAt: NOW - 29 * DAY }));
    store.save(runningTask("ses_oldkid", { description: "late child", parentSessionID: "ses_old", status: "completed", createdAt: NOW - 29 * DAY, settledAt: NOW - 29 * DAY }));
    rows.put("ses_oldkid", "msg_o01", spend(0.2, 1000));
    // Out of order on purpose: the page orders them by message id (OpenCode's ids grow with time).
    rows.put("ses_direct", "msg_002", spend(0.027, 4000, 1000));
    rows.put("ses_direct", "msg_001", spend(0.054, 8000, 2000));
    rows.put("ses_kid", "msg_k01", spend(0.027, 4000, 1000));
    rows.put("ses_run1", "msg_r01", spend(1.5, 200_000, 50_000));
    rows.put("ses_free", "msg_f01", spend(0, 12_000, 3000));
    store.close();
    reader = ReadModel.open(path);
  });

  after(() => {
    reader?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const field = (body: string, id: string) => new RegExp(`id="${id}"[^>]*>(.*?)</dd>`, "s").exec(body)?.[1]?.replace(/<[^>]+>/g, "");

  it("the task page shows the tree's spend and its own, each task below's, and each request in order (from the database)", () => {
    const { body } = page("/task?project=proj&id=ses_direct");
    assert.equal(field(body, "task-spend"), "$0.108 · 20.0k tok in 3 requests with the tasks it launched; its own: $0.081 · 15.0k tok in 2 requests");
    assert.match(body, /its helper <span class="spend">\$0\.027 · 5\.0k tok<\/span>/);
    const requests = [...body.matchAll(/data-request="([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(requests, ["msg_001", "msg_002"]);
    assert.match(body, /<tr data-request="msg_001"><td>1<\/td><td class="spend">\$0\.054 · 10\.0k tok<\/td><td>in 8\.0k · out 2\.0k<\/td><\/tr>/);
    assert.match(body, /Served by the command line, which reads only the database/);
  });

  it("a model without a price shows tokens only", () => {
    const { body } = page("/task?project=proj&id=ses_free");
    assert.equal(field(body, "task-spend"), "15.0k tok in 1 request");
    assert.match(page("/?project=proj").body, /data-task="ses_free"[\s\S]*?<td class="spend">15\.0k tok<\/td>/);
  });

  it("served by OpenCode, each request lists its model, time and tool calls, collapsed, with secrets masked (attacker's input)", () => {
    const messages: ForkMessage[] = [
      { info: { id: "msg_000", role: "user" }, parts: [{ type: "text", text: "do it" }] },
      assistant("msg_001", NOW - 3 * DAY, [toolCall("c1", "bash", { command: `curl -H 'Authorization: ${BEARER}' https://x`, password: PASSWORD }, `cloned with ${GH_TOKEN}\nok`)]),
      assistant("msg_002", NOW - 3 * DAY + 1000, [{ type: "text", text: "all done" }], { input: 4000, output: 1000, cost: 0.027 }),
      assistant("msg_003", NOW - 3 * DAY + 2000, [], { input: 0, output: 0, cost: 0 }),
      assistant("msg_004", NOW - 3 * DAY + 3000, [], { input: 0, output: 0, cost: 0 }),
    ];
    delete (messages[3]!.info.time as { completed?: number }).completed; // still streaming
    (messages[4]!.info as { error?: unknown }).error = { name: "MessageAbortedError", data: { message: "aborted" } };
    const { body } = page("/task?project=proj&id=ses_direct", { session: { messages } });
    for (const secret of [GH_TOKEN, "s3cr3tbearervalue99", PASSWORD]) assert.ok(!body.includes(secret), `${secret.slice(0, 8)}… is masked`);
    assert.match(body, /ghp_\[MASKED\]/);
    assert.match(body, /Bearer \[MASKED\]/);
    assert.match(body, /&quot;password&quot;: &quot;\[MASKED\]&quot;/);
    assert.match(body, /<details class="tool-call" data-key="c1"><summary>bash <span class="status s-completed">completed<\/span>/, "the call is collapsed under its name");
    assert.match(body, /<tr data-request="msg_001"><td>1<\/td><td><time[^>]*data-ts="\d+"[^>]*>.*?<\/time><\/td><td>mock\/priced-model<\/td><td class="spend">\$0\.027 · 5\.0k tok<\/td>/);
    assert.match(body, /data-request="msg_003">.*in progress/, "a request still running has no figures yet");
    assert.match(body, /data-request="msg_004">.*none reported/, "an aborted one never will");
    assert.equal([...body.matchAll(/data-request=/g)].length, 4, "user messages are not requests");
    assert.ok(!body.includes("Served by the command line"));
  });

  it("when OpenCode cannot read the session, the page says why and shows the database's figures", () => {
    const { body } = page("/task?project=proj&id=ses_direct", { session: { unavailable: "session not found" } });
    assert.match(body, /OpenCode could not read this session&#39;s messages \(session not found\)/);
    assert.equal([...body.matchAll(/data-request=/g)].length, 2);
  });

  it("home: each task's and run's spend, the per-day chart by automation and by model, budget skips under needs attention", () => {
    const { body } = page("/?project=proj");
    assert.match(body, /data-task="ses_direct"[\s\S]*?<td class="spend">\$0\.108 · 20\.0k tok<\/td>/, "with what it launched");
    assert.match(body, />1 \(manual\)[\s\S]*?<td class="spend">\$1\.50 · 250\.0k tok<\/td>/, "two decimals from $1");
    const chart = (id: string) => new RegExp(`<svg class="chart" id="${id}"[\\s\\S]*?</ul>`).exec(body)?.[0] ?? "";
    const byAutomation = chart("spend-by-automation");
    assert.equal((byAutomation.match(/<rect class="spend-bar"/g) ?? []).length, 3, "today: the run and the free task; three days ago: the direct tree");
    assert.match(byAutomation, /Nightly check \(au1\): \$1\.50 · 250\.0k tok/);
    assert.match(byAutomation, /\(direct tasks\): \$0\.108 · 35\.0k tok/, "the late child of a task from before the 30 days is left out");
    assert.match(chart("spend-by-model"), /mock\/priced-model: /);
    assert.match(chart("spend-by-model"), /local\/llama: 15\.0k tok/);
    assert.match(body, /<span class="tag">budget<\/span> <a href="[^"]*id=au1">Nightly check: 2 firings skipped, daily budget reached \(\$2\.03 of \$2\.00\)<\/a>/);
  });

  it("the automation page shows each run's spend", () => {
    const { body } = page("/automation?project=proj&id=au1");
    assert.match(body, /<tr data-run="1">[\s\S]*?<td class="spend">\$1\.50 · 250\.0k tok<\/td>/);
    assert.match(body, /<tr data-run="2">[\s\S]*?<td class="spend">-<\/td>/, "a skipped firing spent nothing");
  });

  it("needs attention says when the machine's daily budget is reached (the serving OpenCode's dailyBudgetUsd), and only then", () => {
    const item = /Daily budget reached: \$1\.50 of \$1\.00 spent today by background work \(option dailyBudgetUsd, all projects\)/;
    assert.match(page("/?project=proj", { dailyBudgetUsd: 1 }).body, item, "today: the run's $1.50; three days ago does not count");
    assert.match(page("/?project=other", { dailyBudgetUsd: 1 }).body, item, "the machine's budget, whichever project is shown");
    assert.doesNotMatch(page("/?project=proj", { dailyBudgetUsd: 2 }).body, /Daily budget reached/);
    assert.doesNotMatch(page("/?project=proj").body, /Daily budget reached/, "none known (the command line)");
    assert.match(page("/?project=proj").body, /<p id="spend-today">Today, all projects: \$1\.50 · 265\.0k tok spent by background work\.<\/p>/);
    assert.match(page("/?project=proj", { dailyBudgetUsd: 2 }).body, /Today, all projects: \$1\.50 · 265\.0k tok \(dailyBudgetUsd: \$2\.00\) spent/);
  });

  it("the charts are kept between refreshes and follow a new spend row at once", () => {
    const legend = () => /<svg class="chart" id="spend-by-automation"[\s\S]*?<\/ul>/.exec(page("/?project=proj").body)?.[0] ?? "";
    assert.match(legend(), /\(direct tasks\): \$0\.108 · 35\.0k tok/);
    const store = SqliteTaskStore.open({ path: join(dir, "tasks.db"), projectId: "proj" });
    try {
      new SpendRepository(store.db, "proj").put("ses_free", "msg_f02", spend(0.5, 1000));
    } finally {
      store.close();
    }
    assert.match(legend(), /\(direct tasks\): \$0\.608 · 36\.0k tok/);
  });

  it("with nothing spent, the chart says so", () => {
    assert.match(page("/?project=nobody").body, /Nothing spent in the last 30 days/);
    assert.deepEqual(reader.spend.spentSince(NOW + DAY), { tokens: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, costUsd: 0, requests: 0 });
  });
});
