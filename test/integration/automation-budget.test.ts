import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { startStack, call, queryDb, toolOutputs, waitUntil, type Stack } from "../harness/plugin-stack.ts";
import { defaultResponder, messageText, startMockModel, type MockModel, type MockReply, type MockRequest } from "../harness/mock-model.ts";
import { main } from "../../src/cli/main.ts";
import type { SqlValue } from "../../src/store/sqlite-driver.ts";

/**
 * Automation budgets on the real host. The mock model is priced ($3 / $15 per million input /
 * output tokens) and every answer reports 4,000 input and 1,000 output tokens: each model request
 * costs $0.027 and counts 5.0k tokens. A run's prompt `STEPS <n>` makes its child take n requests
 * (n - 1 bash calls, then an answer).
 */
const PER_REQUEST = { input: 4000, output: 1000 };
const PRICE = { input: 3, output: 15 };

function script(req: MockRequest): MockReply {
  const first = req.body.messages.find((m) => m.role === "user");
  const steps = /^STEPS (\d+)$/m.exec(first ? messageText(first) : "");
  if (!steps) return defaultResponder(req);
  const done = req.body.messages.filter((m) => m.role === "assistant" && m.tool_calls?.length).length;
  if (done < Number(steps[1]) - 1) return { toolCalls: [{ name: "bash", args: { command: `echo step ${done + 1}`, description: "a step" } }] };
  return { text: `finished after ${steps[1]} requests` };
}

const responder = (req: MockRequest): MockReply => (req.isTitle ? defaultResponder(req) : { ...script(req), usage: PER_REQUEST });

