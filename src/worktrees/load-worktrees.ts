/**
 * The worktrees API, loaded at its first use (an isolated launch, a merge, a clear or retention
 * of an isolated task): every OpenCode process pays for what the plugin imports at start, and
 * most never isolate a task (in Bun its dozen modules cost ~1.5 MB of RSS).
 */
export const loadWorktrees = () => import("./worktrees.ts");
