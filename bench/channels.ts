/**
 * Channel delivery latency: from a run's notice queued (inside its transaction, as the run end
 * does) to its arrival at the receiver (a node:http server on 127.0.0.1, answering 200), through
 * the SQLite outbox and plain fetch. One at a time, then a burst of all at once. Goal: p99 under
 * 200 ms one at a time. Run alone with `npx tsx bench/channels.ts [notifications]`, or call
 * runChannelsBench() from bench/run.ts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { ChannelDelivery } from "../src/channels/channel-delivery.ts";
import { newClaimer } from "../src/core/claims.ts";
import { ChannelOutboxRepository } from "../src/store/channel-outbox-repository.ts";
type ChannelFormat = "json" | "slack" | "discord" | "ntfy";
import type { ChannelNotice } from "../src/channels/channel-message.ts";
import { migrate } from "../src/store/migrations.ts";
import { openSqlite } from "../src/store/sqlite-driver.ts";
import { startReceiver } from "../test/helpers/channel-receiver.ts";

export type ChannelsBenchRow = { label: string; samples: number[]; p50: number; p99: number; max: number };

const FORMATS: ChannelFormat[] = ["json", "slack", "discord", "ntfy"];
const GOAL_P99_MS = 200;

export async function runChannelsBench({ notifications = 200, print = true } = {}): Promise<ChannelsBenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), "ocbt-channels-bench-"));
  const arrivals = new Map<string, number>();
  const receiver = await startReceiver((r) => {
    arrivals.set(String(r.headers["idempotency-key"]), performance.now());
    return { status: 200 };
  });
  const db = openSqlite(join(dir, "bench.db"));
  migrate(db);
  const channels = Object.fromEntries(FORMATS.map((f) => [f, { url: receiver.url(`/${f}`), format: f, ...(f === "json" ? { secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" } : {}) }]));
  const delivery = new ChannelDelivery({ outbox: new ChannelOutboxRepository(db, "bench", newClaimer()), channels, log: (m) => console.error(m) });
  delivery.start();
  let runId = 0;
  const enqueue = (format: ChannelFormat): number => {
    const id = ++runId;
    const started = performance.now();
    db.transaction(() => delivery.enqueue(notice(id), [format]));
    return started;
  };
  const latencyOf = (id: number, started: number) => {
    const key = String(db.prepare("SELECT id FROM channel_deliveries WHERE run_id = ?").get(id)!.id);
    return arrivals.get(key)! - started;
  };
  try {
    const oneAtATime: number[] = [];
    for (let i = 0; i < notifications; i++) {
      const started = enqueue(FORMATS[i % FORMATS.length]);
      await receiver.waitFor(i + 1, 10_000);
      oneAtATime.push(latencyOf(runId, started));
    }
    const burst = Array.from({ length: notifications }, (_, i) => ({ id: runId + 1, started: enqueue(FORMATS[i % FORMATS.length]) }));
    await receiver.waitFor(2 * notifications, 30_000);
    const rows = [row("one at a time", oneAtATime), row(`burst of ${notifications}`, burst.map((b) => latencyOf(b.id, b.started)))];
    if (print) report(rows, notifications);
    return rows;
  } finally {
    delivery.stop();
    db.close();
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function notice(id: number): ChannelNotice {
  return {
    automation: { id: "auto_bench", title: "Bench" }, run: { no: id, id }, status: id % 10 === 0 ? "error" : "completed",
    trigger: "interval every 1s", summary: `run ${id} done`, result: `run ${id} done\n${"line of output\n".repeat(40)}`, taskId: "ses_bench",
  };
}

function row(label: string, samples: number[]): ChannelsBenchRow {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
  return { label, samples, p50: at(0.5), p99: at(0.99), max: sorted.at(-1)! };
}

function report(rows: ChannelsBenchRow[], n: number): void {
  const runtime = typeof Bun !== "undefined" ? `Bun ${Bun.version}` : `Node ${process.versions.node}`;
  console.log(`\nChannel delivery latency (${runtime}): queued in the run-end transaction -> at the receiver (${n} notifications, formats in turn, SQLite outbox, fetch to 127.0.0.1)`);
  console.log("mode                    p50 ms   p99 ms   max ms");
  for (const r of rows) console.log(`${r.label.padEnd(22)}${fmt(r.p50)}${fmt(r.p99)}${fmt(r.max)}`);
  const one = rows[0];
  console.log(`goal: p99 one at a time under ${GOAL_P99_MS} ms: ${one.p99 < GOAL_P99_MS ? "met" : "NOT met"} (${one.p99.toFixed(1)} ms)`);
}

function fmt(ms: number): string {
  return ms.toFixed(1).padStart(9);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  await runChannelsBench({ notifications: Number(process.argv[2] ?? 200) });
}
