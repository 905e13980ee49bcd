import { randomBytes } from "node:crypto";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { git } from "./git.ts";
import { oneAtATime } from "./repo-lock.ts";

/**
 * A spare checkout per worktrees root, made in the background, so that a launch moves a ready
 * directory and switches it to its base (only the files that differ are written) instead of
 * writing every file of the project while the caller waits. `<root>/.spare-<hex>` is ready;
 * `<root>/.spare-making-<hex>` is being checked out and is never taken.
 */
const READY = ".spare-";
const MAKING = ".spare-making-";
/** A spare still being made after this long was left by a process that died: removed at the next refill. */
const STALE_MAKING_MS = 10 * 60_000;
/** Hooks are not run by checkouts the plugin makes (post-checkout hooks would run on every launch). */
export const NO_HOOKS = ["-c", "core.hooksPath=/dev/null"];

const refills = new Map<string, Promise<void>>();

/**
 * Moves a ready spare of `root` to `path` and checks out `base` there on the new branch `branch`.
 * False (and nothing left behind) when there is no spare or it cannot be used: the caller checks out afresh.
 */
export async function takeSpare(repo: string, root: string, path: string, branch: string, base: string): Promise<boolean> {
  const spare = (await entries(root)).find((name) => name.startsWith(READY) && !name.startsWith(MAKING));
  if (!spare) return false;
  // Another process may take the same spare: its move fails here, and this launch checks out afresh.
  if (!(await git(repo, ["worktree", "move", join(root, spare), path]).then(() => true, () => false))) return false;
  try {
    await git(path, [...NO_HOOKS, "checkout", "--quiet", "-b", branch, base]);
    return true;
  } catch {
    await git(repo, ["worktree", "remove", "--force", "--force", path]).catch(() => undefined);
    return false;
  }
}

/** Starts making a spare of `repo`'s HEAD under `root` unless one is ready or being made; never throws. */
export function refillSpare(repo: string, root: string): void {
  if (refills.has(root)) return;
  const refill = makeSpare(repo, root).catch(() => undefined).finally(() => refills.delete(root));
  refills.set(root, refill);
}

/**
 * Resolves when the spare this process is making for `root` (if any) is ready: waiting for it is
 * never slower than a second checkout of every file beside it.
 */
export async function spareMade(root: string): Promise<void> {
  await refills.get(root);
}

/** Resolves when every spare this process is making is done (tests, benchmarks, shutdown). */
export async function sparesMade(): Promise<void> {
  await Promise.all([...refills.values()]);
}

async function makeSpare(repo: string, root: string): Promise<void> {
  const names = await entries(root);
  if (names.some((n) => n.startsWith(READY) && !n.startsWith(MAKING))) return;
  let makingNow = false;
  for (const name of names.filter((n) => n.startsWith(MAKING))) {
    const age = Date.now() - (await stat(join(root, name)).then((s) => s.mtimeMs, () => 0));
    if (age < STALE_MAKING_MS) makingNow = true;
    else await git(repo, ["worktree", "remove", "--force", "--force", join(root, name)]).catch(() => undefined);
  }
  if (makingNow) return;
  const hex = randomBytes(4).toString("hex");
  const making = join(root, `${MAKING}${hex}`);
  try {
    // Only the quick steps hold the repository (other git commands read every worktree's files);
    // the checkout of every file writes the spare's own index and directory alone.
    await oneAtATime(repo, () => git(repo, [...NO_HOOKS, "worktree", "add", "--quiet", "--no-checkout", "--detach", making, "HEAD"]));
    await git(making, ["read-tree", "-u", "--reset", "HEAD"]);
    await oneAtATime(repo, () => git(repo, ["worktree", "move", making, join(root, `${READY}${hex}`)]));
  } catch (error) {
    await git(repo, ["worktree", "remove", "--force", "--force", making]).catch(() => undefined);
    throw error;
  }
}

/** Removes the spares under `root` (the CLI's prune), each through its own repository; returns how many. */
export async function removeSpares(root: string): Promise<number> {
  let removed = 0;
  for (const name of (await entries(root)).filter((n) => n.startsWith(READY))) {
    const spare = join(root, name);
    const gone = await git(spare, ["rev-parse", "--path-format=absolute", "--git-common-dir"])
      .then((common) => git(common.stdout.trim(), ["worktree", "remove", "--force", "--force", spare]))
      .then(() => true, () => false);
    if (gone) removed++;
  }
  return removed;
}

/** Whether a directory name under a worktrees root is a spare (ready or being made). */
export const isSpare = (name: string) => name.startsWith(READY);

async function entries(root: string): Promise<string[]> {
  return readdir(root).catch(() => []);
}
