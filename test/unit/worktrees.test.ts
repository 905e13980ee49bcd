import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  createWorktree, nameBranch, settleWorktree, worktreeDiff, hasUnmergedCommits, removeWorktree, listWorktrees,
  worktreesRoot, isInsideWorktreesRoot, slugOf, WorktreeRefusal, sparesMade, type Worktree,
} from "../../src/worktrees/worktrees.ts";
import { takeSpare } from "../../src/worktrees/spare-worktree.ts";
import { commitFiles, gitSync, initRepo, isolateGit, tempDirs } from "../helpers/git-repo.ts";

isolateGit();
const temp = tempDirs("worktrees-");
after(temp.cleanup);

/** A repository with one commit and a worktrees root beside it (never inside it). */
function initRepoAt(path: string, files?: Record<string, string>) {
  mkdirSync(path, { recursive: true });
  return initRepo(path, files);
}
function fresh(files?: Record<string, string>) {
  const dir = temp.make();
  return { repo: initRepoAt(join(dir, "repo"), files), root: join(dir, "data", "worktrees", "proj") };
}
const head = (dir: string) => gitSync(dir, ["rev-parse", "HEAD"]);
const branches = (repo: string) => gitSync(repo, ["branch", "--format=%(refname:short)"]).split("\n");

describe("worktree paths", () => {
  it("puts a project's worktrees under <data>/worktrees/<project id> and knows what is inside", () => {
    assert.equal(worktreesRoot("/d", "abc123"), "/d/worktrees/abc123");
    assert.equal(isInsideWorktreesRoot("/d", "/d/worktrees/abc/1234-x"), true);
    assert.equal(isInsideWorktreesRoot("/d", "/d/worktrees"), true);
    assert.equal(isInsideWorktreesRoot("/d", "/d/worktreesX/a"), false);
    assert.equal(isInsideWorktreesRoot("/d", "/d/worktrees/../other"), false);
    assert.throws(() => worktreesRoot("/d", "../x"), /cannot name a folder/);
  });

  it("slugs descriptions to lowercase a-z0-9 and dashes, at most 40 characters", () => {
    assert.equal(slugOf("Fix the Login bug!"), "fix-the-login-bug");
    assert.equal(slugOf("  --Ünïcode ok--  "), "n-code-ok");
    assert.equal(slugOf("日本"), "task");
    const long = slugOf("a".repeat(39) + " bcd");
    assert.equal(long, "a".repeat(39));
    assert.ok(slugOf("x".repeat(100)).length <= 40);
  });
});

describe("createWorktree", () => {
  it("refuses a directory that is not a git repository, naming the fix, and makes nothing", async () => {
    const dir = temp.make();
    const root = join(dir, "data", "worktrees", "p");
    await assert.rejects(createWorktree({ repo: dir, root, description: "x", from: "head" }), (error: Error) => {
      assert.ok(error instanceof WorktreeRefusal);
      assert.equal(error.message, `${dir} is not a git repository, so isolation "worktree" cannot be used. Run \`git init\` there and commit, or leave out isolation.`);
      return true;
    });
    assert.equal(existsSync(root), false);
  });

  it("refuses a repository without a commit", async () => {
    const dir = temp.make();
    gitSync(dir, ["init", "--quiet"]);
    await assert.rejects(createWorktree({ repo: dir, root: join(dir, "..", "wt"), description: "x", from: "head" }), /has no commit yet.*Commit once/);
  });

  it("checks out HEAD on a bg/new-<hex> branch outside the project, without the checkout's uncommitted changes, and records the base", async () => {
    const { repo, root } = fresh({ "a.txt": "committed\n" });
    writeFileSync(join(repo, "a.txt"), "uncommitted\n");
    writeFileSync(join(repo, "new.txt"), "untracked\n");
    const wt = await createWorktree({ repo, root, description: "Fix the bug", from: "head" });
    assert.match(wt.branch, /^bg\/new-[0-9a-f]{8}$/);
    assert.equal(wt.path, join(root, `${wt.branch.slice(7)}-fix-the-bug`));
    assert.equal(wt.base, head(repo));
    assert.equal(wt.repo, repo);
    assert.equal(readFileSync(join(wt.path, "a.txt"), "utf8"), "committed\n");
    assert.equal(existsSync(join(wt.path, "new.txt")), false);
    assert.equal(gitSync(repo, ["config", `branch.${wt.branch}.errandsBase`]), wt.base);
    assert.equal(readFileSync(join(repo, "a.txt"), "utf8"), "uncommitted\n", "the checkout is untouched");
  });

  it("from a linked worktree, still belongs to the main checkout", async () => {
    const { repo, root } = fresh();
    const first = await createWorktree({ repo, root, description: "one", from: "head" });
    const second = await createWorktree({ repo: first.path, root, description: "two", from: "head" });
    assert.equal(second.repo, repo);
  });

  it("from the default branch takes main's latest commit even when the checkout is elsewhere", async () => {
    const { repo, root } = fresh();
    const mainTip = head(repo);
    gitSync(repo, ["checkout", "--quiet", "-b", "feature"]);
    commitFiles(repo, { "f.txt": "feature\n" });
    const wt = await createWorktree({ repo, root, description: "nightly", from: "default-branch" });
    assert.equal(wt.base, mainTip);
    assert.equal(existsSync(join(wt.path, "f.txt")), false);
  });
});

