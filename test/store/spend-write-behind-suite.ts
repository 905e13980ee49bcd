import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store } from "../../src/store/store.ts";
import { SpendRepository } from "../../src/store/spend-repository.ts";
import { openSqlite, type SqliteDatabase } from "../../src/store/sqlite-driver.ts";
import type { Spend } from "../../src/cost/spend.ts";
import { waitFor } from "../helpers/wait-for.ts";
import type { TestApi } from "./suite-support.ts";

const spendOf = (input: number, costUsd: number): Spend =>
  ({ tokens: { input, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, costUsd, requests: 1 });

/** A fresh database file; removed when the process exits. */
function dbPath(): string {
  const dir = mkdtempSync(join(tmpdir(), "spend-wb-"));
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  return join(dir, "errands.db");
}

/** The plugin's store keeps spend rows for up to 100 ms and writes them together (off the event path), under both drivers. */
export function defineSpendWriteBehindSuite({ describe, it }: TestApi): void {
  describe("spend rows written behind", () => {
    it("are read back at once by this process, and reach other connections within the write-behind time", async () => {
      const path = dbPath();
      const mine = Store.open({ path, projectId: "p" });
      const other = Store.open({ path, projectId: "p" });
      try {
        mine.spend.put("t1", "m1", spendOf(100, 0.01));
        assert.equal(other.spend.ofTasks(["t1"]).size, 0, "not written yet");
        assert.deepEqual(mine.spend.ofTasks(["t1"]).get("t1"), spendOf(100, 0.01), "this process reads what it keeps");
        mine.spend.put("t1", "m2", spendOf(50, 0.005));
        const seen = await waitFor(() => other.spend.ofTasks(["t1"]).get("t1")?.requests === 2 && other.spend.ofTasks(["t1"]).get("t1"), "the timed write", 2_000);
        assert.deepEqual(seen, { ...spendOf(150, 0.015), requests: 2 });
        mine.spend.put("t1", "m1", spendOf(130, 0.02));
        assert.deepEqual(mine.spend.ofTasks(["t1", "t2"]), new Map([["t1", { ...spendOf(180, 0.025), requests: 2 }]]), "a kept row replaces its written one, never adds");
      } finally {
        mine.close();
        other.close();
      }
    });

    it("keep the latest numbers of a message once, and two processes recording one message overwrite, never add", () => {
      const path = dbPath();
      const a = Store.open({ path, projectId: "p" });
      const b = Store.open({ path, projectId: "p" });
      try {
        a.spend.put("t1", "m1", spendOf(0, 0));
        a.spend.put("t1", "m1", spendOf(100, 0.01));
        b.spend.put("t1", "m1", spendOf(100, 0.01));
        a.spend.flush();
        b.spend.flush();
        b.spend.put("t1", "m1", spendOf(120, 0.02));
        b.spend.flush();
        assert.deepEqual(a.spend.ofTasks(["t1"]).get("t1"), spendOf(120, 0.02));
      } finally {
        a.close();
        b.close();
      }
    });

    it("written many to a statement (16 rows each, the rest one by one) land each in its own row, and a repeat overwrites", () => {
      const path = dbPath();
      const mine = Store.open({ path, projectId: "p" });
      const other = Store.open({ path, projectId: "p" });
      try {
        for (let i = 0; i < 40; i++) mine.spend.put(`t${i % 3}`, `m${i}`, spendOf(i + 1, 0.001));
        mine.spend.flush();
        mine.spend.put("t0", "m0", spendOf(1000, 0.5));
        mine.spend.flush();
        const got = other.spend.ofTasks(["t0", "t1", "t2"]);
        assert.deepEqual([...got.values()].map((s) => s.requests), [14, 13, 13]);
        const sumOf = (r: number) => Array.from({ length: 40 }, (_, i) => i).filter((i) => i % 3 === r).reduce((n, i) => n + i + 1, 0);
        assert.equal(got.get("t0")!.tokens.input, sumOf(0) - 1 + 1000, "m0's row replaced, not added");
        assert.equal(got.get("t1")!.tokens.input, sumOf(1));
        assert.equal(got.get("t2")!.tokens.input, sumOf(2));
        assert.ok(Math.abs(got.get("t0")!.costUsd - (0.013 + 0.5)) < 1e-9);
      } finally {
        mine.close();
        other.close();
      }
    });

    it("are written when the store closes", () => {
      const path = dbPath();
      const store = Store.open({ path, projectId: "p" });
      store.spend.put("t1", "m1", spendOf(7, 0.001));
      store.close();
      const again = Store.open({ path, projectId: "p" });
      try {
        assert.deepEqual(again.spend.ofTasks(["t1"]).get("t1"), spendOf(7, 0.001));
      } finally {
        again.close();
      }
    });

    it("stay kept when the database refuses the write; the next put throws so its caller reports it, and nothing is lost", () => {
      const path = dbPath();
      Store.open({ path, projectId: "p" }).close(); // migrated
      const real = openSqlite(path);
      let refuse = true;
      const db: SqliteDatabase = { ...real, path, prepare: (sql) => real.prepare(sql), exec: (sql) => real.exec(sql), close: () => real.close(),
        transaction: (fn) => { if (refuse) throw new Error("database is locked"); return real.transaction(fn); } };
      const rows = new SpendRepository(db, "p", 60_000);
      try {
        rows.put("t1", "m1", spendOf(1, 0.001));
        assert.throws(() => rows.flush(), /locked/);
        assert.throws(() => rows.put("t1", "m2", spendOf(2, 0.002)), /locked/, "the caller hears it");
        assert.deepEqual(rows.ofTasks(["t1"]).get("t1"), { ...spendOf(3, 0.003), requests: 2 }, "a read still answers, the kept rows counted");
        refuse = false;
        rows.put("t1", "m3", spendOf(3, 0.003));
        assert.deepEqual(rows.ofTasks(["t1"]).get("t1"), { ...spendOf(6, 0.006), requests: 3 });
      } finally {
        rows.flush();
        real.close();
      }
    });

    it("are written at once without a write-behind time (tools and tests that write rows directly)", () => {
      const path = dbPath();
      Store.open({ path, projectId: "p" }).close();
      const db = openSqlite(path);
      const other = Store.open({ path, projectId: "p" });
      try {
        new SpendRepository(db, "p").put("t1", "m1", spendOf(5, 0.5));
        assert.deepEqual(other.spend.ofTasks(["t1"]).get("t1"), spendOf(5, 0.5));
      } finally {
        other.close();
        db.close();
      }
    });
  });
}
