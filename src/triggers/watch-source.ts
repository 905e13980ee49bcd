import { watch, type FSWatcher } from "chokidar";
import { join, relative, resolve, sep } from "node:path";
import type { EventSpec } from "../automations/automation.ts";
import { openGitIgnore, type GitIgnore } from "./git-ignore.ts";
import { Burst, burstEvent, type Change } from "./watch-burst.ts";
import { watchScope, type WatchScope } from "./watch-paths.ts";
import type { RunningSource, SourceContext, StartSource } from "./trigger-source.ts";

export type WatchSpec = Extract<EventSpec, { kind: "watch" }>;

/** A start never waits longer than this for the first scan; events after it still fire. */
const READY_TIMEOUT_MS = 60_000;
/** A tree that never goes quiet (a log rewritten every second) still fires this often. */
const maxWaitMs = (debounceMs: number) => Math.max(10 * debounceMs, 10_000);

/**
 * Watches the project's files for one `watch` trigger. One watcher on the project directory whose
 * filter lets in only the patterns' roots and the folders on the way to them, minus ignored trees
 * (.git, node_modules, what git ignores, `ignore`): those are never read or watched. Roots that do
 * not exist yet, or are deleted and created again, are seen through their parent folders.
 * A burst fires once after `debounceMs` of quiet, without the files the automation's own run wrote
 * and without what git ignores at that moment. Never throws: errors go to the log and the note.
 */
export const startWatchSource: StartSource<WatchSpec> = async (spec, ctx) => {
  try {
    return await start(spec, ctx);
  } catch (error) {
    ctx.log("error", "watch: could not start the file watcher", { error: messageOf(error) });
    ctx.setNote(`not watching: ${messageOf(error)}`);
    return { stop() {} };
  }
};

async function start(spec: WatchSpec, ctx: SourceContext): Promise<RunningSource> {
  ctx.setNote(undefined);
  const root = resolve(ctx.directory);
  const git = await openGitIgnore(root).catch((error) => {
    ctx.log("warn", "watch: .gitignore not applied (git failed)", { error: messageOf(error) });
    return undefined;
  });
  const gitIgnored = new Set(git?.ignoredAtStart);
  const scope = watchScope(spec.paths, spec.ignore, (rel) => gitIgnored.has(rel));
  noteUnwatchableRoots(scope, ctx);

  const toRel = (abs: string) => relative(root, abs).split(sep).join("/");
  const outside = (rel: string) => rel === ".." || rel.startsWith("../") || rel.startsWith("/");
  const watcher = watch(root, {
    ignoreInitial: true,
    // Like the clock's timers: a watcher alone never keeps a process alive.
    persistent: false,
    ignored: (abs: string) => {
      const rel = toRel(abs);
      return !outside(rel) && scope.skip(rel);
    },
  });
  const bursts = debouncedBursts(spec, ctx, git);
  const newDirs = newDirChecks(git, ctx, (rel) => {
    gitIgnored.add(rel);
    watcher.unwatch(join(root, rel));
    ctx.log("debug", "watch: a new folder is ignored by git; not watching it", { folder: rel });
  });
  const onFile = (change: Change) => (abs: string) => {
    const rel = toRel(abs);
    if (scope.wanted(rel)) bursts.record(rel, change);
  };
  watcher.on("add", onFile("added"));
  watcher.on("change", onFile("changed"));
  watcher.on("unlink", onFile("deleted"));
  watcher.on("addDir", (abs: string) => newDirs.check(toRel(abs)));
  watcher.on("error", (error: unknown) => onWatcherError(error, ctx));
  await ready(watcher, ctx);

  return {
    async stop() {
      bursts.stop();
      newDirs.stop();
      await watcher.close().catch((error: unknown) => ctx.log("warn", "watch: closing the watcher failed", { error: messageOf(error) }));
    },
  };
}

