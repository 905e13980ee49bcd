import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatSpend, formatTokens, formatUsd } from "../../src/cost/format-spend.ts";
import { SpendLedger } from "../../src/cost/spend-ledger.ts";
import { addSpend, messageSpend, NO_SPEND, type Spend } from "../../src/cost/spend.ts";
import { TaskSpend, type SpendRows } from "../../src/cost/task-spend.ts";
import type { MessageUsage } from "../../src/host/host.ts";
import { toMessageInfo } from "../../src/host/message-info.ts";
import { Store } from "../../src/store/store.ts";
import type { TaskSummary } from "../../src/core/task-summary.ts";

const usage = (input: number, output: number, costUsd = 0, more: Partial<MessageUsage> = {}): MessageUsage =>
  ({ input, output, reasoning: 0, cacheRead: 0, cacheWrite: 0, costUsd, ...more });
const spendOf = (input: number, output: number, costUsd: number, requests = 1): Spend =>
  ({ tokens: { input, output, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, costUsd, requests });

describe("the spend format", () => {
  it("shows dollars with three decimals under $1 and two from $1, then tokens in k or M", () => {
    assert.equal(formatSpend(spendOf(12_000, 3_000, 0.081)), "$0.081 · 15.0k tok");
    assert.equal(formatSpend(spendOf(900_000, 400_000, 12.3456)), "$12.35 · 1.3M tok");
    assert.equal(formatUsd(0.9996), "$1.00");
    assert.equal(formatUsd(0.0004), "$0.000");
    assert.equal(formatTokens(850), "0.9k");
    assert.equal(formatTokens(999_949), "999.9k");
    assert.equal(formatTokens(999_950), "1.0M");
  });

  it("shows tokens only for a model without a price", () => {
    assert.equal(formatSpend(spendOf(4_000, 1_000, 0)), "5.0k tok");
  });

  it("counts input, output and reasoning, not cache reads or writes", () => {
    const s: Spend = { tokens: { input: 1000, output: 500, reasoning: 500, cacheRead: 90_000, cacheWrite: 7_000 }, costUsd: 0, requests: 1 };
    assert.equal(formatSpend(s), "2.0k tok");
  });
});

describe("a message's spend", () => {
  it("is nothing while the host reports zeros (its first update)", () => {
    assert.equal(messageSpend(usage(0, 0)), undefined);
    assert.deepEqual(messageSpend(usage(10, 5, 0.01)), spendOf(10, 5, 0.01));
  });

  it("is read from the host's assistant message info; user messages have none", () => {
    const info = { id: "m1", role: "assistant", time: { created: 1 }, cost: 0.02565,
      tokens: { total: 5000, input: 3500, output: 800, reasoning: 200, cache: { read: 500, write: 0 } } };
    assert.deepEqual(toMessageInfo(info).usage, { input: 3500, output: 800, reasoning: 200, cacheRead: 500, cacheWrite: 0, costUsd: 0.02565 });
    assert.equal(toMessageInfo({ id: "u", role: "user", time: { created: 1 } }).usage, undefined);
  });

  it("adds up by kind", () => {
    assert.deepEqual(addSpend(spendOf(1, 2, 0.5), spendOf(3, 4, 0.25)), spendOf(4, 6, 0.75, 2));
    assert.deepEqual(addSpend(NO_SPEND, spendOf(1, 2, 0)), spendOf(1, 2, 0));
  });
});

describe("the ledger", () => {
  it("counts the latest value of each message once, however often it is updated", () => {
    const ledger = new SpendLedger();
    assert.equal(ledger.record("t", "m1", usage(0, 0)), undefined);
    assert.ok(ledger.record("t", "m1", usage(100, 10, 0.01)));
    assert.equal(ledger.record("t", "m1", usage(100, 10, 0.01)), undefined, "a repeat adds nothing and needs no write");
    assert.ok(ledger.record("t", "m1", usage(120, 10, 0.02)), "a changed value replaces the earlier one");
    ledger.record("t", "m2", usage(50, 5, 0.01));
    assert.deepEqual(ledger.total("t"), spendOf(170, 15, 0.03, 2));
    ledger.forget("t");
    assert.deepEqual(ledger.total("t"), NO_SPEND);
  });
});

describe("a task's spend", () => {
  const tree: Record<string, string[]> = { a: ["b"], b: ["c"], c: [] };
  const tasks = { list: ({ parentSessionID }: { parentSessionID?: string }) => (tree[parentSessionID!] ?? []).map((id) => ({ id }) as TaskSummary), get: () => undefined };

  it("sums the task with its descendants, and writes a message only when it changed", () => {
    const rows = new Map<string, Map<string, Spend>>();
    let writes = 0;
    const store: SpendRows = {
      put: (task, message, spend) => (writes++, rows.set(task, (rows.get(task) ?? new Map()).set(message, spend))),
      ofTasks: (ids) => new Map(ids.filter((id) => rows.has(id)).map((id) => [id, [...rows.get(id)!.values()].reduce(addSpend)])),
      messagesOf: (id) => new Map(rows.get(id)), costSince: () => 0,
    };
    const spend = new TaskSpend(store, tasks, () => assert.fail("no error expected"));
    assert.equal(spend.line("a"), undefined);
    for (let i = 0; i < 3; i++) spend.record("a", "m1", usage(1000, 0, 0.003));
    spend.record("b", "m2", usage(2000, 0, 0.006));
    spend.record("c", "m3", usage(3000, 0, 0.009));
    assert.equal(writes, 3);
    assert.equal(spend.line("a"), "$0.018 · 6.0k tok");
    assert.equal(spend.line("b"), "$0.015 · 5.0k tok");
  });

  it("logs a store failure and does not throw (events keep flowing)", () => {
    const errors: string[] = [];
    const broken: SpendRows = { put: () => { throw new Error("disk full"); }, ofTasks: () => new Map(), messagesOf: () => new Map(), costSince: () => 0 };
    new TaskSpend(broken, tasks, (m) => errors.push(m)).record("a", "m1", usage(1, 1));
    assert.deepEqual(errors, ["Could not record the spend of task a"]);
  });
});

describe("the spend rows in the database", () => {
  it("keep one row per message (a repeat overwrites) and go with their task", () => {
    const dir = mkdtempSync(join(tmpdir(), "cost-"));
    const store = Store.open({ path: join(dir, "e.db"), projectId: "p" });
    try {
      store.spend.put("t1", "m1", spendOf(100, 10, 0.01));
      store.spend.put("t1", "m1", spendOf(100, 10, 0.01));
      store.spend.put("t1", "m2", spendOf(200, 20, 0.02));
      store.spend.put("t2", "m3", spendOf(1, 1, 0));
      const got = store.spend.ofTasks(["t1", "t2", "none"]);
      assert.deepEqual(got.get("t1"), spendOf(300, 30, 0.03, 2));
      assert.deepEqual(got.get("t2"), spendOf(1, 1, 0));
      assert.equal(got.has("none"), false);
      store.tasks.remove("t1");
      assert.equal(store.spend.ofTasks(["t1"]).has("t1"), false);
    } finally {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
