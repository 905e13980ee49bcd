import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { startStack, call, toolOutputs, waitUntil, pluginDbPath, queryDb, type Stack } from "../harness/plugin-stack.ts";
import { messageText, startMockModel, type MockModel, type MockRequest } from "../harness/mock-model.ts";

/**
 * The workspace block on a real OpenCode: the project is a git clone with an upstream, a commit
 * ahead, one behind (fetched) and uncommitted files; an automation run's first model request
 * carries the block, and it says what git itself says about the project. With the option off,
 * the same run carries none.
 */
describe("the workspace block in an automation run's prompt", () => {
  let mock: MockModel;
  const stacks: Stack[] = [];
  const root = mkdtempSync(join(tmpdir(), "ocbt-runctx-"));
  after(async () => {
    for (const stack of stacks) await stack.stop().catch(() => undefined);
    await mock?.close();
    rmSync(root, { recursive: true, force: true });
  });

  const gitEnv = { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };
  const git = (cwd: string, ...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "init.defaultBranch=main", ...args], { cwd, env: gitEnv, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).replace(/\n$/, "");
  const commit = (cwd: string, file: string, subject: string) => {
    writeFileSync(join(cwd, file), `${subject}\n`);
    git(cwd, "add", file);
    git(cwd, "commit", "-q", "-m", subject);
  };

  /** origin (bare) ← project (a clone on branch main) and a second clone that pushes after the project fetched once. */
  function makeProject(): string {
    const origin = join(root, "origin.git");
    const project = join(root, "project");
    const other = join(root, "other");
    git(root, "init", "-q", "--bare", origin);
    git(root, "clone", "-q", origin, project);
    commit(project, "README.md", "Initial layout");
    git(project, "push", "-q", "-u", "origin", "main");
    git(root, "clone", "-q", origin, other);
    commit(other, "CHANGELOG.md", "Note the release");
    git(other, "push", "-q", "origin", "main");
    git(project, "fetch", "-q");
    commit(project, "parser.ts", "Fix the date parser");
    commit(project, "parser.test.ts", "Test leap years");
    writeFileSync(join(project, "README.md"), "changed\n");
    writeFileSync(join(project, "notes.txt"), "todo\n");
    writeFileSync(join(project, "scratch.ts"), "x\n");
    return project;
  }

  /** What git itself says, read the plain way (porcelain v1, rev-list), to compare with the block. */
  function gitState(project: string) {
    const [ahead, behind] = git(project, "rev-list", "--left-right", "--count", "HEAD...@{u}").split(/\s+/).map(Number);
    const files = git(project, "status", "--porcelain").split("\n").filter(Boolean).map((l) => l.slice(3)).sort();
    const commits = git(project, "log", "-3", "--format=%h %s").split("\n");
    return { branch: git(project, "rev-parse", "--abbrev-ref", "HEAD"), upstream: git(project, "rev-parse", "--abbrev-ref", "@{u}"), ahead, behind, files, commits };
  }

  const start = async (project: string, pluginOptions: Record<string, unknown>) => {
    mock ??= await startMockModel();
    const stack = await startStack({ mock, pluginOptions, reuse: { projectDir: project }, config: { permission: { background_automation: "allow" } } });
    stacks.push(stack);
    return stack;
  };

  /** Creates an automation with no trigger, runs it with task_run, waits for the run to end; returns its child's first model request. */
  async function runOnce(stack: Stack, title: string): Promise<MockRequest> {
    const parent = await stack.newSession(`parent: ${title}`);
    await stack.say(parent, call("task_create", { title, prompt: "REPLY looked at the workspace", notify: "never" }));
    const id = /Created automation (au\w+)/.exec((await toolOutputs(stack, parent, "task_create"))[0] ?? "")?.[1];
    assert.ok(id, "task_create created the automation");
    await stack.say(parent, call("task_run", { id }));
    const db = pluginDbPath(stack.server);
    const ended = await waitUntil(() => queryDb(db, "SELECT status, task_id FROM automation_runs WHERE automation_id = ?", id).find((r) => r.status !== "running" && r.status !== "starting"), { timeoutMs: 20_000, what: `the run of "${title}"` });
    assert.equal(ended.status, "completed");
    const first = mock.requests().find((r) => messageText(r.body.messages.find((m) => m.role === "user")!).startsWith(`[Automation "${title}" (`));
    assert.ok(first, "the run's child asked the model");
    return first;
  }

  const childPrompt = (request: MockRequest) => request.body.messages.filter((m) => m.role === "user").map(messageText).join("\n");

  it("is in the run's first model request and matches the project's git state", async () => {
    const project = makeProject();
    const stack = await start(project, {});
    const prompt = childPrompt(await runOnce(stack, "workspace on"));
    const state = gitState(project);
    assert.deepEqual([state.branch, state.upstream, state.ahead, state.behind, state.files.length], ["main", "origin/main", 2, 1, 3], "the fixture is what the test meant");
    const block = /\n\n(\[Workspace\]\n[\s\S]*?)\n\nREPLY looked at the workspace$/.exec(prompt)?.[1];
    assert.ok(block, `a block between the context line and the prompt:\n${prompt}`);
    const lines = block.split("\n");
    assert.equal(lines[1], `branch ${state.branch} (${state.ahead} ahead, ${state.behind} behind ${state.upstream})`);
    const files = /^(\d+) uncommitted files: (.*)$/.exec(lines[2]!);
    assert.ok(files, lines[2]);
    assert.equal(Number(files[1]), state.files.length);
    assert.deepEqual(files[2]!.split(", ").sort(), state.files);
    assert.equal(lines[3], "recent commits:");
    assert.deepEqual(lines.slice(4).map((l) => l.replace(/ \(\d+ (s|min) ago\)$/, "")), state.commits.map((c) => `- ${c}`));
  });

  it("is left out with workspaceContext: false", async () => {
    const stack = await start(join(root, "project"), { workspaceContext: false });
    const prompt = childPrompt(await runOnce(stack, "workspace off"));
    assert.doesNotMatch(prompt, /\[Workspace/);
    assert.match(prompt, /^\[Automation "workspace off" \(au\w+\), run #1, fired by run now \(task_run\)\]\n\nREPLY looked at the workspace$/);
  });
});
