import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { LEASES, newClaimer } from "../../src/core/claims.ts";
import type { AutomationTables } from "../../src/store/automation-tables.ts";
import { Store } from "../../src/store/store.ts";
import { runningTask } from "./task-fixtures.ts";
import type { TestApi } from "./suite-support.ts";

type Opened = Store & AutomationTables;

/**
 * One claimed table as the conformance suite drives it, through its repository's own API: `row`
 * makes a row that can be claimed and returns its key; `claim` is that table's claim; `renew`,
 * where the table has one, renews everything `by` holds and returns the keys it still holds.
 */
type ClaimedTable = {
  name: string;
  leaseMs: number;
  row(s: Opened, now: number): string | number;
  claim(s: Opened, key: string | number, by: string, now: number): boolean;
  renew?(s: Opened, by: string, now: number): Set<string | number>;
};

let seq = 0;
const TABLES: ClaimedTable[] = [
  {
    name: "tasks (the process that drives a running child)",
    leaseMs: LEASES.taskMs,
    row: (s) => { const id = `ses_claim${++seq}`; s.tasks.save(runningTask(id)); return id; },
    claim: (s, key, by, now) => s.tasks.claimTask(String(key), by, now, LEASES.taskMs),
    renew: (s, by, now) => s.tasks.renewTaskClaims(by, now),
  },
  {
    name: "automation runs (from starting until they end)",
    leaseMs: LEASES.runMs,
    row: (s, now) => s.automations.insertRun({ automationId: "au_c", firedBy: "manual", status: "starting", runNo: ++seq, createdAt: now, startedAt: now })!.id,
    claim: (s, key, by, now) => s.automations.runClaims.claim(Number(key), by, now),
    renew: (s, by, now) => s.automations.runClaims.renew(by, now),
  },
  {
    name: "parent notifications (being sent)",
    leaseMs: LEASES.outboxMs,
    row: (s, now) => { const id = `n${++seq}`; s.tasks.enqueueNotification({ id, parentSessionID: "ses_p", taskId: "ses_c", text: "t", wake: true, createdAt: now }); return id; },
    claim: (s, key, by, now) => s.tasks.claimNotification(String(key), by, now),
  },
  {
    name: "dashboard and CLI commands",
    leaseMs: LEASES.commandMs,
    row: (s, now) => s.commands.submit("proj", "pause", `au_${++seq}`, now).id,
    claim: (s, key, by, now) => s.commands.claim(Number(key), by, now),
  },
  {
    name: "webhook deliveries",
    leaseMs: LEASES.deliveryMs,
    row: (s, now) => s.triggers.insertDelivery({ projectId: "proj", triggerId: "tr_c" }, { deliveryId: `d${++seq}`, receivedAt: now, summary: "POST" })!,
    claim: (s, key, by, now) => s.transaction(() => {
      const delivery = s.triggers.unfiredDeliveries(500).find((d) => d.id === key);
      return !!delivery && s.triggers.claimDelivery(delivery, by, now);
    }),
  },
];

/** A pid that existed a moment ago and is gone now. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", ""]);
  return child.pid!;
}
/** A live process on another machine: only its lease can run out. */
const remote = () => `elsewhere.example:4242:${Math.random().toString(16).slice(2, 10)}`;

/**
 * The claim conformance suite, run against every table on the one claim primitive
 * (store/claim-table.ts): the holder dies, the pid is reused, two processes race, the clock jumps.
 */
export function defineClaimConformanceSuite({ describe, it }: TestApi): void {
  const withTwo = (fn: (a: Opened, b: Opened) => void | Promise<void>) => async () => {
    const dir = mkdtempSync(join(tmpdir(), "obt-claimconf-"));
    const opened: Store[] = [];
    const open = async () => {
      const store = Store.open({ path: join(dir, "errands.db"), projectId: "proj" });
      opened.push(store);
      return Object.assign(store, await store.automationTables());
    };
    try {
      await fn(await open(), await open());
    } finally {
      for (const s of opened) s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  };

  for (const table of TABLES) {
    describe(`claim conformance: ${table.name}`, () => {
      const t0 = 1_800_000_000_000;

      it("two processes race for a row: exactly one wins; the loser wins only once the winner's lease ran out", withTwo((a, b) => {
        const key = table.row(a, t0);
        const [holderA, holderB] = [remote(), remote()];
        const won = [table.claim(a, key, holderA, t0), table.claim(b, key, holderB, t0)];
        assert.deepEqual(won, [true, false]);
        assert.equal(table.claim(b, key, holderB, t0 + table.leaseMs - 1), false, "within the lease");
        assert.equal(table.claim(b, key, holderB, t0 + table.leaseMs), true, "the lease ran out");
      }));

      it("the holder dies: its row is taken over at once, whatever its lease", withTwo((a, b) => {
        const key = table.row(a, t0);
        assert.equal(table.claim(a, key, `${hostname()}:${deadPid()}:0badf00d`, t0), true);
        assert.equal(table.claim(b, key, remote(), t0 + 1), true);
      }));

      it("the pid is reused: a holder with this process's pid and a nonce no live instance has is gone; a live instance's is not", withTwo((a, b) => {
        const stale = table.row(a, t0);
        assert.equal(table.claim(a, stale, `${hostname()}:${process.pid}:deadbeef`, t0), true);
        assert.equal(table.claim(b, stale, remote(), t0 + 1), true, "a restarted process that got the pid");
        const live = table.row(a, t0);
        assert.equal(table.claim(a, live, newClaimer(), t0), true);
        assert.equal(table.claim(b, live, remote(), t0 + 1), false, "another live instance of this process");
      }));

      it("the clock jumps: forward, a lease runs out; back by more than a lease, a claim from the future keeps nobody out", withTwo((a, b) => {
        const ahead = table.row(a, t0);
        assert.equal(table.claim(a, ahead, remote(), t0), true);
        assert.equal(table.claim(b, ahead, remote(), t0 + 10 * table.leaseMs), true, "forward");
        const back = table.row(a, t0);
        assert.equal(table.claim(a, back, remote(), t0), true);
        assert.equal(table.claim(b, back, remote(), t0 - 2 * table.leaseMs), true, "set back");
      }));

      if (table.renew) {
        const renew = table.renew;
        it("a holder that renews keeps its rows; one overtaken after its lease learns so at its next renewal", withTwo((a, b) => {
          const key = table.row(a, t0);
          const holder = remote();
          assert.equal(table.claim(a, key, holder, t0), true);
          assert.deepEqual([...renew(a, holder, t0 + table.leaseMs - 1)], [key]);
          assert.equal(table.claim(b, key, remote(), t0 + table.leaseMs), false, "renewed: it holds on");
          assert.equal(table.claim(b, key, remote(), t0 + 2 * table.leaseMs), true, "not renewed within a lease");
          assert.deepEqual([...renew(a, holder, t0 + 2 * table.leaseMs)], [], "the old holder no longer holds it");
        }));
      }
    });
  }
}
