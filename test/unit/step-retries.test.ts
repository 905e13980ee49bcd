import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runSteps, type StepsOutcome } from "../../src/automations/run-steps.ts";
import { DEFAULT_RETRY_DELAY_MS, parseSteps, type StepInput } from "../../src/automations/step-spec.ts";
import { failedStepPrompt, stepLine, stepsBrief } from "../../src/automations/step-text.ts";
import { stepDefinitionLines } from "../../src/automations/automation-text.ts";
import { FakeClock } from "../helpers/fake-clock.ts";
import { waitFor } from "../helpers/wait-for.ts";

function project(): string {
  const dir = mkdtempSync(join(tmpdir(), "step-retries-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Fails until its `n`th try (counted in the file `tries`): exit 1, then exit 0. */
const passesOnTry = (n: number) => `echo x >> tries; t=$(wc -l < tries); echo "try $t"; [ "$t" -ge ${n} ]`;

/**
 * Runs the steps on a fake clock: each wait between tries is let through only by advancing the
 * clock (nothing sleeps); `waits` records each wait's length.
 */
async function runOnFakeClock(inputs: StepInput[], cwd: string, signal = new AbortController().signal) {
  const clock = new FakeClock();
  const waits: number[] = [];
  let outcome: StepsOutcome | undefined;
  const running = runSteps(parseSteps(inputs), { cwd, env: {}, signal, clock }).then((o) => { outcome = o; });
  while (!outcome) {
    const due = await waitFor(() => outcome !== undefined || clock.nextTimerIn(), "a retry's wait or the end", 10_000);
    if (due === true) break;
    waits.push(due as number);
    await clock.advance(due as number);
  }
  await running;
  return { outcome: outcome!, waits };
}

describe("step retries: parsing", () => {
  it("takes retries 0-5 and a retry_delay (default 5s, at least 100ms); none by default", () => {
    const [plain, retried, quick] = parseSteps([{ name: "a", run: "x" }, { name: "b", run: "x", retries: 2 }, { name: "c", run: "x", retries: 5, retry_delay: "100ms" }]);
    assert.equal(plain!.retries, undefined);
    assert.deepEqual([retried!.retries, retried!.retryDelayMs, retried!.retryDelay], [2, DEFAULT_RETRY_DELAY_MS, undefined]);
    assert.deepEqual([quick!.retries, quick!.retryDelayMs, quick!.retryDelay], [5, 100, "100ms"]);
    assert.equal(DEFAULT_RETRY_DELAY_MS, 5000);
  });

  it("refuses retries outside 0-5 or not whole, and a retry_delay that is no duration or under 100ms, naming the fix", () => {
    assert.throws(() => parseSteps([{ name: "a", run: "x", retries: 6 }]), /steps\[0\]\.retries must be a whole number from 0 to 5, got 6; e\.g\. "retries": 2, "retry_delay": "10s"/);
    assert.throws(() => parseSteps([{ name: "a", run: "x", retries: -1 }]), /from 0 to 5, got -1/);
    assert.throws(() => parseSteps([{ name: "a", run: "x", retries: 1.5 }]), /from 0 to 5, got 1\.5/);
    assert.throws(() => parseSteps([{ name: "a", run: "x", retries: 1, retry_delay: "soon" }]), /steps\[0\]\.retry_delay.*not a duration/);
    assert.throws(() => parseSteps([{ name: "a", run: "x", retries: 1, retry_delay: "50ms" }]), /shorter than the minimum of 100ms/);
    assert.throws(() => parseSteps([{ name: "a", run: "x", retries: 1, retry_delay: "2h" }]), /longer than the maximum/);
  });
});

describe("step retries: running (real shells, fake clock for the waits)", () => {
  it("retries: 2 passes on its third try after two waits of retry_delay; each earlier try is kept with its exit code and output", async () => {
    const dir = project();
    const { outcome, waits } = await runOnFakeClock([{ name: "flaky", run: passesOnTry(3), retries: 2, retry_delay: "30s" }, { name: "after", run: 'echo "flaky exit $STEP_FLAKY_EXIT"' }], dir);
    assert.equal(outcome.failure, undefined);
    assert.deepEqual(waits, [30_000, 30_000]);
    const [flaky, later] = outcome.results;
    assert.deepEqual([flaky!.status, flaky!.exitCode, flaky!.tail], ["passed", 0, "try 3"]);
    assert.deepEqual(flaky!.tries!.map((t) => [t.status, t.exitCode, t.tail]), [["failed", 1, "try 1"], ["failed", 1, "try 2"]]);
    assert.equal(later!.tail, "flaky exit 0", "later steps see the last try");
    assert.match(stepLine(flaky!), /^flaky: exit 0 in \d+\.\ds \(try 3; before: exit 1 in \d+\.\ds, exit 1 in \d+\.\ds\)$/);
    assert.equal(stepsBrief(outcome.results), "flaky 1→1→0, after 0", "the CLI's runs table: each try's exit code");
  });

  it("retries: 1 on a step that needs three tries fails the run after two tries; the failure prompt says it was its last try", async () => {
    const dir = project();
    const { outcome, waits } = await runOnFakeClock([{ name: "flaky", run: passesOnTry(3), retries: 1, retry_delay: "1s" }, { name: "after", run: "touch after" }], dir);
    assert.deepEqual(waits, [1000]);
    assert.equal(readFileSync(join(dir, "tries"), "utf8").split("\n").filter(Boolean).length, 2);
    assert.equal(outcome.failure?.result.name, "flaky");
    assert.deepEqual([outcome.results[0]!.status, outcome.results[0]!.tries!.length], ["failed", 1]);
    assert.equal(outcome.results[1]!.status, "not_run");
    assert.equal(existsSync(join(dir, "after")), false);
    assert.match(failedStepPrompt(outcome.failure!.result, outcome.failure!.output, outcome.results), /exited with code 1 after \d+\.\ds \(its last of 2 tries\)/);
  });

  it("a step that passes at once has no tries; retries: 0 (the default) never waits", async () => {
    const dir = project();
    const { outcome, waits } = await runOnFakeClock([{ name: "ok", run: "true", retries: 3 }, { name: "bad", run: "exit 2" }], dir);
    assert.deepEqual(waits, []);
    assert.equal(outcome.results[0]!.tries, undefined);
    assert.deepEqual([outcome.results[1]!.status, outcome.results[1]!.tries], ["failed", undefined]);
  });

  it("an abort during the wait ends the step as cancelled at once, with its tries kept; it is not run again", async () => {
    const dir = project();
    const clock = new FakeClock();
    const controller = new AbortController();
    const running = runSteps(parseSteps([{ name: "flaky", run: passesOnTry(9), retries: 5, retry_delay: "1h" }]), { cwd: dir, env: {}, signal: controller.signal, clock });
    await waitFor(() => clock.pendingTimers() === 1, "the wait before the second try");
    controller.abort();
    const outcome = await running;
    assert.equal(outcome.cancelled, true);
    assert.deepEqual([outcome.results[0]!.status, outcome.results[0]!.tries!.length], ["cancelled", 1]);
    assert.equal(clock.pendingTimers(), 0, "the wait's timer is cleared");
    assert.equal(readFileSync(join(dir, "tries"), "utf8").split("\n").filter(Boolean).length, 1);
  });

  it("task_read's step lines name the retries and their delay", () => {
    assert.deepEqual(stepDefinitionLines(parseSteps([{ name: "t", run: "npm test", retries: 2 }, { name: "u", run: "true", retries: 1, retry_delay: "1s" }])), [
      "- t: `npm test` (timeout 5m, retries 2, retry_delay 5s)",
      "- u: `true` (timeout 5m, retries 1, retry_delay 1s)",
    ]);
  });
});
