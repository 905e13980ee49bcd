import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { canTransition, checkNewRun, IllegalRunTransitionError, transition, type RunStatus } from "../../src/automations/run-status.ts";

const ALL: RunStatus[] = ["waiting", "starting", "running", "completed", "error", "cancelled", "skipped", "missed"];

describe("the run state machine", () => {
  it("allows the moves a run makes: queued, started, ran, ended or skipped", () => {
    const allowed: [RunStatus, RunStatus][] = [
      ["waiting", "starting"], ["waiting", "skipped"],
      ["starting", "running"], ["starting", "completed"], ["starting", "error"], ["starting", "cancelled"], ["starting", "skipped"],
      ["running", "completed"], ["running", "error"], ["running", "cancelled"],
    ];
    for (const [from, to] of allowed) {
      const run = { id: 1, status: from };
      assert.equal(transition(run, to), true, `${from} -> ${to}`);
      assert.equal(run.status, to);
    }
  });

  it("refuses every other move, naming the run and both statuses, and changes nothing", () => {
    const refused: [RunStatus, RunStatus][] = [
      ["waiting", "running"], ["waiting", "completed"], ["running", "starting"], ["running", "waiting"], ["running", "skipped"],
      ["completed", "running"], ["error", "completed"], ["cancelled", "starting"], ["skipped", "starting"], ["missed", "starting"],
    ];
    for (const [from, to] of refused) {
      const run = { id: 7, status: from };
      assert.throws(() => transition(run, to), (e: unknown) => e instanceof IllegalRunTransitionError && e.message === `Automation run 7 cannot go from ${from} to ${to}`);
      assert.equal(run.status, from);
    }
  });

  it("an ended run never moves again; a move to the same status is a harmless no-op", () => {
    for (const ended of ["completed", "error", "cancelled", "skipped", "missed"] as const) {
      for (const to of ALL) if (to !== ended) assert.equal(canTransition(ended, to), false, `${ended} -> ${to}`);
    }
    const run = { id: 1, status: "completed" as RunStatus };
    assert.equal(transition(run, "completed"), false);
  });

  it("a new row is born waiting, starting, skipped or missed, never running or ended", () => {
    for (const status of ["waiting", "starting", "skipped", "missed"] as const) checkNewRun({ status });
    for (const status of ["running", "completed", "error", "cancelled"] as const) assert.throws(() => checkNewRun({ status }), /cannot be/);
  });

  it("only run-rows.ts writes a run row: no other file calls the store's updateRun or insertRun", () => {
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (path.endsWith(".ts") && /\.(updateRun|insertRun)\(/.test(readFileSync(path, "utf8"))) offenders.push(path);
      }
    };
    walk("src");
    assert.deepEqual(offenders.filter((p) => !p.endsWith("run-rows.ts")), []);
  });
});
