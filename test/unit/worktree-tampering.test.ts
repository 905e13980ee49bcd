import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createWorktree, mergeWorktree, removeWorktree, settleWorktree, worktreeDiff, type Worktree } from "../../src/worktrees/worktrees.ts";
import { worktreeSupport } from "../../src/plugin/worktree-support.ts";
import { WorktreeTamperedError } from "../../src/core/task-worktree.ts";
import { workspaceBlock } from "../../src/automations/workspace-block.ts";
import { branchLeftBy } from "../../src/automations/run-worktree.ts";
import { runningTask } from "../store/task-fixtures.ts";
import { commitFiles, gitSync, initRepo, isolateGit, tempDirs } from "../helpers/git-repo.ts";

/**
 * The attacker is the child: it can write any file of its worktree (OpenCode's write tool), the
 * `.git` file and `.gitattributes` included. Nothing it writes may make the plugin's git run a
 * command, commit outside its branch, or overwrite a file of the user's checkout.
 */
isolateGit();
const temp = tempDirs("worktree-tampering-");
after(temp.cleanup);

function fresh(files: Record<string, string> = { "README.md": "hello\n" }) {
  const dir = temp.make();
  const repo = join(dir, "repo");
  mkdirSync(repo);
  return { dir, repo: initRepo(repo, files), root: join(dir, "data", "worktrees", "p"), marker: join(dir, "PWNED") };
}

/** What the user's checkout is: its HEAD commit, branch, index and status. */
const userCheckout = (repo: string) => ({
  head: gitSync(repo, ["rev-parse", "HEAD"]),
  branch: gitSync(repo, ["symbolic-ref", "HEAD"]),
  index: readFileSync(join(repo, ".git", "index")).toString("base64"),
  status: gitSync(repo, ["status", "--porcelain", "--ignored"]),
});

/** A git dir of the child's own making inside its worktree, whose config runs `touch marker` on status/add. */
function fakeGitDir(repo: string, wt: Worktree, marker: string): string {
  const fake = join(wt.path, "fakegit");
  cpSync(join(repo, ".git"), fake, { recursive: true });
  gitSync(repo, ["--git-dir", fake, "config", "core.fsmonitor", `touch '${marker}'; false`]);
  return fake;
}

