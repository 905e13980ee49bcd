import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { after, beforeEach, describe, it } from "node:test";
import { systemClock, type Clock } from "../../src/core/clock.ts";
import { INBOX_POLL_MS, InboxApplier, OWNER_GRACE_MS } from "../../src/inbox/inbox-applier.ts";
import type { InboxCommand } from "../../src/inbox/inbox-command.ts";
import { COMMAND_LEASE_MS } from "../../src/store/command-repository.ts";
import { Store } from "../../src/store/store.ts";
import { FakeClock } from "../helpers/fake-clock.ts";

describe("dashboard command inbox", () => {
  const dir = mkdtempSync(join(tmpdir(), "inbox-"));
  let n = 0;
  let path: string;
  beforeEach(() => {
    path = join(dir, `db${n++}.sqlite`);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** A plugin instance of `project` on its own connection, recording what it applied. */
  function instance(project: string, apply: (c: InboxCommand) => Promise<string> = async () => "ok", owns = async (_c: InboxCommand) => true, clock: Clock = systemClock) {
    const store = Store.open({ path, projectId: project });
    const applied: number[] = [];
    const handler = { apply: async (c: InboxCommand) => (applied.push(c.id), apply(c)), owns };
    const applier = new InboxApplier(store, handler, clock, (m, e) => assert.fail(`${m}: ${e}`));
    return { store, applier, applied };
  }

  function dashboard() {
    const store = Store.open({ path, projectId: "dashboard" });
    return { inbox: store.commands, close: () => store.close() };
  }

  it("exactly one of two OpenCode processes of a project applies a command, and only that project's", async () => {
    const a = instance("proj");
    const b = instance("proj");
    const other = instance("elsewhere");
    const page = dashboard();
    const mine = page.inbox.submit("proj", "cancel_task", "ses_1", 1);
    const theirs = page.inbox.submit("other_proj", "pause", "au_1", 1);
    for (const i of [a, b, other]) i.applier.check();
    await Promise.all([a, b, other].map((i) => i.applier.idle()));
    assert.deepEqual([...a.applied, ...b.applied], [mine.id]);
    assert.deepEqual(other.applied, []);
    const done = page.inbox.get(mine.id)!;
    assert.equal(done.status, "done");
    assert.equal(done.outcome, "ok");
    assert.equal(page.inbox.get(theirs.id)!.status, "pending", "no OpenCode of that project: it stays pending");
    const again = page.inbox.submit("proj", "pause", "au_2", 1);
    assert.equal(a.store.commands.claim(again.id, "a", 2), true);
    assert.equal(b.store.commands.claim(again.id, "b", 2), false, "a claimed row cannot be claimed again");
    for (const i of [a, b, other]) i.store.close();
    page.close();
  });

  it("leaves a command to the process that owns it, and any process takes it once the owner stayed silent", async () => {
    let now = 1_000_000;
    const clock: Clock = { now: () => now, setTimeout: () => undefined, clearTimeout: () => {} };
    const owner = instance("proj", undefined, async () => true, clock);
    const other = instance("proj", undefined, async () => false, clock);
    const page = dashboard();
    const first = page.inbox.submit("proj", "cancel_task", "ses_1", now);
    other.applier.check();
    await other.applier.idle();
    assert.equal(page.inbox.get(first.id)!.status, "pending", "not the owner: left alone");
    owner.applier.check();
    await owner.applier.idle();
    assert.deepEqual([owner.applied, other.applied], [[first.id], []]);
    const orphan = page.inbox.submit("proj", "cancel_task", "ses_2", now);
    other.applier.check();
    await other.applier.idle();
    assert.equal(page.inbox.get(orphan.id)!.status, "pending");
    now += OWNER_GRACE_MS;
    other.applier.check(); // nothing was committed since: the deferred command is looked at again anyway
    await other.applier.idle();
    assert.equal(page.inbox.get(orphan.id)!.status, "done");
    for (const i of [owner, other]) i.store.close();
    page.close();
  });

  it("records why a command failed", async () => {
    const a = instance("proj", async () => {
      throw new Error("No task ses_9 in this project.");
    });
    const page = dashboard();
    const c = page.inbox.submit("proj", "cancel_task", "ses_9", 1);
    a.applier.check();
    await a.applier.idle();
    const failed = page.inbox.get(c.id)!;
    assert.equal(failed.status, "failed");
    assert.equal(failed.outcome, "No task ses_9 in this project.");
    assert.equal(failed.claimedBy, a.store.holder, "claimed under the one identity: host:pid:nonce");
    assert.match(failed.claimedBy!, new RegExp(`^${hostname()}:${process.pid}:[0-9a-f]{8}$`));
    a.store.close();
    page.close();
  });

  it("applies a command whose claimer stopped before recording its outcome: at once when its process is gone, else after the lease", async () => {
    const a = instance("proj");
    const page = dashboard();
    const deadPid = spawnSync(process.execPath, ["-e", ""]).pid!;
    const crashed = page.inbox.submit("proj", "pause", "au_1", Date.now());
    assert.equal(page.inbox.claim(crashed.id, `${hostname()}:${deadPid}:deadbeef`, Date.now()), true);
    const silent = page.inbox.submit("proj", "resume", "au_2", Date.now());
    assert.equal(page.inbox.claim(silent.id, "elsewhere.example:1:0badf00d", Date.now()), true, "a live holder on another machine");
    a.applier.check();
    await a.applier.idle();
    assert.deepEqual(a.applied, [crashed.id], "the dead holder's command; the other machine's is still its own");
    assert.deepEqual([page.inbox.get(crashed.id)!.status, page.inbox.get(silent.id)!.status], ["done", "claimed"]);
    const later = instance("proj", undefined, undefined, { ...systemClock, now: () => Date.now() + COMMAND_LEASE_MS });
    later.applier.check();
    await later.applier.idle();
    assert.deepEqual(later.applied, [silent.id], "its lease ran out: nothing stays claimed forever");
    assert.equal(page.inbox.get(silent.id)!.claimedBy, later.store.holder);
    for (const i of [a, later]) i.store.close();
    page.close();
  });

  it("looks at the inbox only when another connection committed", async () => {
    const a = instance("proj");
    const page = dashboard();
    a.applier.check();
    await a.applier.idle();
    // Written on the plugin's own connection: data_version does not move, so the poll does not look.
    a.store.commands.submit("proj", "pause", "au_own", 1);
    a.applier.check();
    await a.applier.idle();
    assert.equal(a.applied.length, 0);
    const c = page.inbox.submit("proj", "pause", "au_2", 1);
    a.applier.check();
    await a.applier.idle();
    assert.ok(a.applied.includes(c.id));
    a.store.close();
    page.close();
  });

  it("polls on a timer that stop ends, and never starts after a stop", async () => {
    const clock = new FakeClock();
    const a = instance("proj", undefined, undefined, clock);
    const page = dashboard();
    a.applier.start();
    const polled = page.inbox.submit("proj", "pause", "au_3", 1);
    await clock.advance(INBOX_POLL_MS);
    await a.applier.idle();
    assert.deepEqual(a.applied, [polled.id], "the next poll applies it");
    a.applier.stop();
    assert.equal(clock.pendingTimers(), 0, "stop ends the polling");
    a.applier.start();
    page.inbox.submit("proj", "pause", "au_4", 1);
    await clock.advance(2 * INBOX_POLL_MS);
    await a.applier.idle();
    assert.deepEqual(a.applied, [polled.id], "no poll after a stop, even when started again");
    assert.equal(clock.pendingTimers(), 0);
    a.store.close();
    page.close();
  });
});
