import { test } from "node:test";
import assert from "node:assert/strict";
import { startRetention } from "../../src/store/retention.ts";
import { FakeClock } from "../helpers/fake-clock.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

test("retention purges at start and every hour after, with the cutoff moving along", async () => {
  const clock = new FakeClock();
  const start = clock.now();
  const cutoffs: number[] = [];
  const retention = startRetention({ purge: (cutoff) => cutoffs.push(cutoff), retentionMs: 30 * DAY, clock, onError: assert.fail });
  assert.deepEqual(cutoffs, [start - 30 * DAY]);
  await clock.advance(HOUR - 1);
  assert.equal(cutoffs.length, 1);
  await clock.advance(1 + 2 * HOUR);
  assert.deepEqual(cutoffs, [0, 1, 2, 3].map((hours) => start + hours * HOUR - 30 * DAY));
  retention.stop();
  assert.equal(clock.pendingTimers(), 0);
  await clock.advance(5 * HOUR);
  assert.equal(cutoffs.length, 4);
});

test("a purge that throws is reported and tried again at the next hour", async () => {
  const clock = new FakeClock();
  const errors: string[] = [];
  let calls = 0;
  const purge = () => {
    calls++;
    if (calls === 1) throw new Error("SQLITE_BUSY");
    return 0;
  };
  const retention = startRetention({ purge, retentionMs: DAY, clock, onError: (message, error) => errors.push(`${message}: ${(error as Error).message}`) });
  assert.deepEqual(errors, ["Removing old background tasks failed; they are kept until the next try, in an hour: SQLITE_BUSY"]);
  await clock.advance(HOUR);
  assert.equal(calls, 2);
  assert.equal(errors.length, 1);
  retention.stop();
});

test("the real timer is unref'd: it never keeps the process alive", () => {
  const handles: unknown[] = [];
  const clock = {
    now: () => 0,
    setTimeout: (fn: () => void, ms: number) => {
      const handle = setTimeout(fn, ms);
      handles.push(handle);
      return handle;
    },
    clearTimeout: (handle: unknown) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  };
  const retention = startRetention({ purge: () => 0, retentionMs: DAY, clock, onError: assert.fail });
  assert.equal(handles.length, 1);
  assert.equal((handles[0] as ReturnType<typeof setTimeout>).hasRef(), false);
  retention.stop();
});

/** Lets a resolved pass's promise chain run (no timers involved). */
const settled = () => new Promise((resolve) => setImmediate(resolve));

test("the run-history fold runs at start and every foldEveryMs, timed from the end of the previous pass; a failed pass is reported", async () => {
  const clock = new FakeClock();
  const errors: string[] = [];
  const finish: (() => void)[] = [];
  let calls = 0;
  const fold = () => {
    calls++;
    if (calls === 2) return Promise.reject(new Error("SQLITE_BUSY"));
    return new Promise<number>((resolve) => finish.push(() => resolve(0)));
  };
  const retention = startRetention({ purge: () => 0, fold, foldEveryMs: 1000, retentionMs: DAY, clock, onError: (m, e) => errors.push(`${m}: ${(e as Error).message}`) });
  assert.equal(calls, 1);
  await clock.advance(5000);
  assert.equal(calls, 1, "no second pass while the first is still folding");
  finish.shift()!();
  await settled();
  await clock.advance(1000);
  assert.equal(calls, 2);
  await settled();
  await clock.advance(1000);
  assert.deepEqual(errors, ["Folding old automation runs failed; they are kept whole until the next try: SQLITE_BUSY"]);
  assert.equal(calls, 3, "tried again at the next interval");
  retention.stop();
  finish.shift()!();
  await settled();
  await clock.advance(5000);
  assert.equal(calls, 3);
  assert.equal(clock.pendingTimers(), 0);
});