describe("a worktree whose .git the child rewrote", () => {
  it("fsmonitor in a fake git dir: nothing runs, settle is an error naming the tampering, the user's checkout is untouched", async () => {
    const { repo, root, marker } = fresh();
    const wt = await createWorktree({ repo, root, description: "child", from: "head" });
    writeFileSync(join(wt.path, "work.txt"), "child's work\n");
    fakeGitDir(repo, wt, marker);
    writeFileSync(join(wt.path, ".git"), "gitdir: ./fakegit\n");
    const before = userCheckout(repo);

    await assert.rejects(settleWorktree(wt, "child"), /worktree_tampered: .*\.git/);
    await worktreeDiff(wt, 10_000).catch(() => undefined);
    await removeWorktree(wt, { deleteBranch: false }).catch(() => undefined);

    assert.equal(existsSync(marker), false, "the child's fsmonitor command ran");
    assert.deepEqual(userCheckout(repo), before);
    assert.equal(gitSync(repo, ["rev-list", "--count", `${wt.base}..refs/heads/${wt.branch}`]), "0", "nothing is committed on the branch");
  });

  it("a .git pointing at the main repository: no commit lands on the user's branch", async () => {
    const { repo, root } = fresh();
    const wt = await createWorktree({ repo, root, description: "child", from: "head" });
    writeFileSync(join(wt.path, "work.txt"), "child's work\n");
    writeFileSync(join(wt.path, ".git"), `gitdir: ${join(repo, ".git")}\n`);
    const before = userCheckout(repo);

    await assert.rejects(settleWorktree(wt, "child"), /worktree_tampered/);

    assert.deepEqual(userCheckout(repo), before);
    assert.equal(gitSync(repo, ["log", "-1", "--format=%s"]), "first");
  });

  it("a .git replaced by a directory or a symbolic link is tampering too", async () => {
    const { repo, root } = fresh();
    const wt = await createWorktree({ repo, root, description: "child", from: "head" });
    const kept = readFileSync(join(wt.path, ".git"), "utf8");
    writeFileSync(join(wt.path, "elsewhere"), kept);
    gitSync(wt.path, ["status"]); // still a working worktree before the swap
    const { rmSync, symlinkSync } = await import("node:fs");
    rmSync(join(wt.path, ".git"));
    symlinkSync(join(wt.path, "elsewhere"), join(wt.path, ".git"));
    await assert.rejects(settleWorktree(wt, "child"), /worktree_tampered/);
  });

  it("the core's port turns it into an error the task settles with", async () => {
    const { repo, root, marker } = fresh();
    const support = worktreeSupport(repo, () => root);
    const made = await support.create("child", "head");
    fakeGitDir(repo, { ...made }, marker);
    writeFileSync(join(made.path, ".git"), "gitdir: ./fakegit\n");
    const task = { id: "ses_x", description: "child", worktree: made } as Parameters<typeof support.settle>[0];
    await assert.rejects(support.settle(task), (error: Error) => error instanceof WorktreeTamperedError && /^worktree_tampered: /.test(error.message));
    assert.equal(existsSync(marker), false);
  });

  it("a filter named in the child's .gitattributes and set in the repository's config does not run at settle", async () => {
    const { repo, root, marker } = fresh();
    const wt = await createWorktree({ repo, root, description: "child", from: "head" });
    gitSync(repo, ["config", "filter.evil.clean", `touch '${marker}'; cat`]);
    gitSync(repo, ["config", "filter.evil.process", `touch '${marker}'; false`]);
    gitSync(repo, ["config", "filter.evil.required", "true"]);
    writeFileSync(join(wt.path, ".gitattributes"), "*.txt filter=evil diff=evil\n");
    gitSync(repo, ["config", "diff.evil.textconv", `touch '${marker}'; cat`]);
    writeFileSync(join(wt.path, "work.txt"), "child's work\n");

    const changes = await settleWorktree(wt, "child");
    await worktreeDiff(wt, 10_000);
    assert.equal(changes.changed, true);
    assert.equal(existsSync(marker), false, "a filter or textconv of the child's choosing ran");
  });

  it("a repository the child makes inside its worktree (a gitlink) is not looked into: its fsmonitor and filters do not run", async () => {
    const { repo, root, marker } = fresh();
    const wt = await createWorktree({ repo, root, description: "child", from: "head" });
    const sub = join(wt.path, "sub");
    mkdirSync(sub);
    gitSync(sub, ["init", "--quiet"]);
    commitFiles(sub, { "f.txt": "x\n" }, "inner");
    gitSync(sub, ["config", "core.fsmonitor", `touch '${marker}'; false`]);
    gitSync(sub, ["config", "filter.evil.clean", `touch '${marker}'; cat`]);
    writeFileSync(join(sub, ".gitattributes"), "* filter=evil\n");
    // Same size, same second: git cannot tell from the file's stat, so it would hash it through the filter.
    writeFileSync(join(sub, "f.txt"), "y\n");

    await settleWorktree(wt, "child");
    writeFileSync(join(sub, "f.txt"), "z\n");
    await worktreeDiff(wt, 10_000);
    await mergeWorktree(wt);
    assert.equal(existsSync(marker), false, "git ran the inner repository's command");
  });
});

describe("an isolated automation run's workspace block", () => {
  it("reads the worktree through its own git dir: a rewritten .git runs nothing and names the run's real branch", async () => {
    const { repo, root, marker } = fresh();
    const wt = await createWorktree({ repo, root, description: "run", from: "head" });
    fakeGitDir(repo, wt, marker);
    writeFileSync(join(wt.path, ".git"), "gitdir: ./fakegit\n");
    writeFileSync(join(wt.path, "step-output.txt"), "x\n");

    const block = await workspaceBlock(wt, { timeoutMs: 10_000 });
    assert.equal(existsSync(marker), false, "the fake git dir's fsmonitor ran");
    assert.match(block, new RegExp(`^\\[Workspace\\]\\nbranch ${wt.branch} `));
  });
});

