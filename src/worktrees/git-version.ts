import { gitOut } from "./git.ts";

let mergeTree: Promise<boolean> | undefined;

/** Whether this git has `merge-tree --write-tree` (2.38 and later); asked once per process. */
export function supportsMergeTree(): Promise<boolean> {
  mergeTree ??= gitOut(process.cwd(), ["--version"]).then((out) => atLeast(out, [2, 38]), () => false);
  return mergeTree;
}

/** `git version 2.39.5` (or `2.39.5.windows.1`) at least `want`. */
export function atLeast(versionLine: string, want: [number, number]): boolean {
  const m = /(\d+)\.(\d+)/.exec(versionLine);
  if (!m) return false;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major > want[0] || (major === want[0] && minor >= want[1]);
}
