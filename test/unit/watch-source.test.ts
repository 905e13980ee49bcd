import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { systemClock, type Clock } from "../../src/core/clock.ts";
import { FakeClock } from "../helpers/fake-clock.ts";
import type { RunningSource, SourceContext, TriggerEvent } from "../../src/triggers/trigger-source.ts";
import { noteForWatchError, startWatchSource, type WatchSpec } from "../../src/triggers/watch-source.ts";
import { Burst, burstEvent } from "../../src/triggers/watch-burst.ts";
import { watchScope } from "../../src/triggers/watch-paths.ts";
import { watchedDirectories } from "../../src/triggers/watch-hub.ts";

const DEBOUNCE_MS = 150;
/** Long enough for a file event to arrive and its burst to fire; used before a marker write. */
const SETTLE_MS = DEBOUNCE_MS * 3;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, ok: () => boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

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

type Extra = { ignore?: string[]; ownWrites?: Set<string>; clock?: Clock; debounceMs?: number };

async function watching(dir: string, paths: string[], extra: Extra = {}) {
  const events: TriggerEvent[] = [];
  const notes: (string | undefined)[] = [];
  const logs: string[] = [];
  const ctx: SourceContext = {
    directory: dir,
    emit: (event) => void events.push(event),
    loadState: () => undefined,
    saveState: () => {},
    setNote: (note) => void notes.push(note),
    log: (level, message, data) => void logs.push(`${level} ${message} ${JSON.stringify(data ?? {})}`),
    clock: extra.clock ?? systemClock,
    ownWrites: () => extra.ownWrites ?? new Set(),
  };
  const debounceMs = extra.debounceMs ?? DEBOUNCE_MS;
  const spec: WatchSpec = { kind: "watch", paths, ignore: extra.ignore ?? [], debounce: `${debounceMs}ms`, debounceMs };
  const source: RunningSource = await startWatchSource(spec, ctx);
  after(() => source.stop());
  return { events, notes, logs, source };
}

