import { realpathSync } from "node:fs";
import { join, resolve, sep } from "node:path";

const WORKTREES = "worktrees";

/** The file in a worktrees root that lists the main checkouts it holds worktrees of, one a line (listing finds them there). */
export const REPOS_FILE = ".repos";
const SLUG_MAX = 40;

/** `<data folder>/worktrees/<project id>`: where a project's worktrees live, never inside the project. */
export function worktreesRoot(dataDir: string, projectId: string): string {
  if (!/^[A-Za-z0-9_.-]+$/.test(projectId) || projectId === "." || projectId === "..") {
    throw new Error(`Project id "${projectId}" cannot name a folder: expected letters, digits, "_", "." or "-".`);
  }
  return join(resolve(dataDir), WORKTREES, projectId);
}

/** Whether `directory` is at or below `<data folder>/worktrees/` (symbolic links resolved when they exist). */
export function isInsideWorktreesRoot(dataDir: string, directory: string): boolean {
  const top = real(join(resolve(dataDir), WORKTREES));
  const dir = real(resolve(directory));
  return dir === top || dir.startsWith(top + sep);
}

function real(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

/** Lowercase a-z, 0-9 and single dashes, at most 40 characters; "task" when nothing is left. */
export function slugOf(text: string): string {
  const slug = text.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+/, "").slice(0, SLUG_MAX).replace(/-+$/, "");
  return slug || "task";
}
