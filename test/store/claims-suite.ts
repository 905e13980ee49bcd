import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { CLAIM_LEASE_MS, claimHeldByOther, claimLive, holderGone, newClaimer } from "../../src/core/claims.ts";
import { COMMAND_LEASE_MS } from "../../src/store/command-repository.ts";
import type { AutomationTables } from "../../src/store/automation-tables.ts";
import { Store } from "../../src/store/store.ts";
import { DELIVERY_LEASE_MS } from "../../src/store/trigger-repository.ts";
import type { TestApi } from "./suite-support.ts";

/** A pid that existed a moment ago and is gone now: a holder that crashed. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", ""]);
  assert.ok(child.pid && child.pid > 0);
  return child.pid;
}

const deadHolder = () => `${hostname()}:${deadPid()}:deadbeef`;
/** A live process on another machine: it cannot be asked, only its lease can run out. */
const remoteHolder = `elsewhere.example:${process.pid}:0badf00d`;

/**
 * The one claim rule (core/claims.ts) and every table that uses it through the store: parent
 * notifications, channel deliveries, webhook deliveries, dashboard/CLI commands, trigger leases.
 */
export function defineClaimsSuite({ describe, it }: TestApi): void {
  /** Stores on one file, each with the automation layer's tables at hand. */
  const withStore = (fn: (open: (projectId?: string) => Promise<Store & AutomationTables>) => Promise<void>) => async () => {
    const dir = mkdtempSync(join(tmpdir(), "obt-claims-"));
    const opened: Store[] = [];
    try {
      await fn(async (projectId = "proj") => {
        const store = Store.open({ path: join(dir, "errands.db"), projectId });
        opened.push(store);
        return Object.assign(store, await store.automationTables());
      });
    } finally {
      for (const s of opened) s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  };

  describe("claims: identity, liveness, lease", () => {
    it("one identity: host:pid:nonce, a new nonce per instance", () => {
      const a = newClaimer();
      const b = newClaimer();
      assert.match(a, new RegExp(`^${hostname().replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:${process.pid}:[0-9a-f]{8}$`));
      assert.notEqual(a, b, "two plugin instances in one process are told apart");
    });

    it("a holder is known gone only on this machine when its process no longer exists", () => {
      assert.equal(holderGone(newClaimer()), false, "this process");
      assert.equal(holderGone(deadHolder()), true, "a process of this machine that exited");
      assert.equal(holderGone(remoteHolder), false, "another machine: never known gone");
      assert.equal(holderGone(`pid${deadPid()}-abcd1234`), true, "the form earlier versions wrote");
      assert.equal(holderGone("garbage"), false);
    });

    it("a claim is live within its lease while its holder is not gone; our own is never held against us", () => {
      const self = newClaimer();
      assert.equal(claimLive({ by: remoteHolder, at: 1000 }, 1000 + CLAIM_LEASE_MS - 1), true);
      assert.equal(claimLive({ by: remoteHolder, at: 1000 }, 1000 + CLAIM_LEASE_MS), false, "the lease ran out: nothing stays claimed forever");
      assert.equal(claimLive({ by: deadHolder(), at: 1000 }, 1000), false, "a dead holder is replaced at once");
      assert.equal(claimLive({ by: remoteHolder, at: 0 }, 50, 100), true, "a lease of its own length");
      assert.equal(claimHeldByOther({ by: self, at: 1000 }, self, 1000), false);
      assert.equal(claimHeldByOther({ by: remoteHolder, at: 1000 }, self, 1000), true);
    });
  });

  describe("claims in every table", () => {
    it("parent notifications: a dead claimer's notification is free again, a live one's is not until its lease ends", withStore(async (open) => {
      const store = await open();
      const note = { id: "n1", parentSessionID: "ses_p", taskId: "ses_c", text: "t", wake: true, createdAt: 1 };
      store.tasks.enqueueNotification(note);
      assert.equal(store.tasks.claimNotification("n1", remoteHolder, 1000), true);
      const [claimed] = store.tasks.pendingNotifications();
      assert.deepEqual(claimed!.claim, { by: remoteHolder, at: 1000 });
      assert.equal(store.tasks.claimNotification("n1", store.holder, 1000 + CLAIM_LEASE_MS - 1), false, "a live claimer keeps it for its lease");
      assert.equal(store.tasks.claimNotification("n1", store.holder, 1000 + CLAIM_LEASE_MS), true, "then it is free");
      store.tasks.releaseClaim("n1");
      assert.equal(store.tasks.claimNotification("n1", deadHolder(), 1000), true);
      assert.equal(store.tasks.claimNotification("n1", store.holder, 1000), true, "a dead claimer's is free at once");
      assert.equal(store.tasks.pendingNotifications()[0]!.claims, 4, "every claim counted");
    }));

    it("dashboard and CLI commands: one instance wins; a claim of a dead or silent instance is taken over", withStore(async (open) => {
      const a = await open();
      const b = await open();
      const c = a.commands.submit("proj", "pause", "au_1", 1);
      assert.equal(a.commands.claim(c.id, a.holder, 10), true);
      assert.equal(b.commands.claim(c.id, b.holder, 11), false, "a live instance holds it");
      assert.equal(b.commands.claim(c.id, b.holder, 10 + COMMAND_LEASE_MS), true, "its lease ran out");
      assert.equal(a.commands.get(c.id)!.claimedBy, b.holder);
      const d = a.commands.submit("proj", "resume", "au_1", 2);
      assert.equal(a.commands.claim(d.id, deadHolder(), 10), true);
      assert.deepEqual(b.commands.open("proj").map((x) => [x.id, x.status]), [[c.id, "claimed"], [d.id, "claimed"]]);
      assert.equal(b.commands.claim(d.id, b.holder, 11), true, "its holder's process is gone");
      b.commands.finish(d.id, "done", "ok", 12);
      assert.equal(a.commands.claim(d.id, a.holder, 10 + 10 * COMMAND_LEASE_MS), false, "a finished command is never claimed again");
    }));

    it("trigger leases: renewed by their holder, taken over when it dies or its lease runs out", withStore(async (open) => {
      const store = await open();
      const ttl = 20_000;
      assert.equal(store.triggers.acquireLease("tr_1", remoteHolder, 0, ttl), true);
      assert.equal(store.triggers.acquireLease("tr_1", store.holder, ttl - 1, ttl), false, "a live holder keeps it");
      assert.deepEqual([...store.triggers.renewLeases(remoteHolder, ttl - 1, ttl)], ["tr_1"]);
      assert.equal(store.triggers.acquireLease("tr_1", store.holder, 2 * ttl - 2, ttl), false, "renewed: it holds on");
      assert.equal(store.triggers.acquireLease("tr_1", store.holder, 2 * ttl - 1, ttl), true, "not renewed within its lease");
      assert.equal(store.triggers.acquireLease("tr_2", deadHolder(), 0, ttl), true);
      assert.equal(store.triggers.acquireLease("tr_2", store.holder, 1, ttl), true, "a dead holder's lease is taken at once");
      store.triggers.releaseLease("tr_2", store.holder);
      assert.equal(store.triggers.acquireLease("tr_2", remoteHolder, 2, ttl), true, "released: free");
    }));

    it("webhook deliveries: held while their run launches here, taken over from a dead holder or after the lease", withStore(async (open) => {
      const store = await open();
      const hook = { projectId: "proj", triggerId: "tr_h" };
      const id = store.triggers.insertDelivery(hook, { deliveryId: "d1", receivedAt: 0, summary: "POST /hooks/x" })!;
      const delivery = () => store.triggers.unfiredDeliveries().find((d) => d.id === id)!;
      const claim = (holder: string, now: number) => store.transaction(() => store.triggers.claimDelivery(delivery(), holder, now));
      assert.equal(claim(remoteHolder, 100), true);
      assert.equal(claim(remoteHolder, 101), false, "its own run is launching: never fired twice");
      assert.equal(claim(store.holder, 100 + DELIVERY_LEASE_MS - 1), false, "another live holder has it");
      assert.equal(claim(store.holder, 100 + DELIVERY_LEASE_MS), true, "the lease ran out");
      assert.equal(delivery().claimedBy, store.holder);
      const second = store.triggers.insertDelivery(hook, { deliveryId: "d2", receivedAt: 0, summary: "POST /hooks/x" })!;
      const d2 = () => store.triggers.unfiredDeliveries().find((d) => d.id === second)!;
      assert.equal(store.transaction(() => store.triggers.claimDelivery(d2(), deadHolder(), 5)), true);
      assert.equal(store.transaction(() => store.triggers.claimDelivery(d2(), store.holder, 6)), true, "its holder died");
      store.triggers.endDelivery(second, "fired");
      assert.equal(store.triggers.unfiredDeliveries().some((d) => d.id === second), false);
    }));

    it("channel deliveries: one claimer at a time, taken over after the lease; an overtaken claimer cannot confirm", withStore(async (open) => {
      const a = await open();
      const b = await open();
      a.channelOutbox.enqueue({ runId: 1, automationId: "au_1" }, [{ channel: "team", host: "hooks.example" }], "{}", 0);
      const [taken] = a.channelOutbox.leased.claim(0, 1, () => true);
      assert.ok(taken);
      assert.deepEqual(b.channelOutbox.leased.claim(1, 1, () => true), [], "a live claimer holds it");
      const [over] = b.channelOutbox.leased.claim(CLAIM_LEASE_MS, 1, () => true);
      assert.equal(over?.id, taken.id, "after the lease");
      assert.equal(a.channelOutbox.leased.confirm(taken.id, CLAIM_LEASE_MS), false, "overtaken: the successor records the outcome");
      assert.equal(b.channelOutbox.leased.confirm(taken.id, CLAIM_LEASE_MS), true);
      assert.deepEqual(a.channelOutbox.status(1).map((s) => [s.channel, s.status, s.attempts]), [["team", "delivered", 2]]);
    }));
  });
}
