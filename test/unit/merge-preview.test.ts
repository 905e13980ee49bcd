import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commitFiles, gitSync, initRepo, isolateGit, tempDirs } from "../helpers/git-repo.ts";
import { mergePreview } from "../../src/worktrees/merge-preview.ts";

isolateGit();
const temp = tempDirs("merge-preview-");
after(temp.cleanup);

/** A repository on main whose branch bg/x changes `files` (the worktree itself is not needed: the preview reads the main repository only). */
function branchWith(files: Record<string, string>, remove: string[] = []) {
  const repo = initRepo(temp.make(), { "keep.txt": "keep\n", "old.txt": "old\n", "gone.txt": "gone\n" });
  const base = gitSync(repo, ["rev-parse", "HEAD"]);
  gitSync(repo, ["checkout", "--quiet", "-b", "bg/x"]);
  for (const path of remove) gitSync(repo, ["rm", "--quiet", path]);
  commitFiles(repo, files, "child");
  gitSync(repo, ["checkout", "--quiet", "main"]);
  return { path: join(repo, "..", "wt-gone"), branch: "bg/x", base, repo };
}

describe("mergePreview: what a merge will write, read from the main repository", () => {
  it("every file with its lines added and removed, deletions and binaries too, and the unified diff", async () => {
    const wt = branchWith({ "old.txt": "new\nmore\n", "img.bin": "\u0000\u0001binary" }, ["gone.txt"]);
    const preview = await mergePreview(wt, 100_000);
    assert.deepEqual(preview.files, [
      { path: "gone.txt", additions: 0, deletions: 1 },
      { path: "img.bin", additions: "-", deletions: "-" },
      { path: "old.txt", additions: 2, deletions: 1 },
    ]);
    assert.match(preview.diff, /diff --git a\/old\.txt b\/old\.txt\n[^]*\n-old\n\+new\n\+more\n/);
    assert.equal(preview.truncated, false);
  });

  it("what the checkout has since the branch left is not shown as the branch's (HEAD...branch)", async () => {
    const wt = branchWith({ "old.txt": "branch\n" });
    commitFiles(wt.repo, { "keep.txt": "changed on main\n" }, "user");
    const preview = await mergePreview(wt, 100_000);
    assert.deepEqual(preview.files.map((f) => f.path), ["old.txt"]);
  });

  it("over the cap the diff is cut at a file's start; every file is still listed", async () => {
    const wt = branchWith({ "a.txt": "a\n".repeat(50), "b.txt": "b\n".repeat(50) });
    const full = await mergePreview(wt, 100_000);
    const cut = await mergePreview(wt, full.diff.length - 10);
    assert.equal(cut.truncated, true);
    assert.ok(cut.diff.startsWith("diff --git a/a.txt"));
    assert.ok(!cut.diff.includes("b.txt"), "b's diff is left out whole");
    assert.deepEqual(cut.files.map((f) => f.path), ["a.txt", "b.txt"]);
  });

  it("an external diff program the repository names is never run", async () => {
    const wt = branchWith({ "old.txt": "x\n" });
    const marker = join(wt.repo, "..", "ran");
    gitSync(wt.repo, ["config", "diff.external", `sh -c 'touch ${marker}'`]);
    writeFileSync(join(wt.repo, ".gitattributes"), "* diff=evil\n");
    gitSync(wt.repo, ["config", "diff.evil.textconv", `sh -c 'touch ${marker}'`]);
    const preview = await mergePreview(wt, 100_000);
    assert.match(preview.diff, /\+x\n/);
    assert.equal(existsSync(marker), false);
  });
});
