import { after, afterEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { TRIGGER_KINDS, kindOf, type TriggerSpec } from "../../src/triggers/kinds/registry.ts";
import type { KindEnv, TriggerInput, TriggerKind } from "../../src/triggers/kinds/trigger-kind.ts";
import type { SourceContext, TriggerEvent, UpstreamRun } from "../../src/triggers/trigger-source.ts";
import { parseTrigger, TRIGGER_SHAPES, TriggerSpecError } from "../../src/automations/trigger-spec.ts";
import { EventSources } from "../../src/triggers/event-sources.ts";
import { defaultLoaders } from "../../src/triggers/default-loaders.ts";
import { TriggerRepository } from "../../src/store/trigger-repository.ts";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import { AutomationRepository } from "../../src/store/automation-repository.ts";
import { newClaimer } from "../../src/core/claims.ts";
import { startFakeGithub, type FakeGithub } from "../harness/fake-github.ts";
import { FakeClock } from "../helpers/fake-clock.ts";
import { waitFor } from "../helpers/wait-for.ts";

/**
 * Every registered trigger kind is held to the same rules (a new kind adds its harness below, or
 * the first test fails): its input parses to a spec that reads back the same from the database and
 * is described in words; bad input is refused with a message naming the fix; a kind with a source
 * starts and stops leaving no timer or OS handle, fires one event per change, and its lease is
 * taken over when the process holding it dies. Time is the fake clock's; the OS (files, processes,
 * sockets) is waited for, never slept on.
 */

const NOW = Date.parse("2026-11-26T12:00:00Z");
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const scratch = mkdtempSync(join(tmpdir(), "trigger-kinds-"));
after(() => rmSync(scratch, { recursive: true, force: true }));
let folders = 0;
const folder = () => {
  const dir = join(scratch, `p${++folders}`);
  mkdirSync(dir, { recursive: true });
  return dir;
};

/** A source under test: what it was given, and a change the test makes happen. */
type Live = {
  input: TriggerInput;
  env: KindEnv;
  directory: string;
  /** Context fields the kind needs beyond the common ones. */
  extra?: Partial<SourceContext>;
  /** Waits until the source has its baseline (it fires nothing for what already was). */
  ready(clock: FakeClock, saves: () => number): Promise<void>;
  /** Makes one change and moves time until the source has seen it (the event may need `settle`). */
  change(clock: FakeClock): Promise<void>;
  /** Moves time through one more of the source's checks (or debounces), waiting for the OS. */
  settle(clock: FakeClock): Promise<void>;
  /** Closes what the harness itself holds open (a fake server), before handles are counted. */
  release?(): Promise<void> | void;
};

type Harness = {
  input: TriggerInput;
  /** An input the kind refuses, and what its message must say (the fix). */
  bad: { input: TriggerInput; fix: RegExp };
  /** Kinds with a source of their own. */
  live?: () => Promise<Live>;
};

const HARNESSES: Record<string, Harness> = {
  interval: { input: { every: "30m" }, bad: { input: { every: "soon" }, fix: /"every": "soon" is not a duration; write e\.g\. "90s"/ } },
  cron: { input: { cron: "0 9 * * 1-5", timezone: "Europe/Paris" }, bad: { input: { cron: "0 9 * *" }, fix: /has 4 fields; use 5/ } },
  once: { input: { at: "2026-11-27T18:00:00+01:00" }, bad: { input: { at: "2020-01-01T00:00:00Z" }, fix: /"at": .* is in the past/ } },
  watch: { input: { watch: ["src/"], debounce: "100ms" }, bad: { input: { watch: ["../up"] }, fix: /must be relative to the project and stay inside it, e\.g\. "src\/"/ }, live: liveWatch },
  command: { input: { command: "cat state.txt", every: "1s" }, bad: { input: { command: "ls", diff: "lines" }, fix: /"diff": "lines" must be one of hash, full, exit_code/ }, live: liveCommand },
  webhook: { input: { webhook: "deploy" }, bad: { input: { webhook: "deploy", secret: "x" }, fix: /Leave "secret" out/ } },
  github: { input: { github: "o/r", events: ["pr_opened"], every: "1s" }, bad: { input: { github: "o/r", events: ["star"] }, fix: /choose from push, pr_opened/ }, live: liveGithub },
  after: { input: { after: "au_up", on: "any" }, bad: { input: { after: "au_up", on: "sometimes" }, fix: /"on": "sometimes" must be one of success, failure, any/ }, live: liveAfter },
};

const KINDS = TRIGGER_KINDS as readonly TriggerKind[];

it("every registered kind has a conformance harness, and every kind key is unique", () => {
  assert.deepEqual(KINDS.map((k) => k.kind).filter((k) => !HARNESSES[k]), [], "add a harness for each new kind");
  assert.equal(new Set(KINDS.map((k) => k.key)).size, KINDS.length);
});

for (const kind of KINDS) {
  const harness = HARNESSES[kind.kind];
  if (!harness) continue;
  describe(`trigger kind ${kind.key}`, () => {
    it("parses to a spec that reads back the same and is described in words", () => {
      const spec = parseTrigger(harness.input, NOW, "UTC");
      assert.equal(spec.kind, kind.kind);
      assert.equal(kindOf(spec), kind);
      const stored = JSON.parse(JSON.stringify(spec)) as TriggerSpec;
      assert.deepEqual(stored, spec, "the spec is plain JSON");
      assert.deepEqual(parseTrigger(JSON.parse(JSON.stringify(harness.input)), NOW, "UTC"), spec, "parsing is a function of the input");
      const words = kind.describe(stored as never);
      assert.equal(words, kind.describe(spec as never));
      assert.ok(words.length > 3 && !/undefined|\[object/.test(words), words);
      const full = kind.inFull?.(stored as never) ?? { text: words };
      assert.ok(full.text.length > 3 && !/undefined|\[object/.test(full.text), full.text);
    });

    it("refuses bad input with a message naming the fix, and a stray field naming its kind", () => {
      assert.throws(() => parseTrigger(harness.bad.input, NOW, "UTC"), (e: Error) => e instanceof TriggerSpecError && harness.bad.fix.test(e.message) ? true : assert.fail(e.message));
      assert.throws(() => parseTrigger({ ...harness.input, nonsense: "x" }, NOW, "UTC"),
        (e: Error) => e instanceof TriggerSpecError && e.message.startsWith(`"nonsense" does not go with "${kind.key}". Shapes: `));
      assert.ok(TRIGGER_SHAPES.includes(kind.shape) && kind.shape.includes(`"${kind.key}"`), kind.shape);
    });

    if (!harness.live) {
      it(kind.timing === "event" ? "has no source of its own (the webhook listener serves it)" : "is fired by the clock, not a source", () => {
        assert.equal(kind.start, undefined);
      });
      return;
    }
    const live = harness.live;

    it("starts and stops leaving no timer and no OS handle", async () => {
      const handlesBefore = handles();
      const l = await live();
      const clock = new FakeClock();
      const { ctx, saves } = context(l, clock);
      const source = await kind.start!(parseTrigger(l.input, NOW) as never, ctx, l.env);
      await l.ready(clock, saves);
      await source.stop();
      assert.equal(clock.pendingTimers(), 0, "no timer left");
      await l.release?.();
      await waitFor(() => sameHandles(handlesBefore, handles()), `handles back to ${JSON.stringify(handlesBefore)} (now ${JSON.stringify(handles())})`);
    });

    it("fires one event per change", async () => {
      const l = await live();
      const clock = new FakeClock();
      const { ctx, events, saves } = context(l, clock);
      const source = await kind.start!(parseTrigger(l.input, NOW) as never, ctx, l.env);
      cleanups.push(() => source.stop());
      await l.ready(clock, saves);
      assert.deepEqual(events, [], "what was there before is the baseline");
      await l.change(clock);
      for (let i = 0; i < 20 && events.length === 0; i++) await l.settle(clock);
      assert.equal(events.length, 1, JSON.stringify(events));
      for (let i = 0; i < 3; i++) await l.settle(clock);
      assert.equal(events.length, 1, `one change, one event: ${JSON.stringify(events)}`);
      await l.change(clock);
      for (let i = 0; i < 20 && events.length === 1; i++) await l.settle(clock);
      for (let i = 0; i < 3; i++) await l.settle(clock);
      assert.equal(events.length, 2, `a second change, a second event: ${JSON.stringify(events)}`);
    });

    it("runs in one process: a lease another takes over when the holder dies", async () => {
      const l = await live();
      const clock = new FakeClock();
      const db = join(folder(), "tasks.db");
      const store = SqliteTaskStore.open({ path: db, projectId: "proj" });
      cleanups.push(() => store.close());
      const automations = new AutomationRepository(store.db, "proj");
      automations.saveAutomation({
        id: "au_down", title: "t", prompt: "p", agent: "general", notify: "never", sessionMode: "fresh", overlap: "skip", catchUp: "skip",
        enabled: true, reportTo: "ses_x", reportAgent: "build", createdBy: "ses_x", createdAt: clock.now(), updatedAt: clock.now(), runCount: 0, consecutiveFailures: 0,
      });
      automations.saveTrigger({ id: "tr_1", automationId: "au_down", spec: parseTrigger(l.input, NOW), createdAt: clock.now() });
      const fired: string[] = [];
      const sources = (holder: string) => new EventSources({
        store: new TriggerRepository(store.db, "proj"), holder, directory: l.directory, clock, loaders: defaultLoaders(l.env),
        fire: (id) => void fired.push(`${holder} ${id}`) as never, recordSkip: () => {}, abandonRun: () => {}, ownWrites: () => new Set(),
        log: () => {}, webhook: { host: "127.0.0.1", port: 0 }, ...(l.extra?.runsAfter ? { runsAfter: l.extra.runsAfter } : {}),
      });
      const dead = sources(`${hostname()}:${deadPid()}:0123abcd`);
      const alive = sources(newClaimer());
      cleanups.push(() => dead.stop(), () => alive.stop());
      dead.sync();
      assert.deepEqual(dead.runningHere(), ["tr_1"], "the first process takes the lease");
      alive.sync();
      assert.deepEqual(alive.runningHere(), ["tr_1"], "its holder is gone: the lease is taken over at once");
      const live2 = sources(newClaimer());
      cleanups.push(() => live2.stop());
      live2.sync();
      assert.deepEqual(live2.runningHere(), [], "a live holder keeps it");
    });
  });
}

/** A context that keeps what the source emits and saves. */
function context(l: Live, clock: FakeClock) {
  const events: TriggerEvent[] = [];
  let state: unknown;
  let saved = 0;
  const ctx: SourceContext = {
    directory: l.directory, clock, emit: (event) => void events.push(event),
    loadState: () => state, saveState: (next) => void (saved++, state = JSON.parse(JSON.stringify(next))),
    setNote: () => {}, log: () => {}, ownWrites: () => new Set(), createdAt: clock.now(), ...l.extra,
  };
  return { ctx, events, saves: () => saved };
}

/**
 * Moves the fake clock in steps until `done` (a check or poll the OS completes in real time), so a
 * timer armed when the previous one's work ended is reached too.
 */
async function advanceUntil(clock: FakeClock, done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await clock.advance(250);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await clock.advance(0);
}

/** A pid no process has: one that just exited. */
function deadPid(): number {
  return spawnSync("true").pid!;
}

/** OS handles the process holds (watchers, processes, sockets, timers), by kind. */
function handles(): Record<string, number> {
  const count: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) if (kind !== "TTYWrap") count[kind] = (count[kind] ?? 0) + 1;
  return count;
}

function sameHandles(before: Record<string, number>, now: Record<string, number>): boolean {
  return Object.keys({ ...before, ...now }).every((k) => (now[k] ?? 0) <= (before[k] ?? 0));
}

async function liveWatch(): Promise<Live> {
  const directory = folder();
  mkdirSync(join(directory, "src"));
  writeFileSync(join(directory, "src/old.ts"), "old\n");
  const seen: string[] = [];
  // The source asks, for each change it is handed, whether a run wrote it: what it asks about is what it has seen.
  const ownWrites = { has: (path: string) => (seen.push(path), false) } as unknown as Set<string>;
  let n = 0;
  return {
    input: { watch: ["src/"], debounce: "100ms" }, env: { githubApiUrl: "" }, directory, extra: { ownWrites: () => ownWrites },
    ready: async () => {},
    change: async () => {
      const file = `src/new${++n}.ts`;
      writeFileSync(join(directory, file), `${n}\n`);
      await waitFor(() => seen.includes(file), `the watcher to see ${file}`);
    },
    settle: (clock) => clock.advance(150),
  };
}

async function liveCommand(): Promise<Live> {
  const directory = folder();
  writeFileSync(join(directory, "state.txt"), "green\n");
  // Each check appends to checks.txt (not to its output): the test knows when a check has run.
  const checks = () => readFileSync(join(directory, "checks.txt"), "utf8").split("\n").length - 1;
  writeFileSync(join(directory, "checks.txt"), "");
  let n = 0;
  const settle = async (clock: FakeClock) => {
    const before = checks();
    await advanceUntil(clock, () => checks() > before, "a check of the command");
  };
  return {
    input: { command: "cat state.txt; echo x >> checks.txt", every: "1s" }, env: { githubApiUrl: "" }, directory,
    ready: async () => void await waitFor(() => checks() >= 1, "the baseline check"),
    change: async () => writeFileSync(join(directory, "state.txt"), `changed ${++n}\n`),
    settle,
  };
}

async function liveGithub(): Promise<Live> {
  const fake: FakeGithub = await startFakeGithub({ limit: 1_000_000 });
  cleanups.push(() => fake.close());
  const previous = process.env.GITHUB_TOKEN;
  process.env.GITHUB_TOKEN = "ghp_conformance";
  cleanups.push(() => (previous === undefined ? delete process.env.GITHUB_TOKEN : (process.env.GITHUB_TOKEN = previous)));
  const pulls = () => fake.requestsTo(`/repos/${fake.repo}/pulls`).length;
  return {
    input: { github: fake.repo, events: ["pr_opened"], every: "1s" }, env: { githubApiUrl: fake.url }, directory: folder(),
    ready: async (clock, saves) => {
      await clock.advance(0);
      await waitFor(() => saves() >= 1, "the baseline poll");
    },
    change: async () => void fake.openPull({ title: "Fix", author: "ada" }),
    settle: async (clock) => {
      const before = pulls();
      await advanceUntil(clock, () => pulls() > before, "a poll of the pulls");
    },
    release: () => fake.close(),
  };
}

async function liveAfter(): Promise<Live> {
  const upstream: UpstreamRun[] = [{ id: 1, runNo: 1, createdAt: 0, status: "completed", result: "before the chain" }];
  let clockNow = () => 0;
  return {
    input: { after: "au_up", on: "any" }, env: { githubApiUrl: "" }, directory: folder(),
    extra: { runsAfter: (automationId, afterId) => (automationId === "au_up" ? upstream.filter((r) => r.id > afterId) : []) },
    ready: async (clock) => void (clockNow = () => clock.now()),
    change: async () => {
      const id = upstream.length + 1;
      upstream.push({ id, runNo: id, createdAt: clockNow(), status: "active", result: "" });
      upstream[id - 1] = { ...upstream[id - 1]!, status: "completed", result: `result ${id}` };
    },
    settle: (clock) => clock.advance(2000),
  };
}

