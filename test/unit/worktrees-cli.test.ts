import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { main } from "../../src/cli/main.ts";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import { createWorktree, nameBranch, settleWorktree, sparesMade, worktreesRoot, type Worktree } from "../../src/worktrees/worktrees.ts";
import { runningTask } from "../store/task-fixtures.ts";
import { commitFiles, gitSync, initRepo, isolateGit, tempDirs } from "../helpers/git-repo.ts";

isolateGit();
const temp = tempDirs("worktrees-cli-");
after(temp.cleanup);

type Run = { code: number; stdout: string; stderr: string };

async function run(argv: string[]): Promise<Run> {
  const out = { stdout: "", stderr: "" };
  const code = await main(argv, { stdout: (t) => void (out.stdout += t), stderr: (t) => void (out.stderr += t), env: {}, now: () => 0 });
  return { code, ...out };
}

/** A data folder (database and worktrees), a repository, and worktrees in every state the command tells apart. */
async function scene() {
  const dir = temp.make();
  const data = join(dir, "data");
  const db = join(data, "errands.db");
  const repo = join(dir, "repo");
  mkdirSync(repo, { recursive: true });
  initRepo(repo);
  const root = worktreesRoot(data, "proj1");
  const make = async (id: string, description: string): Promise<Worktree> =>
    nameBranch(await createWorktree({ repo, root, description, from: "head" }), id, description);
  const merged = await make("aaa", "merged already");
  const unmerged = await make("bbb", "has commits");
  commitFiles(unmerged.path, { "b.txt": "b\n" }, "child work");
  const gone = await make("ccc", "directory gone");
  rmSync(gone.path, { recursive: true });
  const running = await make("ddd", "still running");
  const store = SqliteTaskStore.open({ path: db, projectId: "proj1" });
  store.save(runningTask("ses_ddd", { worktree: running }));
  store.save(runningTask("ses_bbb", { status: "completed", settledAt: 1, worktree: unmerged }));
  store.close();
  return { db, data, repo, merged, unmerged, gone, running };
}

const branchesOf = (repo: string) => gitSync(repo, ["branch", "--format=%(refname:short)"]).split("\n");

describe("opencode-errands worktrees", () => {
  it("lists each worktree: branch, task, base, unmerged commits, missing directory", async () => {
    const s = await scene();
    const result = await run(["worktrees", "--db", s.db]);
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trim().split("\n");
    assert.match(lines[0]!, /^BRANCH\s+TASK\s+BASE\s+UNMERGED\s+DIRECTORY\s+PROJECT$/);
    const line = (branch: string) => lines.find((l) => l.startsWith(branch + " ")) ?? "";
    assert.match(line(s.unmerged.branch), new RegExp(`ses_bbb \\(completed\\)\\s+${s.unmerged.base.slice(0, 7)}\\s+1 commit\\s+${s.unmerged.path}\\s+proj1`));
    assert.match(line(s.gone.branch), /-\s+\w{7}\s+no\s+\(missing\) \S+-directory-gone/);
    assert.match(line(s.running.branch), /ses_ddd \(running\)/);
    assert.match(line(s.merged.branch), /\bno\s+\S+-merged-already/);

    const json = JSON.parse((await run(["worktrees", "--db", s.db, "--json"])).stdout) as { branch: string; taskId: string | null; unmergedCommits: number; exists: boolean }[];
    assert.equal(json.length, 4);
    assert.deepEqual(json.find((w) => w.branch === s.gone.branch), { ...s.gone, projectId: "proj1", unmerged: false, unmergedCommits: 0, exists: false, registered: true, taskId: null, taskStatus: null });
  });

  it("--prune removes those with nothing unmerged and keeps, saying why, one with commits or a running task", async () => {
    const s = await scene();
    writeFileSync(join(s.merged.path, "late.txt"), "uncommitted\n");
    const result = await run(["worktrees", "--db", s.db, "--prune"]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`Removed 1:\\n  ${s.gone.branch}\\n`));
    assert.match(result.stdout, /Kept 3:/);
    assert.match(result.stdout, new RegExp(`${s.unmerged.branch}: 1 commit not merged into the current branch of ${s.repo}\\. Merge it`));
    assert.match(result.stdout, new RegExp(`${s.running.branch}: its task ses_ddd is running`));
    assert.match(result.stdout, new RegExp(`${s.merged.branch}: its directory held uncommitted work, now committed on the branch`));

    assert.ok(existsSync(s.unmerged.path) && existsSync(s.running.path));
    assert.equal(existsSync(s.merged.path), false);
    const branches = branchesOf(s.repo);
    assert.ok(branches.includes(s.unmerged.branch) && branches.includes(s.running.branch) && branches.includes(s.merged.branch));
    assert.ok(!branches.includes(s.gone.branch));
    assert.ok(!gitSync(s.repo, ["worktree", "list"]).includes(s.gone.path), "the stale entry is pruned");
    assert.equal(gitSync(s.repo, ["show", `${s.merged.branch}:late.txt`]), "uncommitted");

    const again = await run(["worktrees", "--db", s.db]);
    assert.match(again.stdout, new RegExp(`${s.merged.branch}\\s+-\\s+\\w{7}\\s+1 commit\\s+\\(removed; branch kept\\)`));
  });

  it("says where worktrees would be when there are none, without a database", async () => {
    const dir = temp.make();
    const result = await run(["worktrees", "--db", join(dir, "errands.db")]);
    assert.deepEqual(result, { code: 0, stdout: `No worktrees. (Isolated tasks, isolation "worktree", make them under ${join(dir, "worktrees")}.)\n`, stderr: "" });
    assert.equal((await run(["worktrees", "--db", join(dir, "errands.db"), "--since", "1d"])).code, 2);
  });

  it("--prune removes spare checkouts too, and the listing never shows them", async () => {
    const s = await scene();
    await createWorktree({ repo: s.repo, root: worktreesRoot(s.data, "proj1"), description: "with spare", from: "head", spare: "always" });
    await sparesMade();
    const [marker] = readdirSync(worktreesRoot(s.data, "proj1")).filter((n) => n.startsWith(".spare-"));
    assert.equal((await run(["worktrees", "--db", s.db])).stdout.includes(marker!.slice(".spare-".length)), false, "the listing never shows the spare");
    const result = await run(["worktrees", "--db", s.db, "--prune"]);
    assert.match(result.stdout, /Removed 1 spare checkout \(made ahead/);
    const spareDir = join(worktreesRoot(s.data, "proj1"), marker!.slice(".spare-".length));
    assert.equal(gitSync(s.repo, ["worktree", "list"]).includes(spareDir), false, "the spare's worktree is gone");
    assert.equal(existsSync(spareDir), false);
    assert.deepEqual(readdirSync(worktreesRoot(s.data, "proj1")).filter((n) => n.startsWith(".spare-")), []);
  });

  it("a settled task whose branch was merged is pruned with its branch", async () => {
    const s = await scene();
    await settleWorktree(s.unmerged, "t");
    gitSync(s.repo, ["merge", "--quiet", "--no-edit", s.unmerged.branch]);
    const result = await run(["worktrees", "--db", s.db, "--prune", "--project", "proj1"]);
    assert.match(result.stdout, new RegExp(`  ${s.unmerged.branch} \\(${s.unmerged.path}\\)`));
    assert.ok(!branchesOf(s.repo).includes(s.unmerged.branch));
  });
});
