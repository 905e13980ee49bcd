import { describe, it, afterEach } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { systemClock, type Clock } from "../../src/core/clock.ts";
import type { RunningSource, SourceContext, TriggerEvent } from "../../src/triggers/trigger-source.ts";
import { startCommandSource, type CommandSpec } from "../../src/triggers/command-source.ts";
import { FakeClock } from "../helpers/fake-clock.ts";
import { waitFor as waitForEffect } from "../helpers/wait-for.ts";

type Fake = SourceContext & { events: TriggerEvent[]; saves: unknown[]; notes: (string | undefined)[]; logs: string[]; state: unknown };

function fakeContext(directory: string, state?: unknown, clock: Clock = systemClock): Fake {
  const ctx: Fake = {
    directory,
    events: [],
    saves: [],
    notes: [],
    logs: [],
    state,
    emit: (event) => ctx.events.push(event),
    loadState: () => ctx.state,
    saveState: (next) => {
      ctx.state = JSON.parse(JSON.stringify(next)); // stored as JSON, as the real store does
      ctx.saves.push(ctx.state);
    },
    setNote: (note) => ctx.notes.push(note),
    log: (level, message) => ctx.logs.push(`${level}: ${message}`),
    clock,
    ownWrites: () => new Set(),
  };
  return ctx;
}

function spec(command: string, diff: CommandSpec["diff"], timeoutMs = 5_000): CommandSpec {
  return { kind: "command", command, every: "50ms", everyMs: 50, diff, timeout: `${timeoutMs}ms`, timeoutMs };
}

/** A file's new content in one step: a check running `cat` at that moment never reads it half written (truncated). */
const put = (path: string, text: string) => {
  writeFileSync(`${path}.tmp`, text);
  renameSync(`${path}.tmp`, path);
};

const waitFor = (probe: () => boolean, what: string) => waitForEffect(probe, what, 8_000);

const tempDir = () => mkdtempSync(join(tmpdir(), "command-source-"));
/** Each check appends a line to `checks`; n + 1 lines mean n checks have finished (never two at once). */
const COUNT = "echo x >> checks";
const checksIn = (dir: string) => (existsSync(join(dir, "checks")) ? readFileSync(join(dir, "checks"), "utf8").split("\n").length - 1 : 0);
const waitChecks = (dir: string, n: number) => waitFor(() => checksIn(dir) >= n + 1, `${n} finished checks`);

const running: RunningSource[] = [];
async function start(s: CommandSpec, ctx: SourceContext): Promise<RunningSource> {
  const source = await startCommandSource(s, ctx);
  running.push(source);
  return source;
}
afterEach(async () => {
  await Promise.all(running.splice(0).map((source) => source.stop()));
});

