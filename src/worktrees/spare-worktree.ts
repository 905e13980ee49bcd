import { randomBytes } from "node:crypto";
import { readdir, readFile, rename, stat, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { git, NO_HOOKS_PATH } from "./git.ts";
import { oneAtATime } from "./repo-lock.ts";
import { worktreeGit } from "./worktree-git.ts";
import { REPOS_FILE } from "./worktree-paths.ts";

/**
 * A spare checkout per worktrees root, made in the background, so that a launch does not write
 * every file of the project while the caller waits. The spare is made where the task that takes it
 * will work, `<root>/<8 hex>`, so OpenCode can boot its instance for that directory beforehand
 * (`warm`). Its marker says what it is: `<root>/.spare-<hex>` (holding the commit it is at) ready,
 * `<root>/.spare-making-<hex>` being checked out. A launch claims a spare by deleting its marker.
 */
const READY = ".spare-";
const MAKING = ".spare-making-";
/** A spare still being made after this long was left by a process that died: removed at the next refill. */
const STALE_MAKING_MS = 10 * 60_000;
/** The most a refill waits for OpenCode to boot the spare's instance (a launch may be waiting for the refill). */
const WARM_TIMEOUT_MS = 10_000;
/** Hooks are not run by checkouts the plugin makes (post-checkout hooks would run on every launch). */
export const NO_HOOKS = ["-c", `core.hooksPath=${NO_HOOKS_PATH}`];

/** Asks the host to get ready for work in a spare's directory; never throws. */
export type Warm = (path: string) => Promise<void>;

const refills = new Map<string, Promise<void>>();
const isReady = (name: string) => name.startsWith(READY) && !name.startsWith(MAKING);

/**
 * Takes a ready spare of `root` and puts it on the new branch `branch` at `base`; its path, or
 * undefined (and nothing left behind) when there is none or it cannot be used: the caller checks
 * out afresh. A spare at `base` already (the usual case) only gets its HEAD pointed at the new
 * branch: no file is read or written.
 */
export async function takeSpare(repo: string, root: string, branch: string, base: string): Promise<string | undefined> {
  for (const marker of (await entries(root)).filter(isReady)) {
    const at = (await readFile(join(root, marker), "utf8").catch(() => "")).trim();
    // Of two launches (or processes) after the same spare, only one deletes its marker.
    if (!(await unlink(join(root, marker)).then(() => true, () => false))) continue;
    const path = join(root, marker.slice(READY.length));
    if (await switchTo(repo, path, branch, base, at)) return path;
    await git(repo, ["worktree", "remove", "--force", "--force", path]).catch(() => undefined);
    await git(repo, ["branch", "--quiet", "-D", branch], { okCodes: [1] }).catch(() => undefined);
  }
  return undefined;
}

async function switchTo(repo: string, path: string, branch: string, base: string, at: string): Promise<boolean> {
  try {
    if (at === base) {
      await git(repo, ["branch", "--quiet", branch, base]);
      await (await worktreeGit({ path, repo })).run(["symbolic-ref", "HEAD", `refs/heads/${branch}`]);
    } else {
      await (await worktreeGit({ path, repo })).run([...NO_HOOKS, "checkout", "--quiet", "-b", branch, base]);
    }
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts making a spare of `repo`'s HEAD under `root` unless one is ready or being made; the host
 * warms it (`warm`, bounded in time) before it is marked ready, or when found ready; never throws.
 */
export function refillSpare(repo: string, root: string, warm?: Warm): void {
  if (refills.has(root)) return;
  const warmed = (path: string) => (warm ? bounded(warm(path)) : Promise.resolve());
  const refill = makeSpare(repo, root, warmed).catch(() => undefined).finally(() => refills.delete(root));
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

async function makeSpare(repo: string, root: string, warm: (path: string) => Promise<void>): Promise<void> {
  const names = await entries(root);
  const ready = names.find(isReady);
  if (ready) return warm(join(root, ready.slice(READY.length)));
  let makingNow = false;
  for (const name of names.filter((n) => n.startsWith(MAKING))) {
    const age = Date.now() - (await stat(join(root, name)).then((s) => s.mtimeMs, () => 0));
    if (age < STALE_MAKING_MS) makingNow = true;
    else await drop(repo, root, name.slice(MAKING.length));
  }
  if (makingNow) return;
  const hex = randomBytes(4).toString("hex");
  const path = join(root, hex);
  const making = join(root, `${MAKING}${hex}`);
  await writeFile(making, "");
  try {
    // Only the quick step holds the repository (other git commands read every worktree's files);
    // the checkout of every file writes the spare's own index and directory alone.
    await oneAtATime(repo, () => git(repo, [...NO_HOOKS, "worktree", "add", "--quiet", "--no-checkout", "--detach", path, "HEAD"]));
    const spareGit = await worktreeGit({ path, repo });
    await spareGit.run(["read-tree", "-u", "--reset", "HEAD"]);
    await writeFile(making, await spareGit.out(["rev-parse", "HEAD"]));
    await warm(path);
    await rename(making, join(root, `${READY}${hex}`));
  } catch (error) {
    await drop(repo, root, hex);
    throw error;
  }
}

/** Removes the spares under `root` (the CLI's prune), each claimed first, through its own repository; returns how many. */
export async function removeSpares(root: string): Promise<number> {
  let removed = 0;
  for (const marker of (await entries(root)).filter(isReady)) {
    if (!(await unlink(join(root, marker)).then(() => true, () => false))) continue; // a launch took it
    const spare = join(root, marker.slice(READY.length));
    // Through the repositories the root lists, never git run inside the spare's own directory.
    for (const repo of await reposListedIn(root)) {
      if (await git(repo, ["worktree", "remove", "--force", "--force", spare]).then(() => true, () => false)) {
        removed++;
        break;
      }
    }
  }
  return removed;
}

/** Removes a spare being made (or left half made) and then its marker. */
async function drop(repo: string, root: string, hex: string): Promise<void> {
  await git(repo, ["worktree", "remove", "--force", "--force", join(root, hex)]).catch(() => undefined);
  await unlink(join(root, `${MAKING}${hex}`)).catch(() => undefined);
}

async function reposListedIn(root: string): Promise<string[]> {
  return (await readFile(join(root, REPOS_FILE), "utf8").catch(() => "")).split("\n").filter(Boolean);
}

function bounded(work: Promise<void>): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, WARM_TIMEOUT_MS)));
  return Promise.race([work.catch(() => undefined), timeout]).finally(() => clearTimeout(timer));
}

async function entries(root: string): Promise<string[]> {
  return readdir(root).catch(() => []);
}
