import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { RunningSource, SourceContext, TriggerEvent } from "../../src/triggers/trigger-source.ts";
import { noteForWatchError, startWatchSource, type WatchSpec } from "../../src/triggers/watch-source.ts";
import { Burst, burstEvent } from "../../src/triggers/watch-burst.ts";
import { watchScope } from "../../src/triggers/watch-paths.ts";
import { watchedDirectories } from "../../src/triggers/watch-hub.ts";
import { FakeClock } from "../helpers/fake-clock.ts";
import { waitFor } from "../helpers/wait-for.ts";

// File events come from the OS (chokidar on inotify) in real time; the debounce runs on a fake
// clock. A test waits until the source has seen the changes it made, then moves the clock.

const DEBOUNCE_MS = 150;

/** A project folder: a git repository with a .gitignore, some sources and a node_modules. */
function project(opts: { git?: boolean } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "watch-source-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const write = (rel: string, text = `${rel} ${Date.now()}\n`) => {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  };
  if (opts.git !== false) {
    execFileSync("git", ["init", "-q", dir]);
    write(".gitignore", "dist/\nbuild/\nsrc/secret.ts\n");
  }
  write("src/a.ts");
  write("src/sub/b.ts");
  write("dist/old.ts");
  write("node_modules/pkg/index.ts");
  return { dir, write, remove: (rel: string) => rmSync(join(dir, rel), { recursive: true, force: true }) };
}

type Extra = { ignore?: string[]; ownWrites?: Set<string>; clock?: FakeClock; debounceMs?: number };
type Watching = Awaited<ReturnType<typeof watching>>;

async function watching(dir: string, paths: string[], extra: Extra = {}) {
  const events: TriggerEvent[] = [];
  const notes: (string | undefined)[] = [];
  const logs: string[] = [];
  const clock = extra.clock ?? new FakeClock();
  const own = extra.ownWrites ?? new Set<string>();
  // The source asks, for each change it is handed, whether the run wrote that file: what it asks
  // about is what it has seen.
  const asked: string[] = [];
  const ownWrites = { has: (path: string) => (asked.push(path), own.has(path)) } as Set<string>;
  const ctx: SourceContext = {
    directory: dir,
    emit: (event) => void events.push(event),
    loadState: () => undefined,
    saveState: () => {},
    setNote: (note) => void notes.push(note),
    log: (level, message, data) => void logs.push(`${level} ${message} ${JSON.stringify(data ?? {})}`),
    clock,
    ownWrites: () => ownWrites,
  };
  const debounceMs = extra.debounceMs ?? DEBOUNCE_MS;
  const spec: WatchSpec = { kind: "watch", paths, ignore: extra.ignore ?? [], debounce: `${debounceMs}ms`, debounceMs };
  const source: RunningSource = await startWatchSource(spec, ctx);
  after(() => source.stop());
  /** Bursts the source has finished with: fired, or dropped as only the run's own or ignored files. */
  const handled = () => events.length + logs.filter((l) => l.includes("a burst held only")).length;
  return { events, notes, logs, source, clock, asked, debounceMs, handled };
}

/** Waits until the source has seen a change to each of `paths`. */
async function seen(w: Watching, ...paths: string[]): Promise<void> {
  const wanted = new Set(paths);
  await waitFor(() => w.asked.filter((p) => wanted.delete(p)) && wanted.size === 0, `the watcher to see ${paths.join(", ")}`, 10_000);
}

/** Once the source has seen `paths`, lets the debounce run out and waits until the burst is handled. */
async function fire(w: Watching, ...paths: string[]): Promise<void> {
  await seen(w, ...paths);
  const before = w.handled();
  await w.clock.advance(w.debounceMs);
  await waitFor(() => w.handled() > before, "the burst to be handled"); // it asks git, a real process
  w.asked.length = 0;
}

/**
 * A change written now fires alone: anything the OS still had to deliver for earlier writes would
 * land in its burst. The barrier that replaces "sleep and see that nothing else fired".
 */
async function firesAlone(p: ReturnType<typeof project>, w: Watching, rel: string): Promise<void> {
  const count = w.events.length;
  p.write(rel);
  await fire(w, rel);
  assert.deepEqual(w.events.slice(count).map((e) => e.summary), [`${rel} added`]);
}

