import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import { Store } from "../../src/store/store.ts";
import { FOLD_BATCH_ROWS, TASK_RUN_FOLD_AGE_MS } from "../../src/store/run-history-fold.ts";

const P = "proj";
const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 20, 12);

type Seed = { automation?: string; status?: string; at: number; notified?: number; task?: string; skipCount?: number; spentBefore?: string; eventKey?: string };

function setUp() {
  const path = join(mkdtempSync(join(tmpdir(), "ocbt-fold-")), "errands.db");
  const store = Store.open({ path, projectId: P });
  const raw = new Database(path);
  const insert = raw.prepare(`INSERT INTO automation_runs (project_id, automation_id, fired_by, status, created_at, ended_at, notified, task_id, skip_count, spent_before, event_key)
    VALUES (?, ?, 'schedule', ?, ?, ?, ?, ?, ?, ?, ?)`);
  const seed = (s: Seed) => Number(insert.run(P, s.automation ?? "a1", s.status ?? "completed", s.at, s.at + 1000, s.notified ?? null, s.task ?? null, s.skipCount ?? null, s.spentBefore ?? null, s.eventKey ?? null).lastInsertRowid);
  const runs = (automation = "a1") => raw.prepare("SELECT id, status FROM automation_runs WHERE project_id = ? AND automation_id = ? ORDER BY id").all(P, automation) as { id: number; status: string }[];
  return { path, store, raw, seed, runs };
}

test("keeps the newest N runs whole and folds older quiet runs into one row per automation and UTC day", async () => {
  const { store, seed, runs } = setUp();
  const day1 = Date.UTC(2026, 10, 12, 8);
  const day2 = Date.UTC(2026, 10, 13, 8);
  for (let i = 0; i < 6; i++) seed({ at: day1 + i * 60_000 });
  seed({ at: day1 + 10 * 60_000, status: "skipped", skipCount: 3 });
  for (let i = 0; i < 4; i++) seed({ at: day2 + i * 60_000 });
  const newest = [0, 1, 2].map((i) => seed({ at: NOW - 3600_000 + i }));
  for (let i = 0; i < 3; i++) seed({ automation: "a2", at: day1 + i });

  assert.equal(await store.runHistory.fold({ keepRuns: 3, now: NOW }), 11);
  assert.deepEqual(runs().map((r) => r.id), newest);
  assert.equal(runs("a2").length, 3, "another automation under its limit is left alone");
  const days = store.runHistory.days("a1");
  assert.deepEqual(days.map((d) => [d.day, d.completed, d.skipped, d.missed, d.costUsd]), [["2026-11-13", 4, 0, 0, 0], ["2026-11-12", 6, 3, 0, 0]]);
  assert.equal(days[1]!.firstAt, day1);
  assert.equal(days[1]!.lastAt, day1 + 10 * 60_000 + 1000);
});

test("failed, cancelled, told and channel-delivered runs, and runs with an event key, stay whole", async () => {
  const { store, raw, seed, runs } = setUp();
  const old = Date.UTC(2026, 10, 1);
  const kept = [
    seed({ at: old, status: "error" }),
    seed({ at: old, status: "cancelled" }),
    seed({ at: old, notified: 1 }),
    seed({ at: old, eventKey: "after:7" }),
    seed({ at: old }),
  ];
  raw.prepare(`INSERT INTO channel_deliveries (project_id, id, status, next_attempt_at, created_at, run_id, automation_id, channel, host, notice)
    VALUES (?, 'd1', 'delivered', 0, 0, ?, 'a1', 'ops', 'example.com', '{}')`).run(P, kept[4]);
  seed({ at: old, notified: 0 });
  for (let i = 0; i < 2; i++) seed({ at: NOW - i });
  assert.equal(await store.runHistory.fold({ keepRuns: 2, now: NOW }), 1);
  assert.deepEqual(runs().slice(0, 5).map((r) => r.id), kept);
  assert.equal(store.runHistory.days("a1")[0]!.completed, 1);
});