describe("command trigger source", () => {
  it("full: the first check records a baseline and fires nothing; a changed output fires with a unified diff", async () => {
    const dir = tempDir();
    put(join(dir, "out.txt"), "a\nb\nc\n");
    const ctx = fakeContext(dir);
    await start(spec(`${COUNT}; cat out.txt`, "full"), ctx);
    await waitChecks(dir, 3);
    assert.equal(ctx.events.length, 0, "the baseline and unchanged checks fire nothing");
    assert.equal(ctx.saves.length, 1, "only the baseline is written while nothing changes");
    put(join(dir, "out.txt"), "a\nB\nc\nd\n");
    await waitFor(() => ctx.events.length === 1, "one event");
    const [event] = ctx.events;
    assert.equal(event!.summary, "`echo x >> checks; cat out.txt` output changed (2 lines added, 1 removed)");
    assert.equal(event!.data, "--- previous output\n+++ new output\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n");
    assert.equal(event!.caughtUp, undefined);
    await waitChecks(dir, checksIn(dir) + 2);
    assert.equal(ctx.events.length, 1, "the new output is the baseline now");
  });

  it("hash: fires with the new output on a change, not on an exit code change alone", async () => {
    const dir = tempDir();
    put(join(dir, "out.txt"), "one\n");
    put(join(dir, "code"), "0");
    const ctx = fakeContext(dir);
    await start(spec(`${COUNT}; cat out.txt; exit $(cat code)`, "hash"), ctx);
    await waitChecks(dir, 1);
    put(join(dir, "code"), "1");
    await waitChecks(dir, checksIn(dir) + 2);
    assert.equal(ctx.events.length, 0);
    put(join(dir, "out.txt"), "two\n");
    await waitFor(() => ctx.events.length === 1, "one event");
    assert.match(ctx.events[0]!.summary, /^`echo x >> checks; cat out\.txt; exit \$\(cat code\)` output changed$/);
    assert.equal(ctx.events[0]!.data, "New output:\ntwo\n");
    assert.equal((ctx.state as { output?: string }).output, undefined, "hash keeps no output in its state");
  });

  it("exit_code: fires on 0 -> 1 and 1 -> 0 only, not on an output change", async () => {
    const dir = tempDir();
    put(join(dir, "code"), "0");
    const ctx = fakeContext(dir);
    await start(spec(`${COUNT}; date +%N; echo failing >&2; exit $(cat code)`, "exit_code"), ctx);
    await waitChecks(dir, 3);
    assert.equal(ctx.events.length, 0, "the output changes every check; the exit code does not");
    assert.equal(ctx.saves.length, 1);
    put(join(dir, "code"), "1");
    await waitFor(() => ctx.events.length === 1, "the 0 -> 1 event");
    await waitChecks(dir, checksIn(dir) + 2);
    put(join(dir, "code"), "0");
    await waitFor(() => ctx.events.length === 2, "the 1 -> 0 event");
    await waitChecks(dir, checksIn(dir) + 2);
    assert.deepEqual(
      ctx.events.map((e) => e.summary.replace(/^`.*` /, "")),
      ["exit code 0 -> 1", "exit code 1 -> 0"],
    );
    assert.match(ctx.events[0]!.data!, /^exit code 1 \(was exit code 0\)\n\nstdout:\n\d+\n+stderr:\nfailing\n$/);
  });

  it("a timeout is its own outcome: fires from and to it in every mode, and is noted", async () => {
    const dir = tempDir();
    const ctx = fakeContext(dir);
    const source = await start(spec(`${COUNT}; echo $$ >> pgids; if [ -f hang ]; then sleep 30 & sleep 30; fi; echo same`, "hash", 300), ctx);
    await waitChecks(dir, 1);
    put(join(dir, "hang"), "");
    await waitFor(() => ctx.events.length === 1, "the timeout event");
    assert.match(ctx.events[0]!.summary, /` exit code 0 -> timed out after 300ms$/);
    assert.match(ctx.events[0]!.data!, /^timed out after 300ms \(was exit code 0\)/);
    assert.deepEqual(ctx.notes.at(-1), "The last check timed out after 300ms.");
    await waitChecks(dir, checksIn(dir) + 1);
    assert.equal(ctx.events.length, 1, "timed out again is no change");
    execFileSync("rm", [join(dir, "hang")]);
    await waitFor(() => ctx.events.length === 2, "the recovery event");
    assert.match(ctx.events[1]!.summary, /` timed out after 300ms -> exit code 0$/);
    assert.equal(ctx.notes.at(-1), undefined, "the note is cleared");
    await source.stop();
    const pgids = readFileSync(join(dir, "pgids"), "utf8").trim().split("\n").map(Number);
    assert.ok(pgids.length >= 3);
    assert.deepEqual(pgids.filter(groupAlive), [], "no check left a process behind");
  });

  it("a restart compares against the stored baseline: unchanged fires nothing, changed while down fires once, caught up", async () => {
    const dir = tempDir();
    put(join(dir, "out.txt"), "v1\n");
    const s = spec(`${COUNT}; cat out.txt`, "full");
    const first = fakeContext(dir);
    const a = await start(s, first);
    await waitFor(() => first.saves.length === 1, "the baseline");
    await a.stop();

    const second = fakeContext(dir, first.state);
    const b = await start(s, second);
    await waitChecks(dir, checksIn(dir) + 3);
    await b.stop();
    assert.equal(second.events.length, 0, "unchanged output after a restart fires nothing");
    assert.equal(second.saves.length, 0);

    put(join(dir, "out.txt"), "v2\n");
    const third = fakeContext(dir, second.state);
    await start(s, third);
    await waitFor(() => third.events.length === 1, "the change made while down");
    assert.equal(third.events[0]!.caughtUp, true);
    assert.match(third.events[0]!.data!, /-v1\n\+v2\n/);
    await waitChecks(dir, checksIn(dir) + 2);
    assert.equal(third.events.length, 1);
  });

  it("a changed command records a new baseline instead of comparing with the old command's", async () => {
    const dir = tempDir();
    const first = fakeContext(dir);
    const a = await start(spec(`${COUNT}; echo one`, "hash"), first);
    await waitFor(() => first.saves.length === 1, "the baseline");
    await a.stop();
    const second = fakeContext(dir, first.state);
    await start(spec(`${COUNT}; echo two`, "hash"), second);
    await waitFor(() => second.saves.length === 1, "a new baseline");
    await waitChecks(dir, checksIn(dir) + 2);
    assert.equal(second.events.length, 0);
  });

  it("never runs two checks at once: a check still going at the next tick skips it", async () => {
    const dir = tempDir();
    const ctx = fakeContext(dir);
    // mkdir fails if another check holds the lock: an overlap leaves a line in `overlap`.
    await start(spec(`${COUNT}; mkdir lock || echo overlap >> overlap; sleep 0.2; rmdir lock`, "hash"), ctx);
    await waitChecks(dir, 4);
    assert.equal(existsSync(join(dir, "overlap")), false);
    assert.ok(ctx.logs.some((line) => /still running; this one is skipped/.test(line)), "ticks were skipped");
  });

  it("stop() kills a running check with its group and no check runs after it", async () => {
    const dir = tempDir();
    const clock = new FakeClock();
    const ctx = fakeContext(dir, undefined, clock);
    const source = await start(spec(`${COUNT}; echo $$ > pgid; sleep 30 & sleep 30`, "hash", 60_000), ctx);
    await waitFor(() => existsSync(join(dir, "pgid")) && readFileSync(join(dir, "pgid"), "utf8").endsWith("\n"), "the check to start");
    const pgid = Number(readFileSync(join(dir, "pgid"), "utf8"));
    await source.stop();
    assert.equal(groupAlive(pgid), false);
    assert.equal(clock.pendingTimers(), 0, "no tick left");
    const checks = checksIn(dir);
    await clock.advance(300); // six intervals: none may start
    assert.equal(checksIn(dir), checks);
    assert.deepEqual(ctx.events, []);
    assert.deepEqual(ctx.saves, [], "a check cut by stop() records nothing");
  });

  it("output with shell metacharacters is never executed", async () => {
    const dir = tempDir();
    put(join(dir, "out.txt"), "$(touch pwned1)\n");
    for (const diff of ["full", "hash", "exit_code"] as const) {
      const ctx = fakeContext(dir);
      await start(spec(`${COUNT}; cat out.txt; exit $(cat code 2>/dev/null || echo 0)`, diff), ctx);
      await waitFor(() => ctx.saves.length === 1, "the baseline");
      put(join(dir, "out.txt"), "`touch pwned2`; touch pwned3 && $(touch pwned4)\n");
      put(join(dir, "code"), "1");
      await waitFor(() => ctx.events.length === 1, `the ${diff} event`);
      assert.match(ctx.events[0]!.data!, /`touch pwned2`; touch pwned3 && \$\(touch pwned4\)/);
      await Promise.all(running.splice(0).map((s) => s.stop()));
      put(join(dir, "out.txt"), "$(touch pwned1)\n");
      put(join(dir, "code"), "0");
    }
    for (const n of [1, 2, 3, 4]) assert.equal(existsSync(join(dir, `pwned${n}`)), false, `pwned${n} was created`);
  });

  it("a command that cannot start is noted and logged, never thrown", async () => {
    const clock = new FakeClock();
    const ctx = fakeContext("/no/such/project", undefined, clock);
    const source = await start(spec("echo hi", "hash"), ctx);
    await waitFor(() => ctx.notes.length > 0, "a note");
    assert.match(ctx.notes[0]!, /the directory \/no\/such\/project does not exist/);
    await clock.advance(200); // four more checks, each failing before the next tick
    assert.equal(clock.pendingTimers(), 1, "still checking");
    assert.deepEqual(ctx.logs.filter((line) => /still running/.test(line)), [], "every check had ended before the next");
    assert.equal(ctx.logs.filter((line) => line.startsWith("warn")).length, 1, "the same error is logged once");
    await source.stop();
  });
});

function groupAlive(pgid: number): boolean {
  const ps = execFileSync("ps", ["-eo", "pgid=,stat="], { encoding: "utf8" });
  return ps.split("\n").some((line) => {
    const [group, stat] = line.trim().split(/\s+/);
    return Number(group) === pgid && !stat?.startsWith("Z");
  });
}