describe("watch source on real files", () => {
  it("one save fires one event naming the file", async () => {
    const p = project();
    const w = await watching(p.dir, ["src/"]);
    p.write("src/a.ts", "changed\n");
    await fire(w, "src/a.ts");
    assert.deepEqual(w.events.map((e) => e.summary), ["src/a.ts changed"]);
    assert.match(w.events[0]!.data!, /^changed src\/a\.ts$/m);
    await firesAlone(p, w, "src/marker.ts");
    assert.deepEqual(w.logs.filter((l) => /^(warn|error)/.test(l)), []);
  });

  it("a burst of 200 files fires once, with the first 50 listed and the count", async () => {
    const p = project();
    const w = await watching(p.dir, ["src/"]);
    const names = Array.from({ length: 200 }, (_, i) => `src/burst/f${String(i).padStart(3, "0")}.ts`);
    for (const name of names) p.write(name);
    await fire(w, ...names);
    assert.equal(w.events.length, 1, w.events.map((e) => e.summary).join("; "));
    assert.equal(w.events[0]!.summary, "src/burst/f000.ts and 199 more added");
    const lines = w.events[0]!.data!.split("\n");
    assert.equal(lines[0], "200 files: 200 added");
    assert.equal(lines.filter((l) => l.startsWith("added src/burst/")).length, 50);
    assert.equal(lines.at(-1), "and 150 more");
  });

  it("a change during the debounce restarts it", async () => {
    const p = project();
    const w = await watching(p.dir, ["src/"]);
    p.write("src/a.ts", "one\n");
    await seen(w, "src/a.ts");
    await w.clock.advance(DEBOUNCE_MS - 1);
    p.write("src/c.ts");
    await seen(w, "src/c.ts");
    await w.clock.advance(DEBOUNCE_MS - 1);
    assert.equal(w.clock.pendingTimers(), 1, "quiet for less than the debounce since the last change: still waiting");
    await fire(w);
    assert.deepEqual(w.events.map((e) => e.summary), ["src/a.ts and 1 more changed"]);
  });

  it("ignored, .gitignored and node_modules paths never fire; the next real change fires alone", async () => {
    const p = project();
    const w = await watching(p.dir, ["**/*.ts"], { ignore: ["**/*.skip.ts", "tmp/"] });
    p.write("src/x.skip.ts");
    p.write("tmp/scratch.ts");
    p.write("src/secret.ts");
    p.write("dist/new.ts");
    p.write("build/out.ts"); // a .gitignored folder created after the start
    p.write("node_modules/pkg/index.ts", "changed\n");
    p.write("src/node_modules/deep.ts");
    await firesAlone(p, w, "src/marker.ts");
    await waitFor(() => w.logs.some((l) => l.includes('not watching it {"folder":"build"}')), "the new .gitignored folder to leave the watch");
    await firesAlone(p, w, "src/marker2.ts");
  });

  it("a folder created after the start is watched, and its deletion fires", async () => {
    const p = project();
    const w = await watching(p.dir, ["src/"]);
    mkdirSync(join(p.dir, "src/new/deeper"), { recursive: true });
    p.write("src/new/deeper/f.ts");
    await fire(w, "src/new/deeper/f.ts");
    assert.deepEqual(w.events.map((e) => e.summary), ["src/new/deeper/f.ts added"]);
    p.write("src/new/deeper/g.ts"); // written once the folder is watched, not found by its first scan
    await fire(w, "src/new/deeper/g.ts");
    p.remove("src/new");
    await fire(w, "src/new/deeper/f.ts");
    assert.deepEqual(w.events.map((e) => e.summary).slice(1), ["src/new/deeper/g.ts added", "src/new/deeper/f.ts and 1 more deleted"]);
  });

  it("paths that do not exist at the start are picked up when they appear, even after being deleted", async () => {
    const p = project();
    const w = await watching(p.dir, ["later/deep/", "config.json", "gen/**/*.ts"]);
    p.write("later/deep/x.ts");
    await fire(w, "later/deep/x.ts");
    p.write("config.json", "{}");
    await fire(w, "config.json");
    p.write("gen/a/b.ts");
    p.write("gen/a/b.js");
    await fire(w, "gen/a/b.ts");
    p.remove("later");
    await fire(w, "later/deep/x.ts");
    p.write("later/deep/y.ts");
    await fire(w, "later/deep/y.ts");
    assert.deepEqual(w.events.map((e) => e.summary), [
      "later/deep/x.ts added",
      "config.json added",
      "gen/a/b.ts added",
      "later/deep/x.ts deleted",
      "later/deep/y.ts added",
    ]);
  });

  it("files the automation's own run wrote do not fire; a burst of only those fires nothing", async () => {
    const p = project();
    const own = new Set(["src/own.ts", "src/own2.ts"]);
    const w = await watching(p.dir, ["src/"], { ownWrites: own });
    p.write("src/own.ts");
    p.write("src/own2.ts");
    await seen(w, "src/own.ts", "src/own2.ts");
    assert.equal(w.clock.pendingTimers(), 0, "nothing to fire");
    p.write("src/own.ts", "again\n");
    p.write("src/mine.ts");
    await fire(w, "src/own.ts", "src/mine.ts");
    assert.deepEqual(w.events.map((e) => e.summary), ["src/mine.ts added"]);
    await firesAlone(p, w, "src/marker.ts");
  });

  it("a file the run wrote does not fire even when the run has ended before the burst fires", async () => {
    const p = project();
    const own = new Set(["src/own.ts"]);
    const w = await watching(p.dir, ["src/"], { ownWrites: own });
    p.write("src/own.ts");
    p.write("src/mine.ts");
    await seen(w, "src/own.ts", "src/mine.ts");
    own.clear(); // the run ends before the debounce is over
    await fire(w);
    assert.deepEqual(w.events.map((e) => e.summary), ["src/mine.ts added"]);
  });

  it("a file the run claims after it was seen, before the burst fires, does not fire", async () => {
    const p = project();
    const own = new Set<string>();
    const w = await watching(p.dir, ["src/"], { ownWrites: own });
    p.write("src/late.ts");
    await seen(w, "src/late.ts");
    own.add("src/late.ts");
    await fire(w);
    assert.deepEqual(w.events, []);
    assert.ok(w.logs.some((l) => l.includes("a burst held only the run's own or ignored files")));
  });

  it("a file that never goes quiet still fires once the burst is 10 s old (10 debounces, at least 10 s)", async () => {
    const p = project();
    const w = await watching(p.dir, ["src/"], { debounceMs: 1000 });
    let writes = 0;
    while (w.events.length === 0 && writes < 15) {
      const asked = w.asked.length;
      const line = `line ${writes++}\n`;
      // chokidar passes on one change per file per 50 ms (real time): write until this one is seen.
      await waitFor(() => w.asked.length > asked || void p.write("src/log.ts", line), `write ${writes} to be seen`);
      await w.clock.advance(900); // always less than the debounce
      // A burst that fired has no timer left; it asks git (a real process) before it emits.
      if (w.clock.pendingTimers() === 0) await waitFor(() => w.handled() > 0, "the burst to fire");
    }
    // Writes at 0, 900, ... 9,900 ms: the 12th is the first after which 10,000 ms is reached.
    assert.equal(writes, 12);
    assert.deepEqual(w.events.map((e) => e.summary), ["src/log.ts added"]);
  });

  it("stop() drops the pending burst and nothing fires after it", async () => {
    const p = project();
    const clock = new FakeClock();
    const w = await watching(p.dir, ["src/"], { clock });
    const witness = await watching(p.dir, ["src/"], { clock }); // shares the watcher; sees what w would
    p.write("src/a.ts", "pending\n");
    await seen(w, "src/a.ts");
    await w.source.stop();
    p.write("src/a.ts", "after stop\n");
    p.write("src/c.ts");
    await fire(witness, "src/c.ts");
    await clock.advance(10 * DEBOUNCE_MS);
    assert.deepEqual(w.events, []);
    assert.deepEqual(w.asked, ["src/a.ts"], "nothing reached the stopped source");
    assert.equal(clock.pendingTimers(), 0, "no timer left behind");
  });

  it("outside a git repository only the fixed ignores apply", async () => {
    const p = project({ git: false });
    const w = await watching(p.dir, ["**/*.ts"]);
    p.write("node_modules/pkg/index.ts", "changed\n");
    p.write("dist/new.ts");
    await fire(w, "dist/new.ts");
    assert.deepEqual(w.events.map((e) => e.summary), ["dist/new.ts added"]);
    await firesAlone(p, w, "src/marker.ts");
  });
});