test("a run that launched a task folds only once no daily or weekly budget counts it, with its own spend", async () => {
  const { store, raw, seed, runs } = setUp();
  const spend = raw.prepare("INSERT INTO task_spend (project_id, task_id, message_id, cost_usd) VALUES (?, ?, ?, ?)");
  const old = NOW - TASK_RUN_FOLD_AGE_MS - DAY;
  seed({ at: old, task: "t1" });
  // A continued session: the second run resumed t1 when it had spent $0.50.
  seed({ at: old + 1, task: "t1", spentBefore: JSON.stringify({ costUsd: 0.5, requests: 2 }) });
  seed({ at: old + 2, task: "t2" });
  const recent = seed({ at: NOW - DAY, task: "t3" });
  spend.run(P, "t1", "m1", 0.25); spend.run(P, "t1", "m2", 0.25); spend.run(P, "t1", "m3", 0.75);
  spend.run(P, "t2", "m4", 0.1);
  spend.run(P, "t3", "m5", 9);
  const newest = seed({ at: NOW });
  assert.equal(await store.runHistory.fold({ keepRuns: 1, now: NOW }), 3);
  assert.deepEqual(runs().map((r) => r.id), [recent, newest]);
  const [day] = store.runHistory.days("a1");
  assert.equal(day!.completed, 3);
  assert.equal(Math.round(day!.costUsd * 100), 135, "0.50 + 0.75 + 0.10: each run counted once");
  assert.equal(day!.requests, 4);
});

test("folding again changes nothing, and retention by age removes folded days", async () => {
  const { store, seed } = setUp();
  for (let i = 0; i < 5; i++) seed({ at: Date.UTC(2026, 9, 1) + i });
  for (let i = 0; i < 5; i++) seed({ at: NOW - i });
  assert.equal(await store.runHistory.fold({ keepRuns: 5, now: NOW }), 5);
  const before = store.runHistory.days("a1");
  assert.equal(await store.runHistory.fold({ keepRuns: 5, now: NOW }), 0);
  assert.deepEqual(store.runHistory.days("a1"), before);
  await store.runHistory.fold({ keepRuns: 5, now: NOW, retentionMs: 30 * DAY });
  assert.deepEqual(store.runHistory.days("a1"), []);
});

test("two processes folding the same history at once count every run exactly once", async () => {
  const { path, store, raw, seed } = setUp();
  const total = 12 * FOLD_BATCH_ROWS;
  raw.transaction(() => {
    for (let i = 0; i < total; i++) seed({ at: Date.UTC(2026, 10, 1 + (i % 3)) + i, status: i % 10 === 0 ? "skipped" : "completed" });
  })();
  for (let i = 0; i < 10; i++) seed({ at: NOW - i });
  store.close();
  const run = promisify(execFile);
  const script = join(import.meta.dirname, "../helpers/fold-process.ts");
  const [a, b] = await Promise.all([0, 1].map(() => run(process.execPath, ["--import", "tsx", script, path, P, "10", String(NOW), "3"])));
  assert.equal(Number(a!.stdout) + Number(b!.stdout), total);
  const sums = raw.prepare("SELECT sum(completed) + sum(skipped) AS n, count(*) AS days FROM automation_run_days").get() as { n: number; days: number };
  assert.equal(sums.n, total);
  assert.equal(sums.days, 3);
  assert.equal((raw.prepare("SELECT count(*) AS n FROM automation_runs").get() as { n: number }).n, 10);
});

test("option historyRuns: default 1000; a value out of range is refused naming its unit and range", async () => {
  const { parseOptions } = await import("../../src/options/options.ts");
  assert.equal(parseOptions({}).historyRuns, 1000);
  assert.equal(parseOptions({ historyRuns: 200 }).historyRuns, 200);
  assert.throws(() => parseOptions({ historyRuns: 5 }), /"historyRuns" must be a number of runs from 10 to 1000000, got 5/);
});
