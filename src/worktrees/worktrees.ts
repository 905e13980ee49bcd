// The worktrees API in one import; each part lives in its own file next to this one.
export { WorktreeRefusal, type Worktree, type WorktreeChanges } from "./worktree.ts";
export { worktreesRoot, isInsideWorktreesRoot, slugOf } from "./worktree-paths.ts";
export { createWorktree, nameBranch, mainCheckout } from "./create-worktree.ts";
export { settleWorktree, branchChanges, worktreeDiff, hasUnmergedCommits, unmergedCommitCount } from "./settle-worktree.ts";
export { mergeWorktree, checkMerge, type MergeResult } from "./merge-worktree.ts";
export { mergePreview, type MergePreview } from "./merge-preview.ts";
export { removeWorktree } from "./remove-worktree.ts";
export { sparesMade, removeSpares } from "./spare-worktree.ts";
export { listWorktrees, type ListedWorktree } from "./list-worktrees.ts";
export { pinnedArgs } from "./worktree-git.ts";
