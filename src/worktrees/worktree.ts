/** One isolated worktree: its directory, its branch, the commit it started from, and the main checkout's top level. */
export type Worktree = { path: string; branch: string; base: string; repo: string };

/** What a worktree's branch holds against its base, after the uncommitted work was committed. */
export type WorktreeChanges = { branch: string; commits: { sha: string; subject: string }[]; diffStat: string; changed: boolean };

/** A worktree operation refused on purpose; the message says how to fix it. Nothing was changed. */
export class WorktreeRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WorktreeRefusal";
  }
}

/**
 * The worktree's `.git` is no longer the link git wrote (the child rewrote it): the plugin runs no
 * git there and commits nothing. The message starts `worktree_tampered:` and says what was found.
 */
export class WorktreeTampered extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WorktreeTampered";
  }
}

/** Where a branch's base commit is recorded (git config), so listing needs nothing but git. */
export const baseConfigKey = (branch: string) => `branch.${branch}.errandsBase`;
