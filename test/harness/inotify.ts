import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";

/**
 * Inodes a process watches through inotify (from /proc/<pid>/fdinfo): a folder's inode is listed
 * once a watcher in that process covers it, so a test can wait for it instead of sleeping.
 */
export function inotifyInodes(pid: number): Set<number> {
  const inodes = new Set<number>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target = "";
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed meanwhile
    }
    if (target !== "anon_inode:inotify") continue;
    const info = existsSync(`/proc/${pid}/fdinfo/${fd}`) ? readFileSync(`/proc/${pid}/fdinfo/${fd}`, "utf8") : "";
    for (const m of info.matchAll(/^inotify wd:\d+ ino:([0-9a-f]+)/gm)) inodes.add(parseInt(m[1]!, 16));
  }
  return inodes;
}
