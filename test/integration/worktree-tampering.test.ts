import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  startStack, call, toolOutputs, waitUntil, pluginDbPath, queryDb, pendingPermissions, answerPermission, taskIdsIn, MOCK_MODEL, type Stack,
} from "../harness/plugin-stack.ts";

/**
 * The child is the attacker, with OpenCode's own `write` tool in its worktree: a rewritten `.git`
 * must not make the plugin's git run the child's command or commit on the user's branch, and a
 * branch that carries a file over the user's ignored `.env` must not be merged over it.
 */
describe("a child attacking the user's checkout through its worktree, on the real host", () => {
  let shared: Stack | undefined;
  const outside = mkdtempSync(join(tmpdir(), "worktree-tampering-"));
  after(async () => {
    await shared?.stop();
    rmSync(outside, { recursive: true, force: true });
  });
  const stack = async () => (shared ??= await startStack({ pluginOptions: { pollIntervalMs: 500 } }));

  type Row = { status: string; error: string | null; worktree: string | null };
  const row = (s: Stack, id: string) => queryDb<Row>(pluginDbPath(s.server), "SELECT status, error, worktree FROM tasks WHERE id = ?", id)[0];
  const worktreeOf = (s: Stack, id: string) => JSON.parse(row(s, id)!.worktree!) as { path: string; branch: string; base: string; changes?: string };
  const git = (cwd: string, ...args: string[]) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.invalid", ...args], { cwd, encoding: "utf8" }).trim();
  const write = (filePath: string, content: string) => call("write", { filePath, content });
  /** The user's checkout: HEAD, branch, what the index stages, the status with ignored files. */
  const userCheckout = (s: Stack) => ({
    head: git(s.server.projectDir, "rev-parse", "HEAD"),
    branch: git(s.server.projectDir, "symbolic-ref", "HEAD"),
    index: git(s.server.projectDir, "ls-files", "--stage"),
    status: git(s.server.projectDir, "--no-optional-locks", "status", "--porcelain", "--ignored"),
  });
  const idle = (s: Stack, session: string) =>
    waitUntil(async () => (await s.server.client.session.status()).data?.[session] === undefined, { timeoutMs: 20_000, what: "parent idle" });

  /** One isolated child with `prompt`; its id once it settled (any status) and the parent heard of it. */
  async function launchIsolated(s: Stack, parent: string, description: string, prompt: string): Promise<string> {
    await s.say(parent, call("background_task", { description, prompt, agent: "general", isolation: "worktree" }));
    const [id] = taskIdsIn((await toolOutputs(s, parent, "background_task")).at(-1)!);
    assert.ok(id);
    await waitUntil(() => ["completed", "error", "cancelled"].includes(row(s, id)?.status ?? ""), { timeoutMs: 30_000, what: `task ${id} settled` });
    await waitUntil(async () => (await s.notifications(parent)).join("\n").includes(`task_id="${id}"`), { timeoutMs: 20_000, what: "the parent's notice" });
    await idle(s, parent);
    return id;
  }

  it("a child that points its .git at a fake git dir with an fsmonitor command: nothing runs, the task settles as an error naming the tampering, the user's checkout is untouched", async () => {
    const s = await stack();
    const marker = join(outside, "PWNED");
    const before = userCheckout(s);
    const parent = await s.newSession("parent: tampering");
    const fakeConfig = `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = touch '${marker}'; false\n`;
    const id = await launchIsolated(s, parent, "rewrite git link", [
      write("work.txt", "child's work\n"),
      write("fakegit/HEAD", "ref: refs/heads/main\n"),
      write("fakegit/config", fakeConfig),
      write("fakegit/objects/info/keep", ""),
      write("fakegit/refs/heads/keep", ""),
      write(".git", "gitdir: ./fakegit\n"),
    ].join("\n"));
    const wt = worktreeOf(s, id);
    assert.equal(readFileSync(join(wt.path, ".git"), "utf8"), "gitdir: ./fakegit\n", "the child's write tool rewrote the link");

    assert.equal(existsSync(marker), false, "the child's fsmonitor command ran");
    const settled = row(s, id)!;
    assert.equal(settled.status, "error");
    assert.match(settled.error!, /^worktree_tampered: .*\.git/);
    assert.match((await s.notifications(parent)).join("\n"), /worktree_tampered/);
    assert.deepEqual(userCheckout(s), before, "the user's HEAD, branch, index and status are as they were");
    assert.equal(git(s.server.projectDir, "rev-list", "--count", `${wt.base}..refs/heads/${wt.branch}`), "0", "nothing was committed on the branch");

    // Its branch cannot be merged either (refused before anyone is asked), and nothing runs then.
    await s.say(parent, call("background_merge", { task_id: id, action: "merge" }));
    const merged = (await toolOutputs(s, parent, "background_merge")).at(-1)!;
    assert.match(merged, /worktree_tampered/);
    assert.equal((await pendingPermissions(s)).length, 0);
    assert.equal(existsSync(marker), false);
    assert.deepEqual(userCheckout(s), before);
  });

  it("a branch that carries a .env over the user's ignored .env: background_merge refuses naming .env, before anyone is asked; the file is intact", async () => {
    const s = await stack();
    const project = s.server.projectDir;
    writeFileSync(join(project, ".gitignore"), ".env\n");
    git(project, "add", ".gitignore");
    git(project, "commit", "-q", "-m", "ignore .env");
    writeFileSync(join(project, ".env"), "SECRET=the user's\n");
    const parent = await s.newSession("parent: env");
    // The child stops ignoring .env on its branch, so its settle commits it.
    const id = await launchIsolated(s, parent, "carry an env file", [write(".gitignore", "\n"), write(".env", "SECRET=the child's\n")].join("\n"));
    assert.equal(row(s, id)!.status, "completed");
    const wt = worktreeOf(s, id);
    assert.equal(git(project, "show", `${wt.branch}:.env`), "SECRET=the child's");
    const before = userCheckout(s);

    void s.server.client.session.promptAsync({
      path: { id: parent }, body: { agent: "build", model: MOCK_MODEL, parts: [{ type: "text", text: call("background_merge", { task_id: id, action: "merge" }) }] },
    });
    // Were the user asked, they would say yes (they cannot see the .env in the prompt).
    let asked = false;
    const out = await waitUntil(async () => {
      const prompt = (await pendingPermissions(s)).find((p) => p.sessionID === parent);
      if (prompt) [asked] = [true, await answerPermission(s, prompt.id, "once")];
      return (await toolOutputs(s, parent, "background_merge")).at(-1);
    }, { timeoutMs: 20_000, what: "background_merge output" });
    await idle(s, parent);
    assert.equal(readFileSync(join(project, ".env"), "utf8"), "SECRET=the user's\n", "the user's .env was overwritten");
    assert.match(out, /^Not merged: .*untracked or ignored files of the main checkout \(\.env\)/);
    assert.equal(asked, false, "refused before the user is asked");
    assert.deepEqual(userCheckout(s), before);
  });

  it("a merge the user approves runs no hook of the repository (husky's core.hooksPath)", async () => {
    const s = await stack();
    const project = s.server.projectDir;
    const marker = join(outside, "HOOK-RAN");
    mkdirSync(join(project, ".husky"), { recursive: true });
    for (const hook of ["pre-merge-commit", "prepare-commit-msg", "commit-msg", "post-merge", "post-commit"]) {
      writeFileSync(join(project, ".husky", hook), `#!/bin/sh\ntouch '${marker}'\n`);
      chmodSync(join(project, ".husky", hook), 0o755);
    }
    git(project, "config", "core.hooksPath", ".husky");
    const parent = await s.newSession("parent: hooks");
    const id = await launchIsolated(s, parent, "plain work", write("hooked.txt", "work\n"));
    void s.server.client.session.promptAsync({
      path: { id: parent }, body: { agent: "build", model: MOCK_MODEL, parts: [{ type: "text", text: call("background_merge", { task_id: id, action: "merge" }) }] },
    });
    const prompt = await waitUntil(async () => (await pendingPermissions(s)).find((p) => p.sessionID === parent), { timeoutMs: 15_000, what: "the merge prompt" });
    await answerPermission(s, prompt.id, "once");
    const out = await waitUntil(async () => (await toolOutputs(s, parent, "background_merge")).at(-1), { timeoutMs: 20_000, what: "background_merge output" });
    await idle(s, parent);
    assert.match(out, /^Merged /);
    assert.equal(readFileSync(join(project, "hooked.txt"), "utf8"), "work\n");
    assert.equal(existsSync(marker), false, "a hook ran on merge");
  });
});