describe("triggers sharing a project's watcher", () => {
  it("a trigger added later sees its own folder; stopping one leaves the others; the last stop closes the watcher", async () => {
    const p = project();
    p.write("docs/guide.md");
    const clock = new FakeClock();
    const a = await watching(p.dir, ["src/"], { clock });
    const [b, c] = await Promise.all([watching(p.dir, ["docs/"], { clock }), watching(p.dir, ["**/*.md"], { ignore: ["docs/"], clock })]);
    assert.deepEqual(watchedDirectories().filter((d) => d === p.dir), [p.dir], "one watcher for the project");
    p.write("docs/guide.md", "edited\n");
    p.write("README.md");
    await seen(b, "docs/guide.md");
    await fire(c, "README.md");
    await waitFor(() => b.events.length > 0, "the docs event");
    await b.source.stop();
    p.write("src/a.ts", "edited\n");
    p.write("docs/guide.md", "again\n");
    await fire(a, "src/a.ts");
    await firesAlone(p, a, "src/marker.ts");
    assert.deepEqual(a.events.map((e) => e.summary), ["src/a.ts changed", "src/marker.ts added"]);
    assert.deepEqual(b.events.map((e) => e.summary), ["docs/guide.md changed"]);
    assert.deepEqual(c.events.map((e) => e.summary), ["README.md added"]);
    await a.source.stop();
    await c.source.stop();
    assert.deepEqual(watchedDirectories().filter((d) => d === p.dir), []);
  });
});