describe("watch source on real files", () => {
  it("one save fires one event naming the file", async () => {
    const p = project();
    const w = await watching(p.dir, ["src/"]);
    p.write("src/a.ts", "changed\n");
    await until("the event", () => w.events.length > 0);
    await sleep(SETTLE_MS);
    assert.deepEqual(w.events.map((e) => e.summary), ["src/a.ts changed"]);
    assert.match(w.events[0]!.data!, /^changed src\/a\.ts$/m);
    assert.deepEqual(w.logs.filter((l) => /^(warn|error)/.test(l)), []);
  });

  it("a burst of 200 files fires once, with the first 50 listed and the count", async () => {
    const p = project();
    const w = await watching(p.dir, ["src/"]);
    for (let i = 0; i < 200; i++) p.write(`src/burst/f${String(i).padStart(3, "0")}.ts`);
    await until("the event", () => w.events.length > 0);
    await sleep(SETTLE_MS);
    assert.equal(w.events.length, 1, w.events.map((e) => e.summary).join("; "));
    assert.equal(w.events[0]!.summary, "src/burst/f000.ts and 199 more added");
    const lines = w.events[0]!.data!.split("\n");
    assert.equal(lines[0], "200 files: 200 added");
    assert.equal(lines.filter((l) => l.startsWith("added src/burst/")).length, 50);
    assert.equal(lines.at(-1), "and 150 more");
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
    await sleep(SETTLE_MS);
    p.write("src/marker.ts");
    await until("the marker's event", () => w.events.length > 0);
    await sleep(SETTLE_MS);
    assert.deepEqual(w.events.map((e) => e.summary), ["src/marker.ts added"]);
    assert.ok(w.logs.some((l) => l.includes('not watching it {"folder":"build"}')), "the new .gitignored folder left the watch");
  });

  it("a folder created after the start is watched, and its deletion fires", async () => {
    const p = project();
    const w = await watching(p.dir, ["src/"]);
    mkdirSync(join(p.dir, "src/new/deeper"), { recursive: true });
    await sleep(SETTLE_MS);
    p.write("src/new/deeper/f.ts");
    await until("the new file's event", () => w.events.length > 0);
    assert.equal(w.events[0]!.summary, "src/new/deeper/f.ts added");
    p.remove("src/new");
    await until("the deletion's event", () => w.events.length > 1);
    assert.equal(w.events[1]!.summary, "src/new/deeper/f.ts deleted");
  });

  it("paths that do not exist at the start are picked up when they appear, even after being deleted", async () => {
    const p = project();
    const w = await watching(p.dir, ["later/deep/", "config.json", "gen/**/*.ts"]);
    p.write("later/deep/x.ts");
    await until("later/deep", () => w.events.length > 0);
    p.write("config.json", "{}");
    await until("config.json", () => w.events.length > 1);
    p.write("gen/a/b.ts");
    p.write("gen/a/b.js");
    await until("gen", () => w.events.length > 2);
    p.remove("later");
    await until("the deletion", () => w.events.length > 3);
    p.write("later/deep/y.ts");
    await until("the recreated folder", () => w.events.length > 4);
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
    await sleep(SETTLE_MS);
    p.write("src/own.ts", "again\n");
    p.write("src/mine.ts");
    await until("the event", () => w.events.length > 0);
    await sleep(SETTLE_MS);
    assert.deepEqual(w.events.map((e) => e.summary), ["src/mine.ts added"]);
  });

  it("a file the run wrote does not fire even when the run has ended before the burst fires", async () => {
    const p = project();
    const own = new Set(["src/own.ts"]);
    const w = await watching(p.dir, ["src/"], { ownWrites: own, debounceMs: 600 });
    p.write("src/own.ts");
    await sleep(300); // the change is seen; the run ends before the debounce is over
    own.clear();
    await sleep(600 + SETTLE_MS);
    p.write("src/mine.ts");
    await until("the event", () => w.events.length > 0);
    await sleep(SETTLE_MS);
    assert.deepEqual(w.events.map((e) => e.summary), ["src/mine.ts added"]);
  });

  it("a file that never goes quiet still fires once the burst is 10 s old (10 debounces, at least 10 s)", async () => {
    const p = project();
    const clock = new FakeClock();
    const w = await watching(p.dir, ["src/"], { clock, debounceMs: 1000 });
    let writes = 0;
    while (w.events.length === 0 && writes < 15) {
      p.write("src/log.ts", `line ${writes++}\n`);
      await sleep(80); // the file event arrives in real time
      await clock.advance(900); // always less than the debounce
      await sleep(100); // a firing burst asks git (a real process) before it emits
    }
    // Writes at 0, 900, ... 9,900 ms: the 12th is the first after which 10,000 ms is reached.
    assert.equal(writes, 12);
    assert.deepEqual(w.events.map((e) => e.summary), ["src/log.ts added"]);
  });

  it("stop() drops the pending burst and nothing fires after it", async () => {
    const p = project();
    const w = await watching(p.dir, ["src/"]);
    p.write("src/a.ts", "pending\n");
    await sleep(50);
    await w.source.stop();
    p.write("src/a.ts", "after stop\n");
    p.write("src/c.ts");
    await sleep(SETTLE_MS * 2);
    assert.deepEqual(w.events, []);
  });

  it("outside a git repository only the fixed ignores apply", async () => {
    const p = project({ git: false });
    const w = await watching(p.dir, ["**/*.ts"]);
    p.write("node_modules/pkg/index.ts", "changed\n");
    await sleep(SETTLE_MS);
    p.write("dist/new.ts");
    await until("the event", () => w.events.length > 0);
    await sleep(SETTLE_MS);
    assert.deepEqual(w.events.map((e) => e.summary), ["dist/new.ts added"]);
  });
});

describe("triggers sharing a project's watcher", () => {
  it("a trigger added later sees its own folder; stopping one leaves the others; the last stop closes the watcher", async () => {
    const p = project();
    p.write("docs/guide.md");
    const a = await watching(p.dir, ["src/"]);
    const [b, c] = await Promise.all([watching(p.dir, ["docs/"]), watching(p.dir, ["**/*.md"], { ignore: ["docs/"] })]);
    assert.deepEqual(watchedDirectories().filter((d) => d === p.dir), [p.dir], "one watcher for the project");
    p.write("docs/guide.md", "edited\n");
    p.write("README.md");
    await until("docs and README events", () => b.events.length > 0 && c.events.length > 0);
    await b.source.stop();
    p.write("src/a.ts", "edited\n");
    p.write("docs/guide.md", "again\n");
    await until("the src event", () => a.events.length > 0);
    await sleep(SETTLE_MS);
    assert.deepEqual(a.events.map((e) => e.summary), ["src/a.ts changed"]);
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