describe("an isolated automation run whose task's child rewrote .git", () => {
  it("keeps the branch for what was committed before, commits nothing more, runs nothing", async () => {
    const { repo, root, marker } = fresh();
    const wt = await createWorktree({ repo, root, description: "nightly", from: "default-branch" });
    commitFiles(wt.path, { "report.md": "found 2\n" }, "child's commit");
    writeFileSync(join(wt.path, "notes.md"), "uncommitted\n");
    fakeGitDir(repo, wt, marker);
    writeFileSync(join(wt.path, ".git"), "gitdir: ./fakegit\n");
    const task = runningTask("ses_run1", { status: "error", description: "nightly (automation run #1)", worktree: wt });

    assert.equal(await branchLeftBy(task), wt.branch);
    assert.equal(existsSync(marker), false);
    assert.equal(gitSync(repo, ["log", "-1", "--format=%s", wt.branch]), "child's commit");
  });

  it("with nothing committed before, leaves no branch and no directory", async () => {
    const { repo, root, marker } = fresh();
    const wt = await createWorktree({ repo, root, description: "nightly", from: "default-branch" });
    writeFileSync(join(wt.path, "notes.md"), "uncommitted\n");
    fakeGitDir(repo, wt, marker);
    writeFileSync(join(wt.path, ".git"), `gitdir: ${join(repo, ".git")}\n`);
    const task = runningTask("ses_run2", { status: "error", description: "nightly (automation run #2)", worktree: wt });

    assert.equal(await branchLeftBy(task), undefined);
    assert.equal(existsSync(wt.path), false);
    assert.equal(existsSync(marker), false);
    assert.equal(gitSync(repo, ["branch", "--list", wt.branch]), "");
    assert.equal(gitSync(repo, ["log", "-1", "--format=%s"]), "first");
  });
});

describe("background_merge into the user's checkout", () => {
  it("runs no repository hook (core.hooksPath, husky)", async () => {
    const { repo, root, marker } = fresh();
    mkdirSync(join(repo, ".husky"));
    for (const hook of ["pre-merge-commit", "prepare-commit-msg", "commit-msg", "post-merge", "post-commit", "post-checkout"]) {
      writeFileSync(join(repo, ".husky", hook), `#!/bin/sh\ntouch '${marker}'\n`);
      chmodSync(join(repo, ".husky", hook), 0o755);
    }
    gitSync(repo, ["config", "core.hooksPath", ".husky"]);
    const wt = await createWorktree({ repo, root, description: "child", from: "head" });
    writeFileSync(join(wt.path, "work.txt"), "child's work\n");
    await settleWorktree(wt, "child");

    const result = await mergeWorktree(wt);
    assert.equal(result.merged, true, result.merged ? "" : result.reason);
    assert.equal(existsSync(marker), false, "a hook ran on merge");
  });

  it("a branch that force-adds .env over the user's ignored .env is refused naming .env; the file is intact", async () => {
    const { repo, root } = fresh({ "README.md": "hello\n", ".gitignore": ".env\n" });
    writeFileSync(join(repo, ".env"), "SECRET=the user's\n");
    const wt = await createWorktree({ repo, root, description: "child", from: "head" });
    writeFileSync(join(wt.path, ".env"), "SECRET=the child's\n");
    gitSync(wt.path, ["add", "--force", ".env"]);
    commitFiles(wt.path, { "work.txt": "child's work\n" }, "child");
    const before = userCheckout(repo);

    const result = await mergeWorktree(wt);
    assert.equal(result.merged, false);
    assert.deepEqual(result.merged ? [] : result.conflicts, [".env"]);
    assert.match(result.merged ? "" : result.reason, /untracked or ignored.*\.env|\.env.*untracked or ignored/s);
    assert.equal(readFileSync(join(repo, ".env"), "utf8"), "SECRET=the user's\n");
    assert.deepEqual(userCheckout(repo), before);
  });
});