/** Collects changes and fires once per burst, after `debounceMs` of quiet (or `maxWaitMs` at most). */
function debouncedBursts(spec: WatchSpec, ctx: SourceContext, git: GitIgnore | undefined) {
  const burst = new Burst();
  let timer: unknown;
  let startedAt: number | undefined;
  let stopped = false;

  const flush = () => {
    timer = undefined;
    startedAt = undefined;
    const { changes, untracked } = burst.take();
    void fire(changes, untracked);
  };

  const fire = async (changes: Map<string, Change>, untracked: number) => {
    try {
      const own = ctx.ownWrites();
      for (const path of changes.keys()) if (own.has(path)) changes.delete(path);
      // .gitignore may have changed since the start; git has the last word on every burst.
      if (git && changes.size > 0) for (const path of await git.ignoredAmong([...changes.keys()])) changes.delete(path);
      if (stopped) return;
      if (changes.size === 0 && untracked === 0) return ctx.log("debug", "watch: a burst held only the run's own or ignored files");
      ctx.emit(burstEvent(changes, untracked));
    } catch (error) {
      ctx.log("error", "watch: a burst could not fire", { error: messageOf(error) });
    }
  };

  return {
    record(path: string, change: Change) {
      if (stopped) return;
      burst.record(path, change);
      const now = ctx.clock.now();
      startedAt ??= now;
      if (timer !== undefined) ctx.clock.clearTimeout(timer);
      timer = ctx.clock.setTimeout(flush, Math.min(spec.debounceMs, Math.max(0, startedAt + maxWaitMs(spec.debounceMs) - now)));
    },
    stop() {
      stopped = true;
      if (timer !== undefined) ctx.clock.clearTimeout(timer);
      timer = undefined;
    },
  };
}

/**
 * A folder created after the start that git ignores (a build's dist/) is dropped from the watch
 * once git says so; its files, seen in the meantime, are dropped again when a burst fires.
 */
function newDirChecks(git: GitIgnore | undefined, ctx: SourceContext, ignore: (rel: string) => void) {
  let pending: string[] = [];
  let stopped = false;
  const checkPending = async () => {
    const dirs = pending;
    pending = [];
    try {
      const ignored = await git!.ignoredAmong(dirs);
      if (!stopped) for (const dir of ignored) ignore(dir);
    } catch (error) {
      ctx.log("warn", "watch: could not ask git about new folders", { error: messageOf(error) });
    }
  };
  return {
    check(rel: string) {
      if (!git || stopped || rel === "") return;
      pending.push(rel);
      if (pending.length === 1) ctx.clock.setTimeout(() => void checkPending(), 0);
    },
    stop() {
      stopped = true;
    },
  };
}

function ready(watcher: FSWatcher, ctx: SourceContext): Promise<void> {
  return new Promise((done) => {
    const timeout = ctx.clock.setTimeout(() => {
      ctx.log("warn", `watch: the first scan took over ${READY_TIMEOUT_MS / 1000}s; watching what it has reached`);
      done();
    }, READY_TIMEOUT_MS);
    watcher.once("ready", () => {
      ctx.clock.clearTimeout(timeout);
      done();
    });
  });
}

function noteUnwatchableRoots(scope: WatchScope, ctx: SourceContext): void {
  const skipped = scope.roots.filter((root) => root !== "" && scope.skip(root));
  if (skipped.length > 0 && skipped.length === scope.roots.length) {
    ctx.setNote(`nothing to watch: ${skipped.join(", ")} ${skipped.length === 1 ? "is" : "are"} ignored (.git, node_modules, .gitignore or the trigger's ignore)`);
  }
}

function onWatcherError(error: unknown, ctx: SourceContext): void {
  ctx.log("warn", "watch: file watcher error", { error: messageOf(error), code: codeOf(error) });
  const note = noteForWatchError(error);
  if (note) ctx.setNote(note);
}

/** The note for errors the user can fix; undefined for the rest (they are only logged). */
export function noteForWatchError(error: unknown): string | undefined {
  switch (codeOf(error)) {
    case "ENOSPC":
      return "the system's limit on watched folders is reached (ENOSPC): raise it with `sudo sysctl fs.inotify.max_user_watches=524288` (and in /etc/sysctl.d/ to keep it), or watch fewer paths";
    case "EMFILE":
      return "too many open files (EMFILE): raise the limit (`ulimit -n`), or watch fewer paths";
    default:
      return undefined;
  }
}

function codeOf(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
