import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { startStack, call, toolOutputs, waitUntil, MOCK_MODEL, type Stack, queryDb, pendingPermissions, answerPermission } from "../harness/plugin-stack.ts";
import { lastUserText, startMockModel, type MockModel } from "../harness/mock-model.ts";
import type { SqlValue } from "../../src/store/sqlite-driver.ts";

/**
 * Hybrid runs and step retries on a real OpenCode (issue 31, items 1 and 3): the steps are the
 * happy path and the model runs only when one fails (prompt_when "failure", the default), and a
 * failing step is tried again `retries` times. As steps.test.ts: the parent's model calls
 * task_create, each step command is asked (bash "ask", answered once), scenarios run one after
 * another in one server so that the mock model's request log shows which requests a run caused.
 */
describe("hybrid runs and step retries on the real host", () => {
  let mock: MockModel;
  let s: Stack;
  const dir = mkdtempSync(join(tmpdir(), "ocbt-retries-"));
  const dbPath = join(dir, "tasks.db");
  after(async () => {
    await s?.stop().catch(() => undefined);
    await mock?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const create = async (parent: string, args: Record<string, unknown>) => {
    const before = (await toolOutputs(s, parent, "task_create")).length;
    void s.server.client.session.promptAsync({
      path: { id: parent }, body: { agent: "build", model: MOCK_MODEL, parts: [{ type: "text", text: call("task_create", args) }] },
    });
    const out = await waitUntil(async () => {
      for (const p of (await pendingPermissions(s)).filter((p) => p.sessionID === parent)) await answerPermission(s, p.id, "once");
      return (await toolOutputs(s, parent, "task_create"))[before];
    }, { timeoutMs: 20_000, what: "task_create output" });
    await waitUntil(async () => (await s.server.client.session.status()).data?.[parent] === undefined, { what: "parent idle" });
    const id = /automation (au\w+)/.exec(out)?.[1];
    assert.ok(id, out);
    return id;
  };

  const query = <T = any>(sql: string, ...params: SqlValue[]): T[] => queryDb<T>(dbPath, sql, ...params);
  type RunRow = { status: string; summary: string; task_id: string | null; steps: string };
  type StepRow = { name: string; status: string; exitCode: number; tail?: string; tries?: { status: string; exitCode: number; tail?: string }[] };
  /** Runs task_run from the parent and waits for the automation's only run to end. */
  const runOnce = async (parent: string, id: string): Promise<RunRow> => {
    await s.say(parent, call("task_run", { id }));
    return waitUntil(() => {
      const [run, more] = query<RunRow>("SELECT * FROM automation_runs WHERE automation_id = ? ORDER BY id", id);
      assert.equal(more, undefined);
      return run && !["starting", "running", "waiting"].includes(run.status) && run;
    }, { timeoutMs: 40_000, what: "the run to end" }) as Promise<RunRow>;
  };
  const childRequests = (title: string) => mock.requests().filter((r) => lastUserText(r).startsWith(`[Automation "${title}"`));
  const children = async (title: string) => ((await s.server.client.session.list()).data ?? []).filter((x: any) => x.title?.startsWith(title));
  const told = async (parent: string) => (await s.messages(parent)).filter((m) => m.info.role === "user")
    .map((m) => m.parts.filter((p) => p.type === "text").map((p) => p.text).join("\n")).filter((t) => t.includes("<automation-run"));
  /** Fails (exit 1) until its `n`th try, counted in the file `name`. */
  const passesOnTry = (name: string, n: number) => `echo x >> ${name}; t=$(wc -l < ${name}); echo "try $t"; test "$t" -ge ${n}`;

  it("steps pass with a prompt (prompt_when failure, the default): the run completes with 0 model requests; its result is the steps' summary, told", async () => {
    mock = await startMockModel();
    s = await startStack({ mock, pluginOptions: { dbPath, pollIntervalMs: 500 }, config: { permission: { background_automation: "allow", bash: "ask" } } });
    const parent = await s.newSession("parent: hybrid passes");
    const id = await create(parent, { title: "green check", prompt: "REPLY I fixed it.", notify: "always", steps: [{ name: "test", run: "echo '12 passing'" }] });
    assert.deepEqual(query("SELECT prompt_when FROM automations WHERE id = ?", id), [{ prompt_when: null }], "stored as the default");
    const before = mock.requests().length;
    const run = await runOnce(parent, id);
    assert.equal(run.status, "completed");
    assert.equal(run.task_id, null);
    assert.equal(run.summary, "Steps: 1 of 1 passed.");
    const [note] = (await waitUntil(async () => { const n = await told(parent); return n.length === 1 && n; }, { what: "the result told" })) as string[];
    assert.match(note!, /Automation "green check" run #1 \(run now \(task_run\)\) completed:\nSteps: 1 of 1 passed\.\n- test: exit 0 in [\d.]+s\n {4}12 passing/);
    assert.equal(childRequests("green check").length, 0, "no run's prompt reached the model");
    assert.equal((await children("green check")).length, 0, "no child session");
    // Since task_run: the parent's own turn that called it, and its turn after the notice.
    for (const r of mock.requests().slice(before)) assert.doesNotMatch(lastUserText(r), /\[Automation "green check"/);
  });

  it("a failing step with a prompt (prompt_when failure): one child, whose prompt holds the failed command, exit code and output", async () => {
    const parent = await s.newSession("parent: hybrid fails");
    const id = await create(parent, { title: "red check", prompt: "REPLY I looked at it.", notify: "never", steps: [{ name: "test", run: "echo 'not ok 2 - dates'; exit 4" }] });
    const run = await runOnce(parent, id);
    assert.deepEqual([run.status, run.summary], ["completed", "I looked at it."]);
    const asked = childRequests("red check");
    assert.equal(asked.length, 1, "one child, asked once");
    assert.match(lastUserText(asked[0]!), /I looked at it\.\n\n\[The automation's steps ran first\. Step "test" FAILED: `echo 'not ok 2 - dates'; exit 4` exited with code 4 after [\d.]+s\.\]/);
    assert.match(lastUserText(asked[0]!), /\nnot ok 2 - dates\n\[End of output\]/);
    assert.equal((await children("red check")).length, 1);
  });

  it("prompt_when always: the prompt runs after passing steps (the behaviour stored definitions keep)", async () => {
    const parent = await s.newSession("parent: always");
    const id = await create(parent, { title: "pull and tell", prompt: "REPLY Nothing new.", prompt_when: "always", notify: "never", steps: [{ name: "pull", run: "echo 'Already up to date.'" }] });
    const run = await runOnce(parent, id);
    assert.deepEqual([run.status, run.summary], ["completed", "Nothing new."]);
    assert.match(lastUserText(childRequests("pull and tell")[0]!), /\[The automation's steps ran first and passed\.\]\nSteps: 1 of 1 passed\./);
  });

  it("retries: 2 passes on the third try (each try in the history, task_read shows them); retries: 1 fails the run after two tries", async () => {
    const parent = await s.newSession("parent: retries");
    const flaky = await create(parent, { title: "flaky passes", notify: "never", steps: [{ name: "flaky", run: passesOnTry("tries-a", 3), retries: 2, retry_delay: "1s" }] });
    const passed = await runOnce(parent, flaky);
    assert.equal(passed.status, "completed");
    const [step] = JSON.parse(passed.steps) as StepRow[];
    assert.deepEqual([step!.status, step!.tail], ["passed", "try 3"]);
    assert.deepEqual(step!.tries!.map((t) => [t.status, t.exitCode, t.tail]), [["failed", 1, "try 1"], ["failed", 1, "try 2"]]);
    await s.say(parent, call("task_read", { id: flaky }));
    const read = (await toolOutputs(s, parent, "task_read"))[0]!;
    assert.match(read, /- flaky: `.*` \(timeout 5m, retries 2, retry_delay 1s\)/);
    assert.match(read, /flaky: exit 0 in [\d.]+s \(try 3; before: exit 1 in [\d.]+s, exit 1 in [\d.]+s\)/);

    const tooFew = await create(parent, { title: "flaky fails", notify: "never", steps: [{ name: "flaky", run: passesOnTry("tries-b", 3), retries: 1, retry_delay: "1s" }] });
    const failed = await runOnce(parent, tooFew);
    assert.equal(failed.status, "error");
    assert.match(failed.summary, /^Step "flaky" failed: `.*` exited with code 1 after [\d.]+s \(its last of 2 tries\)\./);
    assert.equal(readFileSync(join(s.server.projectDir, "tries-b"), "utf8"), "x\nx\n", "tried twice, not a third time");
    assert.equal(childRequests("flaky").length, 0);
  });
});
