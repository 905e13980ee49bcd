import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store } from "../../src/store/store.ts";
import { dailyBudgetState } from "../../src/cost/daily-budget.ts";
import type { Spend } from "../../src/cost/spend.ts";
import type { TestApi } from "./suite-support.ts";
import { runningTask } from "./task-fixtures.ts";

const DAY_MS = 24 * 3600 * 1000;
const spent = (usd: number, input = 1000): Spend => ({ tokens: { input, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, costUsd: usd, requests: 1 });

/** The spend rows budgets read: a task's own requests, and the machine's daily total across projects and connections. */
export function defineDailySpendSuite({ describe, it }: TestApi): void {
  describe("spend rows for budgets", () => {
    it("two Stores (two processes, two projects) on one file count one daily total; older launches are not today's", () => {
      const dir = mkdtempSync(join(tmpdir(), "obt-daily-"));
      const path = join(dir, "errands.db");
      const a = Store.open({ path, projectId: "alpha" });
      const b = Store.open({ path, projectId: "beta" });
      try {
        const now = Date.now();
        a.tasks.save(runningTask("ses_a", { createdAt: now }));
        b.tasks.save(runningTask("ses_b", { createdAt: now }));
        b.tasks.save(runningTask("ses_old", { createdAt: now - 3 * DAY_MS }));
        a.spend.put("ses_a", "m1", spent(0.6));
        b.spend.put("ses_old", "m2", spent(5));
        b.spend.put("ses_b", "m3", spent(0.4));
        // Each process writes its rows within 100 ms (write-behind), and at once before its own reads.
        for (const s of [a, b]) (s.spend as Partial<{ flush(): void }>).flush?.();
        for (const store of [a, b]) {
          const state = dailyBudgetState(store.spend, { dailyBudgetUsd: 1 }, now);
          assert.equal(Math.round(state.spentUsd * 1000), 1000);
          assert.equal(state.reached, true);
        }
        assert.deepEqual([...a.spend.messagesOf("ses_a").entries()], [["m1", spent(0.6)]]);
        assert.equal(a.spend.messagesOf("ses_b").size, 0, "a task's requests are read in its own project");
      } finally {
        a.close();
        b.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