describe("spare checkouts", () => {
  const spares = (root: string) => readdirSync(root).filter((n) => n.startsWith(".spare-"));

  it("a launch takes the spare made after the previous one, switched to the new base, and a new spare follows", async () => {
    const { repo, root } = fresh({ "a.txt": "one\n" });
    const first = await createWorktree({ repo, root, description: "first", from: "head", spare: "always" });
    await sparesMade();
    const [spare] = spares(root);
    assert.match(spare ?? "", /^\.spare-[0-9a-f]{8}$/);
    const newBase = commitFiles(repo, { "a.txt": "two\n", "b.txt": "b\n" }, "moved on");
    writeFileSync(join(repo, "dirty.txt"), "not carried over\n");

    const second = await createWorktree({ repo, root, description: "second", from: "head", spare: "always" });
    assert.equal(spares(root).includes(spare!), false, "the spare was taken");
    assert.equal(second.base, newBase);
    assert.equal(gitSync(second.path, ["symbolic-ref", "--short", "HEAD"]), second.branch);
    assert.equal(gitSync(second.path, ["rev-parse", "HEAD"]), newBase);
    assert.equal(readFileSync(join(second.path, "a.txt"), "utf8"), "two\n");
    assert.equal(existsSync(join(second.path, "dirty.txt")), false);
    assert.equal(gitSync(second.path, ["status", "--porcelain"]), "");
    assert.equal(readFileSync(join(first.path, "a.txt"), "utf8"), "one\n", "the first worktree is its own");
    await sparesMade();
    assert.equal(spares(root).length, 1);
    const listed = await listWorktrees(root);
    assert.deepEqual(listed.map((w) => w.branch).sort(), [first.branch, second.branch].sort(), "spares are not listed");
  });

  it("makes the spare where its task will work, has the host warm that directory before it is ready, and hands it over on the base without a checkout", async () => {
    const { repo, root } = fresh({ "a.txt": "one\n" });
    const warmed: { path: string; readyThen: boolean }[] = [];
    const warm = async (path: string) => void warmed.push({ path, readyThen: spares(root).some((n) => !n.startsWith(".spare-making-")) });
    await createWorktree({ repo, root, description: "first", from: "head", spare: "always", warm });
    await sparesMade();
    const [marker] = spares(root);
    const spareDir = join(root, marker!.slice(".spare-".length));
    assert.deepEqual(warmed, [{ path: spareDir, readyThen: false }], "warmed once, before it was marked ready");
    assert.equal(readFileSync(join(root, marker!), "utf8"), head(repo), "the marker holds the spare's commit");
    const before = statSync(join(spareDir, "a.txt")).mtimeMs;

    const second = await createWorktree({ repo, root, description: "second", from: "head", spare: "always", warm });
    assert.equal(second.path, spareDir, "the task keeps the spare's directory (the host's instance for it is warm)");
    assert.equal(gitSync(second.path, ["symbolic-ref", "--short", "HEAD"]), second.branch);
    assert.equal(gitSync(second.path, ["status", "--porcelain"]), "");
    assert.equal(statSync(join(spareDir, "a.txt")).mtimeMs, before, "no file was written");
    await sparesMade();
    assert.equal(warmed.length, 2, "the next spare is warmed too");
    assert.notEqual(warmed[1]!.path, spareDir);
  });

  it("a spare is taken by one launch only, and a failing warm still leaves a ready spare", async () => {
    const { repo, root } = fresh();
    await createWorktree({ repo, root, description: "first", from: "head", spare: "always", warm: async () => { throw new Error("host down"); } });
    await sparesMade();
    assert.equal(spares(root).length, 1);
    const base = head(repo);
    const taken = await Promise.all([takeSpare(repo, root, "bg/one", base), takeSpare(repo, root, "bg/two", base)]);
    assert.equal(taken.filter(Boolean).length, 1);
    assert.deepEqual(spares(root), []);
    assert.equal(branches(repo).filter((b) => b === "bg/one" || b === "bg/two").length, 1, "the loser made no branch");
  });

  it("makes none without spare, nor with spare: true for a small project (it checks out quickly)", async () => {
    const { repo, root } = fresh();
    await createWorktree({ repo, root, description: "x", from: "head" });
    await createWorktree({ repo, root, description: "y", from: "head", spare: true });
    await sparesMade();
    assert.deepEqual(spares(root), []);
  });

  it("makes one with spare: true for a project of thousands of files", async () => {
    const files = Object.fromEntries(Array.from({ length: 3500 }, (_, i) => [`src/d${i % 50}/file-${i}.ts`, `${i}\n`]));
    const { repo, root } = fresh(files);
    await createWorktree({ repo, root, description: "x", from: "head", spare: true });
    await sparesMade();
    assert.equal(spares(root).length, 1);
  });
});