describe("automation budgets, on the real host", () => {
  let mock: MockModel;
  let a: Stack;
  let parent: string;
  const stacks: Stack[] = [];
  const dir = mkdtempSync(join(tmpdir(), "ocbt-autobudget-"));
  const dbPath = join(dir, "tasks.db");
  after(async () => {
    for (const stack of stacks) await stack.stop().catch(() => undefined);
    await mock?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async (reuse?: Stack) => {
    const stack = await startStack({
      mock, modelCost: PRICE, pluginOptions: { dbPath, pollIntervalMs: 500 },
      config: { permission: { background_automation: "allow", bash: "allow" } },
      reuse: reuse && { homeDir: reuse.server.homeDir, projectDir: reuse.server.projectDir },
    });
    stacks.push(stack);
    return stack;
  };

  const query = <T = any>(sql: string, ...params: SqlValue[]): T[] => queryDb<T>(dbPath, sql, ...params);
  type RunRow = { run_no: number | null; status: string; skip_reason: string | null; summary: string | null; task_id: string | null; skip_count: number | null };
  const runs = (automationId: string) =>
    query<RunRow>("SELECT run_no, status, skip_reason, summary, task_id, skip_count FROM automation_runs WHERE automation_id = ? ORDER BY id", automationId);
  /** The history rows of firings skipped for the daily budget: one per streak. */
  const budgetSkipRows = (automationId: string) => runs(automationId).filter((r) => r.status === "skipped" && r.skip_reason?.startsWith("daily budget"));
  /** How many firings were skipped for it: each row counts its streak. */
  const budgetSkips = (automationId: string) => budgetSkipRows(automationId).reduce((n, r) => n + (r.skip_count ?? 1), 0);
  const notices = async (automationId: string) =>
    (await a.messages(parent)).filter((m) => m.info.role === "user")
      .map((m) => m.parts.filter((p) => p.type === "text").map((p) => p.text).join("\n"))
      .filter((text) => text.includes(`<automation-budget automation="${automationId}">`));

  async function tool(name: string, args: Record<string, unknown>): Promise<string> {
    await a.say(parent, call(name, args));
    return (await toolOutputs(a, parent, name)).at(-1) ?? "";
  }
  async function create(args: Record<string, unknown>): Promise<string> {
    const out = await tool("task_create", { notify: "never", ...args });
    const id = /Created automation (au\w+)/.exec(out)?.[1];
    assert.ok(id, `task_create answered: ${out}`);
    return id;
  }

  it("usd_per_day with a firing every second: past the budget firings are skipped with the reason, the owner is told once", async () => {
    mock = await startMockModel({ responder });
    a = await start();
    parent = await a.newSession("parent: automation budget");
    const refused = await tool("task_create", { title: "bad", prompt: "REPLY no", budget: { usd_per_day: "2" } });
    assert.match(refused, /budget\.usd_per_day must be a number above 0, got "2"\. Nothing was stored\./);
    const id = await create({ title: "daily", prompt: "REPLY done", triggers: [{ every: "1s" }], budget: { usd_per_day: 0.05 } });
    await waitUntil(() => budgetSkips(id) >= 3, { timeoutMs: 30_000, what: "three firings skipped for the daily budget" });
    const rows = runs(id);
    assert.deepEqual(rows.filter((r) => r.run_no !== null).map((r) => r.status), ["completed", "completed"], "two runs of $0.027: the second passed $0.05");
    assert.equal(budgetSkipRows(id)[0]!.skip_reason, "daily budget reached ($0.054 of $0.050)");
    await waitUntil(async () => (await notices(id)).length === 1, { timeoutMs: 10_000, what: "the owner told" });
    const told = (await notices(id))[0]!;
    assert.match(told, /Automation "daily" \(au\w+\): daily budget reached \(\$0\.054 of \$0\.050\)\. Its firings are skipped \(and recorded\) until .* then it runs again by itself/);
    const skipped = budgetSkips(id);
    await waitUntil(() => budgetSkips(id) >= skipped + 3, { timeoutMs: 10_000, what: "three more skips" });
    assert.equal((await notices(id)).length, 1, "told once a day, however many firings are skipped");
    assert.equal(budgetSkipRows(id).length, 1, "a firing every second skipped: one history row that counts them");
    assert.equal(runs(id).filter((r) => r.run_no !== null).length, 2, "nothing ran since");
    const read = await tool("task_read", { id });
    assert.match(read, /^budget: \$0\.050 per day \(days in .+\)$/m);
    assert.match(read, /^spent: today \$0\.054 · 10\.0k tok; this week \$0\.054 · 10\.0k tok; last run #2 \$0\.027 · 5\.0k tok$/m);
    assert.match(read, /skipped \d+ times until \S+Z \(daily budget reached \(\$0\.054 of \$0\.050\)\) every 1s$/m);
    let table = "";
    assert.equal(main(["runs", id, "--db", dbPath], { stdout: (t) => void (table += t), stderr: (t) => void (table += t), env: {}, now: Date.now }), 0, table);
    assert.match(table, /skipped \d+ times until \S+Z \(daily budget reached \(\$0\.054 of \$0\.050\)\)/, "the CLI's runs shows the streak's count");
    assert.match(await tool("task_update", { id, enabled: false }), /paused/);
  });

  it("tokens_per_run: the run's child is stopped after the request that passed it and the run ends budget_exceeded", async () => {
    const id = await create({ title: "per run", prompt: "STEPS 6", budget: { tokens_per_run: 6000 } });
    assert.match(await tool("task_run", { id }), /Started run #1/);
    const ended = await waitUntil(() => runs(id).find((r) => r.status !== "running" && r.status !== "starting"), { timeoutMs: 30_000, what: "the run ended" });
    assert.equal(ended.status, "error");
    assert.match(ended.summary ?? "", /^budget_exceeded: spent 10\.0k of 6\.0k tokens \(\$0\.054, 2 requests\)/);
    // The host may open a third assistant message before the abort lands; the model is asked twice only.
    const asked = () => mock.requests().filter((r) => !r.isTitle && /^STEPS 6$/m.test(messageText(r.body.messages.find((m) => m.role === "user")!))).length;
    assert.equal(asked(), 2, "no model request after the one that passed the budget");
    assert.match(await tool("task_read", { id }), /run #1 error .*budget_exceeded: spent 10\.0k of 6\.0k tokens/);
  });

  it("costs --by automation --json sums what the runs' tasks spent", async () => {
    let stdout = "";
    const code = main(["costs", "--by", "automation", "--json", "--since", "24h", "--db", dbPath], { stdout: (t) => void (stdout += t), stderr: (t) => void (stdout += t), env: {}, now: Date.now });
    assert.equal(code, 0, stdout);
    const report = JSON.parse(stdout) as { rows: Array<{ key: string | null; costUsd: number; requests: number; tasks: number }> };
    const automations = query<{ id: string }>("SELECT id FROM automations");
    assert.equal(automations.length, 2);
    for (const { id } of automations) {
      const taskIds = runs(id).flatMap((r) => (r.task_id ? [r.task_id] : []));
      const spent = query<{ cost: number; requests: number }>(
        "SELECT SUM(cost_usd) AS cost, COUNT(*) AS requests FROM task_spend WHERE task_id IN (SELECT value FROM json_each(?))", JSON.stringify(taskIds))[0]!;
      const row = report.rows.find((r) => r.key === id);
      assert.ok(row, `a row for ${id}: ${stdout}`);
      assert.equal(row.requests, spent.requests);
      assert.ok(Math.abs(row.costUsd - spent.cost) < 1e-9, `${row.costUsd} = ${spent.cost}`);
      assert.equal(row.tasks, taskIds.length);
    }
  });

  it("two servers on one database reach the daily budget once: two runs in all, the owner told once", async () => {
    await start(a); // a second process on the same project and database
    const id = await create({ title: "shared", prompt: "REPLY shared", triggers: [{ every: "1s" }], budget: { usd_per_day: 0.05 } });
    await waitUntil(() => budgetSkips(id) >= 5, { timeoutMs: 30_000, what: "five firings skipped for the daily budget" });
    assert.deepEqual(runs(id).filter((r) => r.run_no !== null).map((r) => r.status), ["completed", "completed"], "not two runs per process");
    await waitUntil(async () => (await notices(id)).length >= 1, { timeoutMs: 10_000, what: "the owner told" });
    const skipped = budgetSkips(id);
    await waitUntil(() => budgetSkips(id) >= skipped + 3, { timeoutMs: 10_000, what: "three more skips" });
    assert.equal((await notices(id)).length, 1, "told once, whichever process skipped");
    assert.equal(budgetSkipRows(id).length, 1, "both processes counted their skips on one row");
    assert.equal(query("SELECT budget_told_on FROM automations WHERE id = ? AND budget_told_on IS NOT NULL", id).length, 1);
  });
});
