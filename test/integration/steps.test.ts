import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { startStack, call, toolOutputs, waitUntil, MOCK_MODEL, type Stack, queryDb, pendingPermissions, answerPermission } from "../harness/plugin-stack.ts";
import { lastUserText, startMockModel, type MockModel, type MockRequest } from "../harness/mock-model.ts";
import type { SqlValue } from "../../src/store/sqlite-driver.ts";

/**
 * Automation steps on a real OpenCode: the parent's model calls task_create (the mock's CALL
 * directive); the step commands need the user's bash permission (config "ask", answered through
 * the server's permission API). Scenarios run one after another in one server, so that the mock
 * model's request log shows exactly which requests a run caused; then across a SIGKILL restart.
 */
/** Live (not zombie) processes of a process group: a killed grandchild stays a zombie until PID 1 reaps it. */
function groupMembers(pgid: number): number[] {
  const ps = execFileSync("ps", ["-eo", "pid=,pgid=,stat="], { encoding: "utf8" });
  return ps.split("\n").map((line) => line.trim().split(/\s+/))
    .filter(([, group, stat]) => Number(group) === pgid && !stat?.startsWith("Z")).map(([pid]) => Number(pid));
}

describe("automation steps on the real host", () => {
  let mock: MockModel;
  const stacks: Stack[] = [];
  const dir = mkdtempSync(join(tmpdir(), "ocbt-steps-"));
  const dbPath = join(dir, "tasks.db");
  const leftoverPids: number[] = [];
  after(async () => {
    for (const pid of leftoverPids) try { process.kill(pid, "SIGKILL"); } catch { /* gone */ }
    for (const stack of stacks) await stack.stop().catch(() => undefined);
    await mock?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const config = { permission: { background_automation: "allow", bash: "ask" } };
  const start = async (reuse?: Stack) => {
    mock ??= await startMockModel();
    const stack = await startStack({
      mock, pluginOptions: { dbPath, pollIntervalMs: 500 }, config,
      reuse: reuse && { homeDir: reuse.server.homeDir, projectDir: reuse.server.projectDir },
    });
    stacks.push(stack);
    return stack;
  };

  const permissions = pendingPermissions;
  const reply = answerPermission;

  /**
   * The parent's model calls task_create; each bash prompt is answered by `answer(command)` (once
   * by default). Returns the tool's answer, the automation id, and the commands asked about.
   */
  const create = async (stack: Stack, parent: string, args: Record<string, unknown>, answer: (command: string) => "once" | "reject" = () => "once") => {
    const before = (await toolOutputs(stack, parent, "task_create")).length;
    void stack.server.client.session.promptAsync({
      path: { id: parent }, body: { agent: "build", model: MOCK_MODEL, parts: [{ type: "text", text: call("task_create", args) }] },
    });
    const asked: string[] = [];
    const out = await waitUntil(async () => {
      for (const p of (await permissions(stack)).filter((p) => p.sessionID === parent)) {
        assert.equal(p.permission, "bash");
        asked.push(p.patterns[0]!);
        await reply(stack, p.id, answer(p.patterns[0]!));
      }
      return (await toolOutputs(stack, parent, "task_create"))[before];
    }, { timeoutMs: 20_000, what: "task_create output" });
    await waitUntil(async () => (await stack.server.client.session.status()).data?.[parent] === undefined, { what: "parent idle" });
    return { out, id: /automation (au\w+)/.exec(out)?.[1], asked };
  };

  const query = <T = any>(sql: string, ...params: SqlValue[]): T[] => queryDb<T>(dbPath, sql, ...params);
  type RunRow = { id: number; run_no: number; status: string; summary: string; task_id: string | null; notified: number; notify_note: string; steps: string };
  const runs = (automationId: string) => query<RunRow>("SELECT * FROM automation_runs WHERE automation_id = ? ORDER BY id", automationId);
  const ended = (r: RunRow) => !["starting", "running", "waiting"].includes(r.status);
  const automationNotes = async (stack: Stack, parent: string) =>
    (await stack.messages(parent)).filter((m) => m.info.role === "user")
      .map((m) => m.parts.filter((p) => p.type === "text").map((p) => p.text).join("\n"))
      .filter((text) => text.includes("<automation-run"));
  /** Requests whose latest user message is a run's first prompt for that automation (a child's). */
  const childRequests = (title: string) => mock.requests().filter((r: MockRequest) => lastUserText(r).startsWith(`[Automation "${title}"`));

  let s: Stack;

  it("all steps pass, no prompt: three runs complete without a single model request; on_change tells the first only", async () => {
    s = await start();
    const parent = await s.newSession("parent: steps only");
    const made = await create(s, parent, {
      title: "still green", triggers: [{ every: "2s" }], max_runs: 3, notify: "on_change",
      steps: [{ name: "build", run: "echo built; date +%s%N", timeout: "30s" }, { name: "test", run: 'echo "12 passing after $STEP_BUILD_EXIT"', timeout: "1m", continue_on_error: false }],
    });
    assert.match(made.out, /Created automation au\w+ "still green" \(enabled; notify on_change\)/);
    // One ask per simple command, as OpenCode's bash tool asks (issue 22).
    assert.deepEqual(made.asked, ["echo built", "date +%s%N", 'echo "12 passing after $STEP_BUILD_EXIT"']);
    const id = made.id!;
    const requestsBefore = mock.requests().length;
    await waitUntil(() => runs(id).filter(ended).length === 3 || undefined, { timeoutMs: 30_000, what: "three runs" });
    const all = runs(id);
    assert.deepEqual(all.map((r) => [r.status, r.task_id, r.notified]), [["completed", null, 1], ["completed", null, 0], ["completed", null, 0]]);
    assert.match(all[1]!.notify_note, /same result/);
    const steps = JSON.parse(all[0]!.steps) as Array<{ name: string; status: string; exitCode: number; tail: string }>;
    assert.deepEqual(steps.map((x) => [x.name, x.status, x.exitCode]), [["build", "passed", 0], ["test", "passed", 0]]);
    assert.equal(steps[1]!.tail, "12 passing after 0");
    const [note] = (await waitUntil(async () => { const n = await automationNotes(s, parent); return n.length === 1 && n; }, { what: "the first result told" })) as string[];
    assert.match(note!, /Automation "still green" run #1 \(trigger tr\w+, planned .*\) completed:\nSteps: 2 of 2 passed\.\n- build: exit 0 in [\d.]+s\n {4}built\n {4}\d+\n- test: exit 0 in [\d.]+s\n {4}12 passing after 0/);
    assert.equal(childRequests("still green").length, 0, "no run's prompt reached the model");
    // The only requests since: the parent's own turn after its notification (which carries it).
    const since = mock.requests().slice(requestsBefore);
    assert.ok(since.length <= 1, `requests after creation: ${since.length}`);
    for (const r of since) assert.match(lastUserText(r), /<automation-run automation="au\w+" run="1" status="completed"/);
    const sessions = ((await s.server.client.session.list()).data ?? []).filter((x: any) => x.title?.startsWith("still green"));
    assert.equal(sessions.length, 0, "no child session");
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal((await automationNotes(s, parent)).length, 1, "still passing is not told again");
  });

  it("a failing step with a prompt: exactly one child, whose first request holds the step's command, exit code and output tail; its result is the run's", async () => {
    const parent = await s.newSession("parent: failing step");
    const made = await create(s, parent, {
      title: "fix on failure", prompt: "REPLY I looked at the failing test.", notify: "always",
      steps: [{ name: "build", run: "echo compiled" }, { name: "test", run: "echo 'not ok 4 - parses dates'; echo 'AssertionError: 2 !== 3' >&2; exit 3" }, { name: "deploy", run: "touch deployed" }],
    });
    assert.deepEqual(made.asked, ["echo compiled", "echo 'not ok 4 - parses dates'", "echo 'AssertionError: 2 !== 3' >&2", "exit 3", "touch deployed"]);
    await s.say(parent, call("task_run", { id: made.id }));
    assert.match((await toolOutputs(s, parent, "task_run"))[0]!, /Started run #1 of au\w+: its steps run first/);
    const [run] = (await waitUntil(() => { const r = runs(made.id!); return r.length === 1 && ended(r[0]!) && r; }, { timeoutMs: 30_000, what: "the run to end" })) as RunRow[];
    assert.equal(run!.status, "completed");
    assert.equal(run!.summary, "I looked at the failing test.");
    assert.ok(run!.task_id);
    const first = childRequests("fix on failure");
    assert.equal(first.length, 1, "one child, asked once");
    const text = lastUserText(first[0]!);
    assert.match(text, /I looked at the failing test\.\n\n\[The automation's steps ran first\. Step "test" FAILED: `echo 'not ok 4 - parses dates'; echo 'AssertionError: 2 !== 3' >&2; exit 3` exited with code 3 after [\d.]+s\.\]/);
    assert.match(text, /\nnot ok 4 - parses dates\nAssertionError: 2 !== 3\n\[End of output\]/);
    assert.deepEqual(JSON.parse(run!.steps).map((x: { status: string }) => x.status), ["passed", "failed", "not_run"]);
    assert.equal(existsSync(join(s.server.projectDir, "deployed")), false);
    const sessions = ((await s.server.client.session.list()).data ?? []).filter((x: any) => x.title?.startsWith("fix on failure"));
    assert.equal(sessions.length, 1);
  });

  it("a hanging step is killed with its process group at its timeout; without a prompt the run is an error", async () => {
    const parent = await s.newSession("parent: hanging step");
    const made = await create(s, parent, { title: "hangs", notify: "never", steps: [{ name: "hang", run: "echo $$ > hang.pid; sleep 120 & sleep 120", timeout: "2s" }] });
    const startedAt = Date.now();
    await s.say(parent, call("task_run", { id: made.id }));
    const [run] = (await waitUntil(() => { const r = runs(made.id!); return r.length === 1 && ended(r[0]!) && r; }, { timeoutMs: 20_000, what: "the run to end" })) as RunRow[];
    assert.ok(Date.now() - startedAt < 12_000, `ended after ${Date.now() - startedAt} ms`);
    assert.equal(run!.status, "error");
    assert.match(run!.summary, /^Step "hang" failed: `echo \$\$ > hang\.pid; sleep 120 & sleep 120` timed out after [\d.]+s and was killed \(exit 124\)\.$/);
    const pid = Number(readFileSync(join(s.server.projectDir, "hang.pid"), "utf8"));
    assert.deepEqual(groupMembers(pid), [], "nothing of the step's process group is left");
    assert.equal(childRequests("hangs").length, 0);
  });

  it("bash is asked for each step command: one rejection stores nothing", async () => {
    const parent = await s.newSession("parent: rejects");
    const made = await create(s, parent, {
      title: "not allowed", steps: [{ name: "ok", run: "echo fine" }, { name: "wipe", run: "rm -rf ./data" }],
    }, (command) => (command === "rm -rf ./data" ? "reject" : "once"));
    assert.deepEqual(made.asked, ["echo fine", "rm -rf ./data"]);
    assert.match(made.out, /Running `rm -rf \.\/data` \(step "wipe"\) was not allowed \(bash permission\); nothing was stored/);
    assert.equal(made.id, undefined);
    assert.equal(query("SELECT id FROM automations WHERE title = 'not allowed'").length, 0);
  });

  it("output with shell metacharacters never runs in the step that reads it", async () => {
    const parent = await s.newSession("parent: metacharacters");
    const made = await create(s, parent, {
      title: "untrusted output", notify: "never",
      steps: [
        { name: "evil", run: "printf '%s\\n' '$(touch pwned)' '; touch pwned2' '`touch pwned3`'" },
        { name: "reader", run: 'echo "got: $(cat "$STEP_EVIL_OUTPUT_FILE")"; for w in $(cat "$STEP_EVIL_OUTPUT_FILE"); do echo "$w"; done' },
      ],
    });
    await s.say(parent, call("task_run", { id: made.id }));
    const [run] = (await waitUntil(() => { const r = runs(made.id!); return r.length === 1 && ended(r[0]!) && r; }, { timeoutMs: 20_000, what: "the run to end" })) as RunRow[];
    assert.equal(run!.status, "completed");
    assert.match(JSON.parse(run!.steps)[1].tail, /^got: \$\(touch pwned\)\n; touch pwned2\n`touch pwned3`/);
    for (const file of ["pwned", "pwned2", "pwned3"]) assert.equal(existsSync(join(s.server.projectDir, file)), false, `${file} exists`);
  });

  it("background_cancel with the run's batch id kills the running step", async () => {
    const parent = await s.newSession("parent: cancels");
    const made = await create(s, parent, { title: "long step", notify: "never", steps: [{ name: "wait", run: "echo $$ > wait.pid; sleep 120" }, { name: "after", run: "touch after-cancel" }] });
    await s.say(parent, call("task_run", { id: made.id }));
    const pid = await pidWritten(join(s.server.projectDir, "wait.pid"));
    await s.say(parent, call("background_cancel", { task_id: `auto_${made.id}_1` }));
    assert.equal((await toolOutputs(s, parent, "background_cancel"))[0], `auto_${made.id}_1: cancelled; its running step was killed.`);
    assert.equal(runs(made.id!)[0]!.status, "cancelled");
    assert.deepEqual(groupMembers(pid), []);
    assert.equal(existsSync(join(s.server.projectDir, "after-cancel")), false);
  });

  it("a restart in the middle of a step records the run as interrupted and does not run the step again", async () => {
    const parent = await s.newSession("parent: restart");
    const made = await create(s, parent, { title: "cut off", notify: "never", steps: [{ name: "migrate", run: "echo run >> migrate.count; echo $$ > migrate.pid; sleep 120" }] });
    await s.say(parent, call("task_run", { id: made.id }));
    const pidFile = join(s.server.projectDir, "migrate.pid");
    leftoverPids.push(-(await pidWritten(pidFile))); // a SIGKILLed server leaves its detached step behind
    await s.server.kill();
    s.events.close();
    const restarted = await start(s);
    const [run] = (await waitUntil(() => { const r = runs(made.id!); return r.length === 1 && ended(r[0]!) && r; }, { timeoutMs: 20_000, what: "the run to be ended" })) as RunRow[];
    assert.equal(run!.status, "error");
    assert.equal(run!.summary, 'Interrupted: OpenCode stopped during step "migrate" (`echo run >> migrate.count; echo $$ > migrate.pid; sleep 120`); the step is not run again by itself (task_run runs the automation again).');
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(readFileSync(join(restarted.server.projectDir, "migrate.count"), "utf8"), "run\n", "the step ran once");
  });
});

/**
 * The pid a step wrote with `echo $$ > file`, once written: the shell creates the file before it
 * writes, and an empty read gave pid 0 (a kill of -0 signals the test's own process group).
 */
function pidWritten(file: string): Promise<number> {
  return waitUntil(() => (existsSync(file) && Number(readFileSync(file, "utf8").trim())) || undefined, { what: `the step to start (${file})` });
}
