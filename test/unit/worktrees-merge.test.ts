import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createWorktree, mergeWorktree, settleWorktree, type Worktree } from "../../src/worktrees/worktrees.ts";
import { atLeast } from "../../src/worktrees/git-version.ts";
import { commitFiles, gitSync, initRepo, isolateGit, tempDirs } from "../helpers/git-repo.ts";

isolateGit();
const temp = tempDirs("worktrees-merge-");
after(temp.cleanup);

function fresh(files: Record<string, string> = { "shared.txt": "base\n", "other.txt": "other\n" }) {
  const dir = temp.make();
  const repo = join(dir, "repo");
  mkdirSync(repo);
  return { repo: initRepo(repo, files), root: join(dir, "data", "worktrees", "p") };
}

/** A worktree whose child wrote `files` (settled: committed on its branch). */
async function child(repo: string, root: string, files: Record<string, string>): Promise<Worktree> {
  const wt = await createWorktree({ repo, root, description: "child", from: "head" });
  for (const [path, content] of Object.entries(files)) writeFileSync(join(wt.path, path), content);
  await settleWorktree(wt, "child");
  return wt;
}

/** Everything a refusal must leave as it was. */
const snapshot = (repo: string) => ({
  head: gitSync(repo, ["rev-parse", "HEAD"]),
  status: gitSync(repo, ["status", "--porcelain"]),
  shared: readFileSync(join(repo, "shared.txt"), "utf8"),
  worktrees: gitSync(repo, ["worktree", "list"]),
});

for (const dryRunIn of ["merge-tree", "worktree"] as const) {
  describe(`mergeWorktree (conflicts found by ${dryRunIn})`, () => {
    it("merges the first of two children that wrote the same file and refuses the second, changing nothing", async () => {
      const { repo, root } = fresh();
      const one = await child(repo, root, { "shared.txt": "one\n" });
      const two = await child(repo, root, { "shared.txt": "two\n", "two-only.txt": "2\n" });
      const first = await mergeWorktree(one, { dryRunIn });
      assert.equal(first.merged, true);
      assert.match(first.merged ? first.summary : "", new RegExp(`^Merged ${one.branch} into main: 1 commit, 1 file changed`));
      assert.equal(readFileSync(join(repo, "shared.txt"), "utf8"), "one\n");
      assert.equal(gitSync(repo, ["log", "-1", "--format=%s"]), `Merge ${one.branch}`);

      const before = snapshot(repo);
      const second = await mergeWorktree(two, { dryRunIn });
      assert.deepEqual(second.merged ? [] : second.conflicts, ["shared.txt"]);
      assert.match(second.merged ? "" : second.reason, /would conflict\. Nothing was changed/);
      assert.deepEqual(snapshot(repo), before);
    });

    it("refuses when the checkout has uncommitted changes to a file the branch changes, and merges when they touch other files", async () => {
      const { repo, root } = fresh();
      const wt = await child(repo, root, { "shared.txt": "child\n" });
      writeFileSync(join(repo, "shared.txt"), "user's unsaved edit\n");
      const before = snapshot(repo);
      const refused = await mergeWorktree(wt, { dryRunIn });
      assert.deepEqual(refused.merged ? [] : refused.conflicts, ["shared.txt"]);
      assert.match(refused.merged ? "" : refused.reason, /uncommitted changes to files .* Commit or stash them/);
      assert.deepEqual(snapshot(repo), before);

      gitSync(repo, ["checkout", "--", "shared.txt"]);
      writeFileSync(join(repo, "other.txt"), "user's unsaved edit elsewhere\n");
      const merged = await mergeWorktree(wt, { dryRunIn });
      assert.equal(merged.merged, true);
      assert.equal(readFileSync(join(repo, "shared.txt"), "utf8"), "child\n");
      assert.equal(readFileSync(join(repo, "other.txt"), "utf8"), "user's unsaved edit elsewhere\n");
    });
  });
}

describe("mergeWorktree refusals", () => {
  it("an untracked file in the checkout where the branch adds one blocks the merge", async () => {
    const { repo, root } = fresh();
    const wt = await child(repo, root, { "new.txt": "from child\n" });
    writeFileSync(join(repo, "new.txt"), "user's own\n");
    const result = await mergeWorktree(wt);
    assert.deepEqual(result.merged ? [] : result.conflicts, ["new.txt"]);
    assert.equal(readFileSync(join(repo, "new.txt"), "utf8"), "user's own\n");
  });

  it("refuses a detached HEAD, a merge in progress and a worktree with uncommitted work, each naming the fix", async () => {
    const { repo, root } = fresh();
    const wt = await child(repo, root, { "a.txt": "a\n" });
    gitSync(repo, ["checkout", "--quiet", "--detach"]);
    assert.match((await mergeWorktree(wt) as { reason: string }).reason, /detached HEAD\. Check out the branch/);
    gitSync(repo, ["checkout", "--quiet", "main"]);

    const base = gitSync(repo, ["rev-parse", "HEAD"]);
    gitSync(repo, ["checkout", "--quiet", "-b", "side"]);
    commitFiles(repo, { "shared.txt": "side\n" });
    gitSync(repo, ["checkout", "--quiet", "main"]);
    commitFiles(repo, { "shared.txt": "main\n" });
    try { gitSync(repo, ["merge", "side"]); } catch { /* conflicts on purpose */ }
    assert.match((await mergeWorktree(wt) as { reason: string }).reason, /middle of a merge\. Finish or abort it/);
    gitSync(repo, ["merge", "--abort"]);
    assert.notEqual(gitSync(repo, ["rev-parse", "HEAD"]), base);

    writeFileSync(join(wt.path, "a.txt"), "more\n");
    assert.match((await mergeWorktree(wt) as { reason: string }).reason, /worktree .* has uncommitted changes\. Let the task settle/);
  });

  it("says there is nothing to merge when the checkout already has the branch", async () => {
    const { repo, root } = fresh();
    const wt = await child(repo, root, {});
    const result = await mergeWorktree(wt);
    assert.deepEqual(result, { merged: true, summary: `Nothing to merge: main already has every commit of ${wt.branch}.` });
  });

  it("reads git versions", () => {
    assert.equal(atLeast("git version 2.39.5", [2, 38]), true);
    assert.equal(atLeast("git version 2.38.0.windows.1", [2, 38]), true);
    assert.equal(atLeast("git version 2.37.9", [2, 38]), false);
    assert.equal(atLeast("git version 3.0.0", [2, 38]), true);
  });
});
