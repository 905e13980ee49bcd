import { lstat } from "node:fs/promises";
import { join } from "node:path";
import { git } from "./git.ts";

/**
 * The files of the checkout `repo` a merge of `touched` (the branch's changed paths) would write
 * over or through, though git keeps them nowhere: untracked or ignored ones (git refuses to
 * overwrite an untracked file but takes an ignored one, a `.env`, as expendable). A path counts
 * when it exists untracked, or when one of its parent folders is untracked and not a folder (a
 * file or a symbolic link in the way). Sorted.
 */
export async function untrackedInTheWay(repo: string, touched: Iterable<string>): Promise<string[]> {
  const tracked = new Set((await git(repo, ["ls-files", "-z", "--cached"])).stdout.split("\0"));
  const found = new Set<string>();
  for (const path of touched) {
    const parts = path.split("/");
    for (let depth = 1; depth <= parts.length; depth++) {
      const at = parts.slice(0, depth).join("/");
      if (tracked.has(at)) continue;
      const info = await lstat(join(repo, at)).catch(() => undefined);
      if (!info) break;
      if (depth === parts.length || !info.isDirectory()) {
        found.add(at);
        break;
      }
    }
  }
  return [...found].sort();
}
