import type { TriggerEvent } from "./trigger-source.ts";

export type Change = "added" | "changed" | "deleted";

/** Paths listed in an event's data; the rest are counted. */
export const LISTED_PATHS = 50;
/** Paths a burst remembers one by one; beyond it they are only counted (a chatty tree cannot grow memory). */
const TRACKED_PATHS = 10_000;

/**
 * The file changes seen since the last firing, one entry per path: a file added then deleted in
 * the same burst (an editor's temp file) cancels out; deleted then added is a change.
 */
export class Burst {
  private readonly paths = new Map<string, { existedBefore: boolean; existsNow: boolean }>();
  private untracked = 0;

  get empty(): boolean {
    return this.paths.size === 0 && this.untracked === 0;
  }

  record(path: string, change: Change): void {
    const existsNow = change !== "deleted";
    const seen = this.paths.get(path);
    if (seen) seen.existsNow = existsNow;
    else if (this.paths.size < TRACKED_PATHS) this.paths.set(path, { existedBefore: change !== "added", existsNow });
    else this.untracked++;
  }

  /** The burst's net changes, sorted by path, and how many more paths were only counted. */
  take(): { changes: Map<string, Change>; untracked: number } {
    const changes = new Map<string, Change>();
    for (const path of [...this.paths.keys()].sort()) {
      const { existedBefore, existsNow } = this.paths.get(path)!;
      if (existedBefore || existsNow) changes.set(path, !existedBefore ? "added" : !existsNow ? "deleted" : "changed");
    }
    const untracked = this.untracked;
    this.paths.clear();
    this.untracked = 0;
    return { changes, untracked };
  }
}

/** "src/a.ts changed", "src/a.ts and 199 more added"; the data lists the first 50 paths. */
export function burstEvent(changes: Map<string, Change>, untracked = 0): TriggerEvent {
  const total = changes.size + untracked;
  const counts = countByChange(changes);
  const kinds = Object.keys(counts) as Change[];
  const verb = kinds.length === 1 && untracked === 0 ? kinds[0]! : "changed";
  const [first] = changes.keys();
  const summary =
    first === undefined ? `${total} files ${verb}` : total === 1 ? `${first} ${verb}` : `${first} and ${total - 1} more ${verb}`;
  const listed = [...changes].slice(0, LISTED_PATHS).map(([path, change]) => `${change} ${path}`);
  const more = total - listed.length;
  const tally = kinds.map((kind) => `${counts[kind]} ${kind}`).join(", ");
  const data = [`${total} ${total === 1 ? "file" : "files"}: ${tally}${untracked ? `, ${untracked} not itemised` : ""}`, ...listed];
  if (more > 0) data.push(`and ${more} more`);
  return { summary, data: data.join("\n") };
}

function countByChange(changes: Map<string, Change>): Partial<Record<Change, number>> {
  const counts: Partial<Record<Change, number>> = {};
  for (const change of changes.values()) counts[change] = (counts[change] ?? 0) + 1;
  return counts;
}
