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

/** Where a branch's base commit is recorded (git config), so listing needs nothing but git. */
export const baseConfigKey = (branch: string) => `branch.${branch}.errandsBase`;
