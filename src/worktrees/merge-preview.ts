import { git, gitOut, DIFF_SAFE } from "./git.ts";
import type { Worktree } from "./worktree.ts";

/** One file a merge changes, with its lines added and removed ("-" for a binary file). */
export type PreviewFile = { path: string; additions: number | "-"; deletions: number | "-" };

/** What merging a worktree's branch will change in the main checkout, as a person reads it before saying yes. */
export type MergePreview = {
  files: PreviewFile[];
  /** The unified diff of those files (git's own, no external diff or textconv program). */
  diff: string;
  /** The diff was cut at a file's start to stay within the cap; `files` still lists every file. */
  truncated: boolean;
};

/**
 * The branch's changes since it left the checkout's line (`HEAD...branch`: from their merge base,
 * what `git merge` brings in), read in the main repository only: nothing of the child's worktree
 * is read or run. Renames are shown as a delete and an add, so every path the merge writes is named.
 */
export async function mergePreview(wt: Worktree, maxChars: number): Promise<MergePreview> {
  const range = `HEAD...refs/heads/${wt.branch}`;
  const numstat = await gitOut(wt.repo, ["diff", "--numstat", "--no-renames", "-z", range, "--"]);
  const diff = (await git(wt.repo, ["diff", ...DIFF_SAFE, "--no-renames", "--no-color", range, "--"])).stdout;
  const files = parseNumstat(numstat);
  if (diff.length <= maxChars) return { files, diff, truncated: false };
  return { files, diff: cutAtFileStart(diff, maxChars), truncated: true };
}

/** `git diff --numstat -z` without renames: "<added>\t<deleted>\t<path>\0" per file. */
function parseNumstat(out: string): PreviewFile[] {
  return out.split("\0").filter(Boolean).map((record) => {
    const [added = "-", deleted = "-", ...path] = record.split("\t");
    return { path: path.join("\t"), additions: count(added), deletions: count(deleted) };
  });
}

const count = (text: string): number | "-" => (/^\d+$/.test(text) ? Number(text) : "-");

/** The whole files that fit: a diff viewer parses each file's header, so a file is never cut in half (the first is, when it alone is too long). */
function cutAtFileStart(diff: string, maxChars: number): string {
  const cut = diff.lastIndexOf("\ndiff --git ", maxChars);
  return cut > 0 ? diff.slice(0, cut + 1) : diff.slice(0, diff.lastIndexOf("\n", maxChars) + 1);
}