describe("launches at once", () => {
  it("five creations and renames in parallel all succeed (a config file locked by one is retried by another)", async () => {
    const { repo, root } = fresh();
    const made = await Promise.all([1, 2, 3, 4, 5].map(async (n) =>
      nameBranch(await createWorktree({ repo, root, description: `p${n}`, from: "head", spare: n === 1 ? "always" : false }), `id${n}`, `p${n}`)));
    await sparesMade();
    assert.deepEqual(made.map((w) => w.branch).sort(), ["bg/id1-p1", "bg/id2-p2", "bg/id3-p3", "bg/id4-p4", "bg/id5-p5"]);
    for (const wt of made) assert.equal(gitSync(repo, ["config", `branch.${wt.branch}.errandsBase`]), wt.base);
    assert.equal((await listWorktrees(root)).length, 5);
  });
});

describe("nameBranch", () => {
  it("renames the branch to bg/<short id>-<slug>, moving the recorded base, and avoids taken names", async () => {
    const { repo, root } = fresh();
    const a = await nameBranch(await createWorktree({ repo, root, description: "x", from: "head" }), "abc123", "Add a Button");
    assert.equal(a.branch, "bg/abc123-add-a-button");
    assert.equal(gitSync(a.path, ["symbolic-ref", "--short", "HEAD"]), a.branch);
    assert.equal(gitSync(repo, ["config", `branch.${a.branch}.errandsBase`]), a.base);
    const b = await nameBranch(await createWorktree({ repo, root, description: "y", from: "head" }), "abc123", "Add a Button");
    assert.equal(b.branch, "bg/abc123-add-a-button-2");
    await assert.rejects(nameBranch(b, "../evil", "x"), /cannot be part of a branch name/);
  });
});

describe("settleWorktree and worktreeDiff", () => {
  it("commits uncommitted work as one work-in-progress commit and reports commits and diff stat against the base", async () => {
    const { repo, root } = fresh({ "a.txt": "one\n" });
    const wt = await createWorktree({ repo, root, description: "x", from: "head" });
    commitFiles(wt.path, { "b.txt": "child commit\n" }, "Child made b");
    writeFileSync(join(wt.path, "a.txt"), "changed\n");
    writeFileSync(join(wt.path, "c.txt"), "untracked\n");
    const changes = await settleWorktree(wt, `task ses_1 "x"`);
    assert.equal(changes.changed, true);
    assert.deepEqual(changes.commits.map((c) => c.subject), ["Child made b", `work in progress of task ses_1 "x"`]);
    assert.match(changes.diffStat, /a\.txt/);
    assert.match(changes.diffStat, /3 files changed/);
    assert.equal(gitSync(wt.path, ["status", "--porcelain"]), "");
    assert.equal(readFileSync(join(repo, "a.txt"), "utf8"), "one\n");
  });

  it("says unchanged when the child did nothing", async () => {
    const { repo, root } = fresh();
    const wt = await createWorktree({ repo, root, description: "x", from: "head" });
    const changes = await settleWorktree(wt, "t");
    assert.deepEqual(changes, { branch: wt.branch, commits: [], diffStat: "", changed: false });
    assert.equal(await hasUnmergedCommits(wt), false);
  });

  it("caps the diff at a line end and says how to see the rest", async () => {
    const { repo, root } = fresh({ "a.txt": "one\n" });
    const wt = await createWorktree({ repo, root, description: "x", from: "head" });
    writeFileSync(join(wt.path, "a.txt"), Array.from({ length: 200 }, (_, i) => `line ${i}`).join("\n"));
    writeFileSync(join(wt.path, "new.txt"), "n\n");
    const full = await worktreeDiff(wt, 100_000);
    assert.equal(full.truncated, false);
    assert.match(full.text, /\+line 199/);
    assert.match(full.text, /Untracked files.*\nnew\.txt/);
    const capped = await worktreeDiff(wt, 300);
    assert.equal(capped.truncated, true);
    assert.ok(capped.text.length <= 300 && full.text.startsWith(capped.text));
    assert.equal(capped.seeRest, `git -C ${wt.path} diff ${wt.base}`);
    await settleWorktree(wt, "t");
    rmSync(wt.path, { recursive: true });
    const settled = await worktreeDiff(wt, 100_000);
    assert.match(settled.text, /\+\+\+ b\/new\.txt/);
    assert.equal(settled.seeRest, `git -C ${repo} diff ${wt.base} ${wt.branch}`);
  });
});

