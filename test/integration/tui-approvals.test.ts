import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { startMockModel, defaultResponder, isPluginNotice, isToolResult, lastUserText, type MockModel, type MockRequest, type MockReply } from "../harness/mock-model.ts";
import { startTui, type Tui } from "../harness/tui.ts";
import { startStack, call, toolOutputs, waitUntil, queryDb, pendingPermissions, answerPermission, MOCK_MODEL, PACKAGE_DIR, type Stack } from "../harness/plugin-stack.ts";

/**
 * Issue 33, part 4: the person approving in the real TUI sees what they approve, where they
 * approve it. OpenCode 1.18.33's TUI shows a plugin permission as "Call tool <name>" only, and a
 * bash prompt as "$ <command>" of the linked call's input; the plugin lays what is asked on that
 * input while the prompt is open. The model's own arguments must come back afterwards: it reads
 * them in every later request.
 */
const STEP = "npm test -- --grep 'fast suite'";
const NIGHTLY = { title: "nightly", prompt: "look at the build", steps: [{ name: "test", run: STEP }], triggers: [{ every: "30m" }] };
const NOTES = "notes-from-child.txt";
/** The child writes through bash (allowed): the edit rule "ask" is then the merge's alone. */
const CHILD_PROMPT = call("bash", { command: `printf 'added line one\\nadded line two\\n' > ${NOTES}`, description: "write notes" });

/** The parent's model: the person types plain words, so whatever the screen shows came from the prompt, not from what was typed. */
function responder(req: MockRequest): MockReply {
  if (isToolResult(req)) return defaultResponder(req);
  const said = lastUserText(req);
  if (said === "set up nightly") return { toolCalls: [{ name: "task_create", args: NIGHTLY }] };
  if (said === "start the notes") return { toolCalls: [{ name: "background_task", args: { description: "write notes", prompt: CHILD_PROMPT, agent: "general", isolation: "worktree" } }] };
  if (said === "merge the notes") {
    const id = /task_id: (ses_\w+)/.exec(JSON.stringify(req.body.messages))?.[1];
    return { toolCalls: [{ name: "background_merge", args: { task_id: id, action: "merge" } }] };
  }
  return defaultResponder(req);
}

const PERMISSIONS = { background_automation: "ask", background_merge: "ask", bash: { "*": "ask", "printf *": "allow" }, edit: "ask" };

