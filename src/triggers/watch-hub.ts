import { watch, type FSWatcher } from "chokidar";
import { isAbsolute, join, relative, sep } from "node:path";
import type { Clock } from "../core/clock.ts";
import { openGitIgnore, type GitIgnore } from "./git-ignore.ts";
import type { Change } from "./watch-burst.ts";
import { watchScope, type WatchScope } from "./watch-paths.ts";
import type { SourceContext } from "./trigger-source.ts";

/** One watch trigger as the hub sees it. */
export type Subscriber = {
  paths: string[];
  ignore: string[];
  onFile(rel: string, change: Change): void;
  onError(error: unknown): void;
  log: SourceContext["log"];
  clock: Clock;
};

export type Subscription = { scope: WatchScope; git: GitIgnore | undefined; unsubscribe(): Promise<void> };

/** A start never waits longer than this for a scan; events after it still arrive. */
const READY_TIMEOUT_MS = 60_000;

const hubs = new Map<string, Promise<WatchHub>>();

/**
 * Watches `root` for one trigger. All triggers on one project directory share one watcher: chokidar
 * keeps about 5 KB per watched file per watcher, so a hundred triggers on a 10,000-file project
 * would otherwise hold gigabytes. Resolves once the watcher covers the trigger's paths.
 */
export async function subscribe(root: string, sub: Subscriber): Promise<Subscription> {
  for (;;) {
    let opening = hubs.get(root);
    if (!opening) hubs.set(root, (opening = WatchHub.open(root, sub)));
    const hub = await opening;
    if (!hub.closed) return hub.add(sub);
  }
}

/** Project directories watched in this process (for tests and diagnostics). */
export function watchedDirectories(): string[] {
  return [...hubs.keys()];
}

class WatchHub {
  closed = false;
  private readonly subs = new Map<Subscriber, WatchScope>();
  /** The subscribers the current watcher was built for: their paths were scanned. */
  private covered: WatchScope[] = [];
  private watcher: FSWatcher | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private pendingDirs: string[] = [];

  private constructor(
    private readonly root: string,
    private readonly git: GitIgnore | undefined,
    private readonly gitIgnored: Set<string>,
  ) {}

  static async open(root: string, first: Subscriber): Promise<WatchHub> {
    const git = await openGitIgnore(root).catch((error) => {
      first.log("warn", "watch: .gitignore not applied (git failed)", { error: messageOf(error) });
      return undefined;
    });
    return new WatchHub(root, git, new Set(git?.ignoredAtStart));
  }

  async add(sub: Subscriber): Promise<Subscription> {
    const scope = watchScope(sub.paths, sub.ignore, (rel) => this.gitIgnored.has(rel));
    this.subs.set(sub, scope);
    try {
      await this.serially(async () => {
        if (this.subs.has(sub) && !this.covered.some((c) => c.covers(scope))) await this.rebuild(sub.clock);
      });
    } catch (error) {
      await this.remove(sub);
      throw error;
    }
    return { scope, git: this.git, unsubscribe: () => this.remove(sub) };
  }

  private async remove(sub: Subscriber): Promise<void> {
    if (!this.subs.delete(sub) || this.subs.size > 0) return;
    this.closed = true;
    hubs.delete(this.root);
    await this.serially(async () => {
      await this.watcher?.close();
      this.watcher = undefined;
    });
  }

  private serially(step: () => Promise<void>): Promise<void> {
    const run = this.queue.then(step);
    this.queue = run.catch(() => {});
    return run;
  }

  /**
   * A new watcher for every current subscriber, swapped in once its scan is done, so no change is
   * missed meanwhile (one seen by both lands twice in the same burst, which counts it once).
   */
  private async rebuild(clock: Clock): Promise<void> {
    const scopes = [...this.subs.values()];
    const next = watch(this.root, {
      ignoreInitial: true,
      // Like the clock's timers: a watcher alone never keeps a process alive.
      persistent: false,
      ignored: (abs: string) => this.skip(this.toRel(abs)),
    });
    const onFile = (change: Change) => (abs: string) => this.dispatch(this.toRel(abs), change);
    next.on("add", onFile("added"));
    next.on("change", onFile("changed"));
    next.on("unlink", onFile("deleted"));
    next.on("addDir", (abs: string) => this.checkNewDir(this.toRel(abs), clock));
    next.on("error", (error: unknown) => this.everySub((sub) => sub.onError(error)));
    await ready(next, clock, (message) => this.everySub((sub) => sub.log("warn", message)));
    const old = this.watcher;
    this.watcher = next;
    this.covered = scopes;
    await old?.close();
  }

  /** Skipped paths are neither read nor watched: those every subscriber skips. */
  private skip(rel: string): boolean {
    if (rel === "" || outside(rel)) return false; // chokidar also watches the root's parent, for the root itself
    for (const scope of this.subs.values()) if (!scope.skip(rel)) return false;
    return true;
  }

  private dispatch(rel: string, change: Change): void {
    if (outside(rel)) return;
    for (const [sub, scope] of this.subs) if (scope.wanted(rel)) sub.onFile(rel, change);
  }

  /**
   * A folder created after the start that git ignores (a build's dist/) leaves the watch once git
   * says so; its files seen meanwhile are dropped again when a burst fires.
   */
  private checkNewDir(rel: string, clock: Clock): void {
    if (!this.git || rel === "") return;
    this.pendingDirs.push(rel);
    if (this.pendingDirs.length > 1) return;
    clock.setTimeout(async () => {
      const dirs = this.pendingDirs;
      this.pendingDirs = [];
      try {
        for (const dir of await this.git!.ignoredAmong(dirs)) {
          this.gitIgnored.add(dir);
          this.watcher?.unwatch(join(this.root, dir));
          this.everySub((sub) => sub.log("debug", "watch: a new folder is ignored by git; not watching it", { folder: dir }));
        }
      } catch (error) {
        this.everySub((sub) => sub.log("warn", "watch: could not ask git about new folders", { error: messageOf(error) }));
      }
    }, 0);
  }

  private everySub(fn: (sub: Subscriber) => void): void {
    for (const sub of this.subs.keys()) fn(sub);
  }

  private toRel(abs: string): string {
    return relative(this.root, abs).split(sep).join("/");
  }
}

function outside(rel: string): boolean {
  return rel === ".." || rel.startsWith("../") || isAbsolute(rel);
}

function ready(watcher: FSWatcher, clock: Clock, warn: (message: string) => void): Promise<void> {
  return new Promise((done) => {
    const timeout = clock.setTimeout(() => {
      warn(`watch: the first scan took over ${READY_TIMEOUT_MS / 1000}s; watching what it has reached`);
      done();
    }, READY_TIMEOUT_MS);
    watcher.once("ready", () => {
      clock.clearTimeout(timeout);
      done();
    });
  });
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
