import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { startStack, call, toolOutputs, waitUntil, pluginDbPath, queryDb, type Stack } from "../harness/plugin-stack.ts";
import { defaultResponder, lastUserText, requestTokens, systemPrompt, type MockRequest } from "../harness/mock-model.ts";

/**
 * `session: "continue"` keeps one child session for every run, and it grows. The mock model
 * declares a small context limit and reports realistic usage (request JSON / 4 tokens), so
 * OpenCode sees the session fill up and compacts it (a summarization request, then the next
 * requests start from the summary). Twenty runs with long answers would need about three times
 * the limit without compaction.
 */
const LIMIT = { context: 16_000, output: 1_000 };
const RUNS = 20;
const TITLE = "grows every run";
/** About 2,000 tokens of answer per run. */
const FILLER = " The build is green and nothing else changed since the last look.".repeat(120);

const isSummarization = (r: MockRequest) => /context summarization agent/i.test(systemPrompt(r));
const runNoOf = (r: MockRequest) => Number(/\[Automation "[^"]+" \(au\w+\), run #(\d+),/.exec(lastUserText(r))?.[1] ?? 0);

function responder(req: MockRequest) {
  if (isSummarization(req)) return { text: "Summary: every earlier run reported a green build." };
  const run = runNoOf(req);
  if (run > 0) return { text: `answer of run ${run}:${FILLER}` };
  return defaultResponder(req);
}

describe("twenty continued runs within a small context limit", () => {
  let stack: Stack | undefined;
  after(async () => {
    await stack?.stop().catch(() => undefined);
  });

  it("the host compacts the one child session; every run answers and the last request fits the limit", { timeout: 120_000 }, async () => {
    stack = await startStack({ responder, modelLimit: LIMIT, config: { permission: { background_automation: "allow" } } });
    const s = stack;
    const parent = await s.newSession("parent: continued");
    await s.say(parent, call("task_create", { title: TITLE, prompt: "Look at the build and report.", session: "continue", notify: "never" }));
    const id = /Created automation (au\w+)/.exec((await toolOutputs(s, parent, "task_create"))[0] ?? "")?.[1];
    assert.ok(id, "task_create created the automation");
    const db = pluginDbPath(s.server);
    const run = (n: number) => queryDb(db, "SELECT status, summary, task_id FROM automation_runs WHERE automation_id = ? AND run_no = ?", id, n)[0];
    for (let n = 1; n <= RUNS; n++) {
      await s.say(parent, call("task_run", { id }));
      const ended = await waitUntil(() => { const r = run(n); return r && r.status !== "running" && r.status !== "starting" && r; }, { timeoutMs: 20_000, what: `run #${n} to end` });
      assert.equal(ended.status, "completed", `run #${n}: ${ended.summary}`);
      assert.ok(ended.summary.startsWith(`answer of run ${n}:`), `run #${n} reports its own answer, not a summary or a reply to a synthetic prompt: ${ended.summary.slice(0, 80)}`);
    }

    const rows = queryDb(db, "SELECT task_id FROM automation_runs WHERE automation_id = ? ORDER BY run_no", id);
    assert.equal(new Set(rows.map((r) => r.task_id)).size, 1, "one child session for all twenty runs");
    const child = rows[0].task_id as string;

    const ofChild = (r: MockRequest) => isSummarization(r) ? lastUserText(r).includes(`[Automation "${TITLE}"`) : lastUserText(r).startsWith(`[Automation "${TITLE}"`);
    const childRequests = s.mock.requests().filter(ofChild);
    const asked = childRequests.filter((r) => !isSummarization(r));
    const compactions = childRequests.filter(isSummarization).length;
    const first = asked.find((r) => runNoOf(r) === 1)!;
    const second = asked.find((r) => runNoOf(r) === 2)!;
    const last = asked.findLast((r) => runNoOf(r) === RUNS)!;
    const growth = requestTokens(second.body) - requestTokens(first.body);
    const uncompacted = requestTokens(first.body) + (RUNS - 1) * growth;
    assert.ok(uncompacted > 2.5 * LIMIT.context, `without compaction run #${RUNS} would send ~${uncompacted} tokens`);
    assert.ok(compactions >= 3, `the host compacted the session ${compactions} time(s)`);
    const sizes = asked.map((r) => requestTokens(r.body));
    assert.ok(Math.max(...sizes) <= LIMIT.context, `every request of the child fits: the largest was ${Math.max(...sizes)} tokens`);
    assert.ok(requestTokens(last.body) <= LIMIT.context, `run #${RUNS}'s request: ${requestTokens(last.body)} tokens`);
    assert.equal(asked.filter((r) => /^Continue if you have next steps/.test(lastUserText(r))).length, 0, "no synthetic continue turn after a run's final answer");
    assert.equal(asked.length, RUNS, "one model request per run, nothing more");

    const summaries = (await s.messages(child)).filter((m) => m.info.role === "assistant" && m.info.summary === true);
    assert.equal(summaries.length, compactions, "each summarization left a summary in the child session");
    console.log(`continued runs: ${RUNS} runs, ${compactions} compactions, requests ${Math.min(...sizes)}-${Math.max(...sizes)} tokens (limit ${LIMIT.context}); uncompacted run #${RUNS} would be ~${uncompacted}`);
  });
});