describe("removeWorktree", () => {
  async function withCommit(): Promise<{ repo: string; root: string; wt: Worktree }> {
    const { repo, root } = fresh();
    const wt = await createWorktree({ repo, root, description: "x", from: "head" });
    commitFiles(wt.path, { "b.txt": "b\n" });
    return { repo, root, wt };
  }

  it("discards worktree and branch when told to", async () => {
    const { repo, wt } = await withCommit();
    assert.equal(await hasUnmergedCommits(wt), true);
    assert.deepEqual(await removeWorktree(wt, { deleteBranch: true }), { branchDeleted: true });
    assert.equal(existsSync(wt.path), false);
    assert.ok(!branches(repo).includes(wt.branch));
  });

  it("keeps the branch, with uncommitted work saved on it, when not told to delete it", async () => {
    const { repo, wt } = await withCommit();
    writeFileSync(join(wt.path, "late.txt"), "late\n");
    assert.deepEqual(await removeWorktree(wt, { deleteBranch: false }), { branchDeleted: false });
    assert.equal(existsSync(wt.path), false);
    assert.equal(gitSync(repo, ["show", `${wt.branch}:late.txt`]), "late");
  });

  it("if-merged keeps a branch with unmerged commits and deletes one without", async () => {
    const { repo, root, wt } = await withCommit();
    assert.deepEqual(await removeWorktree(wt, { deleteBranch: "if-merged" }), { branchDeleted: false });
    assert.ok(branches(repo).includes(wt.branch));
    const empty = await createWorktree({ repo, root, description: "y", from: "head" });
    assert.deepEqual(await removeWorktree(empty, { deleteBranch: "if-merged" }), { branchDeleted: true });
  });

  it("prunes a worktree whose directory is already gone", async () => {
    const { repo, wt } = await withCommit();
    rmSync(wt.path, { recursive: true });
    await removeWorktree(wt, { deleteBranch: true });
    assert.ok(!gitSync(repo, ["worktree", "list"]).includes(wt.path));
  });
});

describe("listWorktrees", () => {
  it("lists with git alone: branch, base, unmerged, missing directories, and kept branches", async () => {
    const { repo, root } = fresh();
    const clean = await createWorktree({ repo, root, description: "clean", from: "head" });
    const busy = await createWorktree({ repo, root, description: "busy", from: "head" });
    commitFiles(busy.path, { "b.txt": "b\n" });
    const gone = await createWorktree({ repo, root, description: "gone", from: "head" });
    rmSync(gone.path, { recursive: true });
    const kept = await createWorktree({ repo, root, description: "kept", from: "head" });
    commitFiles(kept.path, { "k.txt": "k\n" });
    await removeWorktree(kept, { deleteBranch: false });
    await createWorktree({ repo: initRepoAt(join(temp.make(), "other")), root: join(root, "..", "other-project"), description: "z", from: "head" });

    const listed = await listWorktrees(root);
    const by = (b: string) => listed.find((w) => w.branch === b);
    assert.equal(listed.length, 4);
    assert.deepEqual(by(clean.branch), { ...clean, unmerged: false, unmergedCommits: 0, exists: true, registered: true });
    assert.deepEqual(by(busy.branch), { ...busy, unmerged: true, unmergedCommits: 1, exists: true, registered: true });
    assert.deepEqual(by(gone.branch), { ...gone, unmerged: false, unmergedCommits: 0, exists: false, registered: true });
    assert.deepEqual(by(kept.branch), { ...kept, path: "", unmerged: true, unmergedCommits: 1, exists: false, registered: false });
    assert.deepEqual(await listWorktrees(join(root, "..", "nothing-here")), []);
  });
});