describe("watch scope", () => {
  it("watches the smallest roots and skips what cannot match", () => {
    const s = watchScope(["src/", "src/lib/**/*.ts", "test/**/*.ts", "packages/a/README.md"], ["**/*.log"], (rel) => rel === "src/gen");
    assert.deepEqual(s.roots, ["packages/a/README.md", "src", "test"]);
    assert.equal(s.skip("docs"), true, "outside every root");
    assert.equal(s.skip("packages"), false, "on the way to a root");
    assert.equal(s.skip("packages/b"), true);
    assert.equal(s.skip("src/node_modules"), true);
    assert.equal(s.skip("src/gen/deep/x.ts"), true, "under a .gitignored folder");
    assert.equal(s.wanted("src/deep/a.log"), false);
    assert.equal(s.wanted("src/deep/a.ts"), true);
    assert.equal(s.wanted("test/unit/a.ts"), true);
    assert.equal(s.wanted("test/unit/a.js"), false, "a glob matches files, not everything under its root");
    assert.equal(s.wanted("packages/a/README.md"), true);
  });

  it("a scope covers another when its roots contain the other's and it ignores no more", () => {
    const whole = watchScope(["**/*.ts"], ["dist/"]);
    assert.equal(whole.covers(watchScope(["src/"], ["dist/", "*.log"])), true);
    assert.equal(whole.covers(watchScope(["src/"], [])), false, "the other wants dist/");
    assert.equal(watchScope(["src/"], []).covers(watchScope(["docs/"], [])), false);
    assert.equal(watchScope(["src/"], []).covers(watchScope(["src/lib/**/*.ts"], [])), true);
  });

  it("a pattern without a folder part watches the whole project", () => {
    assert.deepEqual(watchScope(["*.md", "src/"], []).roots, [""]);
    assert.deepEqual(watchScope(["./src", "src/a"], []).roots, ["src"]);
  });
});

describe("burst events", () => {
  it("an editor's temp file cancels out; deleted then added is a change", () => {
    const b = new Burst();
    b.record("src/.a.ts.swp", "added");
    b.record("src/a.ts", "deleted");
    b.record("src/a.ts", "added");
    b.record("src/.a.ts.swp", "deleted");
    b.record("src/b.ts", "changed");
    b.record("src/b.ts", "deleted");
    assert.deepEqual([...b.take().changes], [["src/a.ts", "changed"], ["src/b.ts", "deleted"]]);
    assert.equal(b.empty, true);
  });

  it("a mixed burst says changed and tallies each kind", () => {
    const e = burstEvent(new Map([["a", "added"], ["b", "deleted"], ["c", "changed"]]));
    assert.equal(e.summary, "a and 2 more changed");
    assert.equal(e.data, "3 files: 1 added, 1 deleted, 1 changed\nadded a\ndeleted b\nchanged c");
  });

  it("the watch limit and open-file errors get a note naming the fix", () => {
    assert.match(noteForWatchError(Object.assign(new Error("no space"), { code: "ENOSPC" }))!, /max_user_watches/);
    assert.match(noteForWatchError(Object.assign(new Error("too many"), { code: "EMFILE" }))!, /ulimit -n/);
    assert.equal(noteForWatchError(new Error("other")), undefined);
  });
});
