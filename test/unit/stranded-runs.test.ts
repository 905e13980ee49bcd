import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { hostname } from "node:os";
import { startedAutomations } from "../helpers/automation-fixture.ts";
import { CLAIM_LEASE_MS, newClaimer } from "../../src/core/claims.ts";

const DEAD_PID = 2 ** 22 + 7; // above Linux's largest pid_max: no such process

/**
 * A process claims a run `starting` and dies before it saves the run's task: the run names its
 * holder with a lease, and the claim sweep of any live process ends it as an error that names the
 * lost process, whether or not the automation fires again, paused or not; then the next firing runs.
 */
describe("runs stranded by a process that died", () => {
  function strand(f: ReturnType<typeof startedAutomations>, automationId: string, holder: string) {
    const now = f.clock.now();
    const run = f.autoStore.insertRun({ automationId, firedBy: "manual", status: "starting", runNo: 1, createdAt: now, startedAt: now })!;
    // What the dead process left: its claim on the row (as RunStarter.admit writes it).
    assert.equal(f.autoStore.runClaims.claim(run.id, holder, now), true);
    return run;
  }

  it("a paused automation's run claimed by a dead process ends within one lease, naming it; after resuming, the next firing runs", async () => {
    const f = startedAutomations();
    await f.manager.start();
    const a = f.create({ overlap: "skip" });
    const dead = `${hostname()}:${DEAD_PID}:0badc0de`;
    const run = strand(f, a.id, dead);
    f.autoStore.saveAutomation({ ...f.autoStore.automation(a.id)!, enabled: false });
    await f.clock.advance(CLAIM_LEASE_MS);
    const ended = f.autoStore.run(run.id)!;
    assert.equal(ended.status, "error", "ended without any firing");
    assert.match(ended.summary ?? "", new RegExp(dead));
    f.autoStore.saveAutomation({ ...f.autoStore.automation(a.id)!, enabled: true });
    const next = await f.runs.runNow(a.id);
    assert.notEqual(next.run.status, "skipped", "the next firing is not skipped as an overlap");
  });

  it("a run held by a live process is left while it renews; once its claim is not renewed for a lease, it is ended", async () => {
    const f = startedAutomations();
    await f.manager.start();
    const a = f.create({ overlap: "skip" });
    const other = newClaimer(); // a live instance, which stops renewing (hung)
    const run = strand(f, a.id, other);
    await f.clock.advance(CLAIM_LEASE_MS - 1);
    assert.equal(f.autoStore.run(run.id)!.status, "starting", "its holder's lease still runs");
    await f.clock.advance(CLAIM_LEASE_MS);
    const ended = f.autoStore.run(run.id)!;
    assert.equal(ended.status, "error");
    assert.match(ended.summary ?? "", new RegExp(other));
  });

  it("the process that starts a run holds it and renews it: its own run is never ended under it", async () => {
    const f = startedAutomations();
    await f.manager.start();
    const a = f.create({ overlap: "skip" });
    f.host.failPrompt = false;
    const { run } = await f.runs.runNow(a.id);
    await f.clock.advance(CLAIM_LEASE_MS * 3);
    const now = f.autoStore.run(run.id)!;
    assert.equal(now.status, "running");
    assert.equal(f.autoStore.runClaims.holder(run.id)?.by, f.ctx.holder);
  });
});
