import { resolve } from "node:path";
import type { WatchSpec } from "./kinds/watch.ts";
import type { GitIgnore } from "./git-ignore.ts";
import { Burst, burstEvent, type Change } from "./watch-burst.ts";
import { messageOf, subscribe } from "./watch-hub.ts";
import type { WatchScope } from "./watch-paths.ts";
import type { RunningSource, SourceContext, StartSource } from "./trigger-source.ts";

export type { WatchSpec };

/** A tree that never goes quiet (a log rewritten every second) still fires this often. */
const maxWaitMs = (debounceMs: number) => Math.max(10 * debounceMs, 10_000);

/**
 * Watches the project's files for one `watch` trigger, through the watcher its project directory
 * shares with the other watch triggers (watch-hub.ts). Only the patterns' roots and the folders on
 * the way to them are read and watched, minus ignored trees (.git, node_modules, what git ignores,
 * `ignore`). Roots that do not exist yet, or are deleted and created again, are seen through their
 * parent folders. A burst fires once after `debounceMs` of quiet, without the files the
 * automation's own run wrote (asked when each change is seen, and again when the burst fires) and
 * without what git ignores at that moment.
 * Never throws: errors go to the log and the trigger's note.
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
  let git: GitIgnore | undefined;
  const bursts = debouncedBursts(spec, ctx, () => git);
  const subscription = await subscribe(resolve(ctx.directory), {
    paths: spec.paths,
    ignore: spec.ignore,
    onFile: (rel, change) => bursts.record(rel, change),
    onError: (error) => onWatcherError(error, ctx),
    log: ctx.log,
    clock: ctx.clock,
  });
  git = subscription.git;
  noteUnwatchableRoots(subscription.scope, ctx);
  return {
    async stop() {
      bursts.stop();
      await subscription.unsubscribe().catch((error: unknown) => ctx.log("warn", "watch: closing the watcher failed", { error: messageOf(error) }));
    },
  };
}

/** Collects changes and fires once per burst, after `debounceMs` of quiet (or `maxWaitMs` at most). */
function debouncedBursts(spec: WatchSpec, ctx: SourceContext, git: () => GitIgnore | undefined) {
  const burst = new Burst();
  let timer: unknown;
  let startedAt: number | undefined;
  let stopped = false;

  const isOwnWrite = (path: string) => {
    try {
      return ctx.ownWrites().has(path);
    } catch (error) {
      ctx.log("warn", "watch: could not read the run's own writes", { error: messageOf(error) });
      return false;
    }
  };

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
      const gitIgnore = git();
      if (gitIgnore && changes.size > 0) for (const path of await gitIgnore.ignoredAmong([...changes.keys()])) changes.delete(path);
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
      // Asked now, while the run that wrote it still runs: it may well have ended when the burst fires.
      if (isOwnWrite(path)) return;
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
      return "the system's limit on watched files and folders is reached (ENOSPC): raise it with `sudo sysctl fs.inotify.max_user_watches=524288` (and in /etc/sysctl.d/ to keep it), or watch fewer paths";
    case "EMFILE":
      return "too many open files (EMFILE): raise the limit (`ulimit -n`), or watch fewer paths";
    default:
      return undefined;
  }
}

function codeOf(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined;
}
