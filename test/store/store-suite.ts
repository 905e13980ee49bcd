import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Automation, Trigger } from "../../src/automations/automation.ts";
import { openSqlite } from "../../src/store/sqlite-driver.ts";
import { SharedStore } from "../../src/store/shared-store.ts";
import { Store } from "../../src/store/store.ts";
import { StoreUnavailableError } from "../../src/store/store-unavailable-error.ts";
import type { AutomationTables } from "../../src/store/automation-tables.ts";
import type { TestApi } from "./suite-support.ts";
import { runningTask } from "./task-fixtures.ts";

const automation = (id: string): Automation => ({
  id, title: `title ${id}`, prompt: "p", agent: "general", notify: "always", sessionMode: "fresh", overlap: "skip", catchUp: "skip",
  reportTo: "ses_parent", reportAgent: "build", enabled: true, createdBy: "ses_parent", createdAt: 1, updatedAt: 1, runCount: 0, consecutiveFailures: 0,
});
const trigger = (id: string, automationId: string, spec: Trigger["spec"]): Trigger => ({ id, automationId, spec, createdAt: 1 });

/** The Store: one connection, migrated at open, one repository per table family; and the CLI's and dashboard's SharedStore. */
export function defineStoreSuite({ describe, it }: TestApi): void {
  const inDir = (fn: (dir: string) => void | Promise<void>) => async () => {
    const dir = mkdtempSync(join(tmpdir(), "obt-store-layer-"));
    try {
      await fn(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  /** A Store with the automation layer's tables at hand. */
  const openStore = async (path: string, projectId: string): Promise<Store & AutomationTables> => {
    const store = Store.open({ path, projectId });
    return Object.assign(store, await store.automationTables());
  };
  /** Reads a table directly, as the dashboard's read side does. */
  const rows = (path: string, sql: string) => {
    const db = openSqlite(path, { readonly: true });
    try {
      return db.prepare(sql).all();
    } finally {
      db.close();
    }
  };

  describe("Store", () => {
    it("creates the folder and the file, migrates, and scopes each repository to its project", inDir(async (dir) => {
      const path = join(dir, "nested", "errands.db");
      const a = await openStore(path, "pa");
      const b = await openStore(path, "pb");
      try {
        assert.equal(a.path, path);
        a.automations.saveAutomation(automation("au1"));
        a.tasks.save(runningTask("ses_1"));
        assert.deepEqual([a.hasAutomations(), b.hasAutomations()], [true, false]);
        assert.deepEqual(b.tasks.list().map((t) => t.id), []);
        a.projects.record("pa", "/work/a", 5);
        assert.deepEqual(rows(path, "SELECT project_id, directory FROM projects"), [{ project_id: "pa", directory: "/work/a" }]);
      } finally {
        a.close();
        b.close();
      }
    }));

    it("the repositories share one connection: a transaction commits or rolls back all of them", inDir(async (dir) => {
      const store = await openStore(join(dir, "errands.db"), "p");
      try {
        assert.throws(() => store.transaction(() => {
          store.tasks.save(runningTask("ses_rolled"));
          store.automations.saveAutomation(automation("au_rolled"));
          store.proposals.record({ proposalId: "au_rolled", title: "t", work: "w", triggers: [], reason: "r", outcome: "rejected", via: "cli", decidedAt: 1 });
          throw new Error("abort");
        }), /abort/);
        assert.deepEqual([store.tasks.get("ses_rolled"), store.automations.automation("au_rolled"), store.proposals.decisions(0).length], [undefined, undefined, 0]);
        assert.deepEqual(store.tasks.list().map((t) => t.id), [], "the task cache forgets the rolled-back write");
        store.transaction(() => {
          store.tasks.save(runningTask("ses_kept"));
          store.automations.saveAutomation(automation("au_kept"));
        });
        assert.deepEqual([store.tasks.get("ses_kept")?.id, store.automations.automation("au_kept")?.id], ["ses_kept", "au_kept"]);
      } finally {
        store.close();
      }
    }));

    it("dataVersion changes when another connection commits, not on its own writes", inDir(async (dir) => {
      const path = join(dir, "errands.db");
      const store = await openStore(path, "p");
      const other = SharedStore.open(path);
      try {
        const before = store.dataVersion();
        store.tasks.save(runningTask("ses_own"));
        assert.equal(store.dataVersion(), before);
        other.commands.submit("p", "pause", "au1", 1);
        assert.notEqual(store.dataVersion(), before);
        assert.deepEqual(store.commands.open("p").map((c) => c.kind), ["pause"]);
      } finally {
        other.close();
        store.close();
      }
    }));

    it("triggers: event triggers of enabled automations, each source's state and note, webhooks by name across projects", inDir(async (dir) => {
      const path = join(dir, "errands.db");
      const store = await openStore(path, "p");
      try {
        store.automations.saveAutomation(automation("au1"));
        store.automations.saveTrigger(trigger("tr_w", "au1", { kind: "webhook", name: "deploy" } as Trigger["spec"]));
        store.automations.saveTrigger(trigger("tr_i", "au1", { kind: "interval", every: "1m", everyMs: 60_000 }));
        assert.deepEqual(store.triggers.activeEventTriggers(["webhook", "watch"]).map((t) => t.id), ["tr_w"]);
        store.triggers.saveState("tr_w", { seen: [1] });
        store.triggers.setNote("tr_w", "listening");
        assert.deepEqual(store.triggers.state("tr_w"), { seen: [1] });
        store.triggers.addWebhook({ name: "deploy", triggerId: "tr_w", secret: "s".repeat(16), createdAt: 1 });
        assert.deepEqual([store.triggers.webhook("deploy")?.active, store.triggers.webhookOfTrigger("tr_w")?.name], [true, "deploy"]);
        store.automations.saveAutomation({ ...automation("au1"), enabled: false });
        assert.equal(store.triggers.webhook("deploy")?.active, false, "a paused automation's hook takes no delivery");
        assert.deepEqual(store.triggers.activeEventTriggers(["webhook"]), []);
      } finally {
        store.close();
      }
    }));

    it("channel outbox: one row per run and channel, an unconfigured channel failed at once, ended rows purged", inDir(async (dir) => {
      const store = await openStore(join(dir, "errands.db"), "p");
      try {
        const run = { runId: 7, automationId: "au1" };
        const queued = [{ channel: "team", host: "hooks.example" }, { channel: "gone", host: "-", failure: 'channel "gone" is not configured' }];
        store.channelOutbox.enqueue(run, queued, JSON.stringify({ summary: "s" }), 10);
        store.channelOutbox.enqueue(run, queued, "{}", 11);
        assert.deepEqual(store.channelOutbox.status(7).map((s) => [s.channel, s.status, s.lastError ?? null]),
          [["gone", "failed", 'channel "gone" is not configured'], ["team", "pending", null]]);
        const [item] = store.channelOutbox.leased.claim(10, 5, () => true);
        assert.deepEqual(store.channelOutbox.noticeOf(item!), { summary: "s" }, "queued once: the first notice stays");
        assert.deepEqual(store.channelOutbox.failures(0).map((s) => s.channel), ["gone"]);
        assert.equal(store.channelOutbox.purgeEnded(11), 1);
        assert.deepEqual(store.channelOutbox.status(7).map((s) => s.channel), ["team"]);
      } finally {
        store.close();
      }
    }));

    it("worker health: one row per configured worker, the others dropped", inDir(async (dir) => {
      const path = join(dir, "errands.db");
      const store = await openStore(path, "p");
      try {
        for (const name of ["w1", "w2"]) store.workerHealth.save({ name, host: `${name}.lan`, capacity: 2, state: "healthy", since: 1, checkedAt: 2 });
        store.workerHealth.save({ name: "w1", host: "w1.lan", capacity: 3, state: "unreachable", since: 4, error: "ECONNREFUSED", checkedAt: 5 });
        store.workerHealth.keepOnly(["w1"]);
        assert.deepEqual(rows(path, "SELECT name, capacity, state, error FROM worker_health"), [{ name: "w1", capacity: 3, state: "unreachable", error: "ECONNREFUSED" }]);
      } finally {
        store.close();
      }
    }));
  });

  describe("SharedStore (the command line and the dashboard)", () => {
    it("never creates a database: a missing file is refused, naming it", inDir(async (dir) => {
      const path = join(dir, "none.db");
      assert.throws(() => SharedStore.open(path), (e: unknown) => e instanceof StoreUnavailableError && e.reason === "missing" && e.message.includes(path));
      assert.equal(existsSync(path), false);
    }));

    it("sets a webhook's secret by name, in whichever project it is", inDir(async (dir) => {
      const path = join(dir, "errands.db");
      const store = await openStore(path, "p");
      store.automations.saveAutomation(automation("au1"));
      store.automations.saveTrigger(trigger("tr_w", "au1", { kind: "webhook", name: "deploy" } as Trigger["spec"]));
      store.triggers.addWebhook({ name: "deploy", triggerId: "tr_w", secret: "old-secret-0000000", createdAt: 1 });
      const shared = SharedStore.open(path);
      try {
        assert.equal(shared.setWebhookSecret("deploy", "new-secret-1111111"), true);
        assert.equal(shared.setWebhookSecret("nope", "new-secret-1111111"), false);
        assert.equal(store.triggers.webhook("deploy")?.secret, "new-secret-1111111");
      } finally {
        shared.close();
        store.close();
      }
    }));
  });
}