describe("the TUI's permission prompts show what is approved (real opencode TUI under tmux)", () => {
  let mock: MockModel;
  let tui: Tui;
  const dir = mkdtempSync(join(tmpdir(), "ocbt-tui-"));
  const dbPath = join(dir, "tasks.db");
  before(async () => {
    mock = await startMockModel({ responder });
    // 120 columns: no sidebar beside the transcript (its lines would interleave with a wrapped one).
    tui = await startTui({ width: 120, model: mock.url, pluginDir: PACKAGE_DIR, pluginOptions: { dbPath, pollIntervalMs: 500 }, config: { permission: PERMISSIONS } });
  });
  after(async () => {
    await mock?.close();
    await tui?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Whether the screen shows `text`, in a line that may wrap anywhere (the transcript wraps within words). */
  const shows = (screen: string, text: string) => screen.replace(/\s+/g, "").includes(text.replace(/\s+/g, ""));
  const prompting = (s: string) => /Permission required/.test(s) && /Allow once/.test(s);
  const say = async (text: string) => {
    await tui.type(text);
    await tui.press("Enter");
  };
  /** "Allow once" is selected when a prompt opens; waits until that prompt has gone. */
  const allowOnce = async (shown: string) => {
    await tui.press("Enter");
    await tui.waitForScreen((s) => !s.includes(shown) || !prompting(s), "the prompt closed", 15_000);
  };

  it("task_create with a step: the automation prompt shows the trigger and the step, the bash prompt its command; the model's arguments come back", async () => {
    await say("set up nightly");
    const automation = await tui.waitForScreen((s) => prompting(s) && s.includes("Call tool background_automation"), "the automation's prompt");
    assert.ok(shows(automation, "triggers=every 30m"), `the trigger; the screen was:\n${automation}`);
    assert.ok(shows(automation, `step test: ${STEP}`), "the step's command in full");
    assert.match(automation, /agent: general/);
    assert.match(automation, /report: session/);
    await allowOnce("Call tool background_automation");

    const bash = await tui.waitForScreen((s) => prompting(s) && s.includes("Shell command"), "the step's bash prompt");
    assert.ok(bash.includes(`$ ${STEP}`), "the command, where the prompt shows it");
    assert.ok(shows(bash, 'description=Step "test" of automation "nightly" (every 30m)'), "which step of which automation, and when it runs (on the call's line)");
    await allowOnce("Shell command");
    await waitUntil(() => queryDb(dbPath, "SELECT id FROM automations WHERE title = 'nightly'").length > 0, { timeoutMs: 15_000, what: "the automation stored" });

    const answered = await waitUntil(() => mock.requests().find((r) => isToolResult(r) && JSON.stringify(r.body.messages).includes("task_create")), { timeoutMs: 15_000, what: "the request after task_create" });
    const sent = answered.body.messages.flatMap((m) => m.tool_calls ?? []).find((c) => c.function.name === "task_create")!;
    assert.deepEqual(JSON.parse(sent.function.arguments), NIGHTLY, "the history holds the model's own arguments, nothing laid on them");
  });

  it("a merge: the edit prompt shows the changed file and its added lines; allowed, it lands", async () => {
    await say("start the notes");
    const task = await waitUntil(() => queryDb<{ id: string; status: string }>(dbPath, "SELECT id, status FROM tasks WHERE description = 'write notes'")[0], { timeoutMs: 30_000, what: "the task" });
    await waitUntil(() => queryDb<{ status: string }>(dbPath, "SELECT status FROM tasks WHERE id = ?", task.id)[0]?.status === "completed", { timeoutMs: 30_000, what: "the task settled" });
    // The notice takes the parent's turn: the parent is idle again once its answer is on the screen.
    await waitUntil(() => mock.requests().some((r) => isPluginNotice(lastUserText(r))), { timeoutMs: 30_000, what: "the notice sent to the parent's model" });
    await tui.waitForScreen((s) => /ok: /.test(s) && !prompting(s), "the parent's answer to it", 30_000);

    await say("merge the notes");
    const merge = await tui.waitForScreen((s) => prompting(s) && s.includes("Call tool background_merge"), "the merge's prompt");
    assert.ok(shows(merge, `files=${NOTES} (+2 -0)`), `the files it writes, on the call's line; the screen was:\n${merge}`);
    await allowOnce("Call tool background_merge");

    const edit = await tui.waitForScreen((s) => prompting(s) && s.includes(`Edit ${NOTES}`), "the merge's edit prompt");
    assert.match(edit, /added line one/);
    assert.match(edit, /added line two/);
    await allowOnce(`Edit ${NOTES}`);
    await waitUntil(() => existsSync(join(tui.projectDir, NOTES)), { timeoutMs: 15_000, what: "the merged file" });
    assert.equal(readFileSync(join(tui.projectDir, NOTES), "utf8"), "added line one\nadded line two\n");
  });
});

describe("a merge asks OpenCode's edit permission with its diff (opencode serve)", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ pluginOptions: { pollIntervalMs: 500 }, config: { permission: PERMISSIONS } });
  });
  after(async () => {
    await stack?.stop();
  });

  it("GET /permission lists the edit ask with the file and its diff; rejected, nothing is merged", async () => {
    const parent = await stack.newSession("merge edit ask");
    await stack.say(parent, call("background_task", { description: "write notes", prompt: CHILD_PROMPT, agent: "general", isolation: "worktree" }));
    const [id] = (await toolOutputs(stack, parent, "background_task")).join("\n").match(/ses_\w+/) ?? [];
    const db = `${stack.server.homeDir}/.local/share/opencode-errands/errands.db`;
    await waitUntil(() => queryDb<{ status: string }>(db, "SELECT status FROM tasks WHERE id = ?", id!)[0]?.status === "completed", { timeoutMs: 30_000, what: "the task settled" });
    await waitUntil(async () => (await stack.server.client.session.status()).data?.[parent] === undefined && (await stack.notifications(parent)).length > 0, { timeoutMs: 20_000, what: "the parent heard of it" });
    const head = execFileSync("git", ["rev-parse", "HEAD"], { cwd: stack.server.projectDir, encoding: "utf8" });

    void stack.server.client.session.promptAsync({ path: { id: parent }, body: { agent: "build", model: MOCK_MODEL, parts: [{ type: "text", text: call("background_merge", { task_id: id, action: "merge" }) }] } });
    const merge = await waitUntil(async () => (await pendingPermissions(stack)).find((p) => p.permission === "background_merge"), { timeoutMs: 15_000, what: "the merge prompt" });
    await answerPermission(stack, merge.id, "once");
    const edit = await waitUntil(async () => (await pendingPermissions(stack)).find((p) => p.permission === "edit") as (typeof merge & { metadata: { filepath: string; diff: string }; always: string[] }) | undefined, { timeoutMs: 15_000, what: "the edit prompt" });
    assert.deepEqual(edit.patterns, [NOTES]);
    assert.deepEqual(edit.always, ["*"]);
    assert.equal(edit.metadata.filepath, NOTES);
    assert.match(edit.metadata.diff, /\n\+added line one\n\+added line two\n$/);
    await answerPermission(stack, edit.id, "reject");

    const out = await waitUntil(async () => (await toolOutputs(stack, parent, "background_merge"))[0], { timeoutMs: 15_000, what: "background_merge's answer" });
    assert.match(out, /The user rejected the merge of bg\/\S+; nothing was changed/);
    assert.equal(execFileSync("git", ["rev-parse", "HEAD"], { cwd: stack.server.projectDir, encoding: "utf8" }), head, "nothing merged");
    assert.equal(existsSync(join(stack.server.projectDir, NOTES)), false);
  });
});
