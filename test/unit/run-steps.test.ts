import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runSteps } from "../../src/automations/run-steps.ts";
import { parseSteps, type StepInput } from "../../src/automations/step-spec.ts";
import { failedStepPrompt, stepsResult, stepsStableText } from "../../src/automations/step-text.ts";
import { waitFor } from "../helpers/wait-for.ts";

function project(): string {
  const dir = mkdtempSync(join(tmpdir(), "steps-project-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const run = (inputs: StepInput[], cwd: string, extra: { signal?: AbortSignal; event?: { summary: string; data?: string } } = {}) =>
  runSteps(parseSteps(inputs), { cwd, env: { AUTOMATION_ID: "au1", AUTOMATION_RUN: "3" }, signal: extra.signal ?? new AbortController().signal, event: extra.event });

const stepDirs = () => readdirSync(tmpdir()).filter((d) => d.startsWith("obt-steps-")).length;

describe("steps: parsing", () => {
  it("takes the exact shape, with a 5m default timeout", () => {
    const steps = parseSteps([{ name: "pull", run: "git pull --ff-only", timeout: "2m" }, { name: "test", run: "npm test", timeout: "10m", continue_on_error: false }, { name: "lint", run: "npm run lint", continue_on_error: true }]);
    assert.deepEqual(steps.map((s) => [s.name, s.timeoutMs, s.continueOnError ?? false]), [["pull", 120_000, false], ["test", 600_000, false], ["lint", 300_000, true]]);
  });

  it("refuses bad names, clashing names, empty commands, bad timeouts and too many steps, saying how to fix them", () => {
    assert.throws(() => parseSteps([{ name: "my step", run: "x" }]), /steps\[0\]\.name "my step" must be 1-40 letters, digits/);
    assert.throws(() => parseSteps([{ name: "a-b", run: "x" }, { name: "a_b", run: "y" }]), /"a_b" and "a-b" would both be \$STEP_A_B_EXIT/);
    assert.throws(() => parseSteps([{ name: "a", run: "  " }]), /steps\[0\]\.run must be a shell command; e\.g\./);
    assert.throws(() => parseSteps([{ name: "a", run: "x", timeout: "soon" }]), /steps\[0\]\.timeout.*not a duration/);
    assert.throws(() => parseSteps([{ name: "a", run: "x", timeout: "2d" }]), /longer than the maximum/);
    assert.throws(() => parseSteps(Array.from({ length: 21 }, (_, i) => ({ name: `s${i}`, run: "true" }))), /at most 20 steps/);
  });
});

describe("steps: running them (real shells)", () => {
  it("runs in order in the project; later steps read earlier ones' exit code and output file; stderr is kept with stdout", async () => {
    const dir = project();
    const before = stepDirs();
    const out = await run([
      { name: "first", run: "pwd; echo to-stderr >&2; exit 0" },
      { name: "second-one", run: 'echo "exit was $STEP_FIRST_EXIT"; cat "$STEP_FIRST_OUTPUT_FILE"; echo "$AUTOMATION_ID #$AUTOMATION_RUN"' },
    ], dir);
    assert.equal(out.cancelled, false);
    assert.equal(out.failure, undefined);
    assert.deepEqual(out.results.map((r) => [r.name, r.status, r.exitCode]), [["first", "passed", 0], ["second-one", "passed", 0]]);
    assert.equal(out.results[0]!.tail, `${dir}\nto-stderr`);
    assert.equal(out.results[1]!.tail, `exit was 0\n${dir}\nto-stderr\nau1 #3`);
    assert.equal(stepDirs(), before, "the output files' folder is removed");
  });

  it("never runs output as code: a later step reading shell metacharacters through its variable runs nothing", async () => {
    const dir = project();
    const out = await run([
      { name: "evil", run: `printf '%s\\n' '$(touch pwned)' '; touch pwned2' '\`touch pwned3\`'` },
      { name: "reader", run: 'echo "read: $(cat "$STEP_EVIL_OUTPUT_FILE")"; printf "%s\\n" $(cat "$STEP_EVIL_OUTPUT_FILE") >/dev/null' },
    ], dir);
    assert.deepEqual(out.results.map((r) => r.status), ["passed", "passed"]);
    assert.match(out.results[1]!.tail!, /read: \$\(touch pwned\)\n; touch pwned2/);
    for (const file of ["pwned", "pwned2", "pwned3"]) assert.equal(existsSync(join(dir, file)), false, `${file} was created`);
  });

  it("a failing step stops the later ones and is the run's failure; continue_on_error goes on", async () => {
    const dir = project();
    const out = await run([
      { name: "lint", run: "echo lint says no; exit 3", continue_on_error: true },
      { name: "test", run: 'echo "lint exited $STEP_LINT_EXIT"; echo "1 failing"; exit 1' },
      { name: "deploy", run: "touch deployed" },
    ], dir);
    assert.deepEqual(out.results.map((r) => [r.name, r.status, r.exitCode]), [["lint", "failed", 3], ["test", "failed", 1], ["deploy", "not_run", undefined]]);
    assert.equal(out.failure?.result.name, "test");
    assert.equal(out.failure?.output, "lint exited 3\n1 failing\n");
    assert.equal(existsSync(join(dir, "deployed")), false);
  });

  it("kills a hanging step's whole process group at its timeout (exit 124, timed_out)", async () => {
    const dir = project();
    const started = Date.now();
    const out = await run([{ name: "hang", run: "echo starting; sleep 30 & sleep 30", timeout: "1s" }, { name: "after", run: "true" }], dir);
    assert.ok(Date.now() - started < 10_000, "returned long before the sleeps would end");
    assert.deepEqual(out.results.map((r) => [r.status, r.exitCode]), [["timed_out", 124], ["not_run", undefined]]);
    assert.equal(out.failure?.result.name, "hang");
    assert.equal(out.results[0]!.tail, "starting");
  });

  it("an abort kills the running step and runs nothing after it", async () => {
    const dir = project();
    const abort = new AbortController();
    const running = run([{ name: "long", run: "touch started; sleep 30" }, { name: "next", run: "touch ran" }], dir, { signal: abort.signal });
    await waitFor(() => existsSync(join(dir, "started")), "the step to start");
    abort.abort();
    const out = await running;
    assert.equal(out.cancelled, true);
    assert.deepEqual(out.results.map((r) => r.status), ["cancelled", "not_run"]);
    assert.equal(existsSync(join(dir, "ran")), false);
  });

  it("gives the event in $EVENT_SUMMARY and a file at $EVENT_FILE", async () => {
    const dir = project();
    const out = await run([{ name: "show", run: 'echo "$EVENT_SUMMARY"; cat "$EVENT_FILE"' }], dir, { event: { summary: "src/a.ts changed", data: '{"path":"src/a.ts"}' } });
    assert.equal(out.results[0]!.tail, 'src/a.ts changed\n{"path":"src/a.ts"}');
  });

  it("keeps only the end of a long output on the run, with secrets masked", async () => {
    const dir = project();
    const out = await run([{ name: "noisy", run: "seq 1 500; echo API_TOKEN=abcdef123456" }], dir);
    const tail = out.results[0]!.tail!;
    assert.equal(tail.split("\n").length, 20);
    assert.match(tail, /^482\n/);
    assert.match(tail, /API_TOKEN=\[MASKED\]$/);
  });
});

describe("steps: texts", () => {
  const results = [
    { name: "pull", run: "git pull", status: "passed" as const, exitCode: 0, durationMs: 400, tail: "Already up to date." },
    { name: "test", run: "npm test", status: "failed" as const, exitCode: 1, durationMs: 3200, tail: "ok 1\nnot ok 2\n1 failing" },
  ];

  it("a steps-only result names each step's exit code, time and last lines; on_change compares outcomes only", () => {
    const text = stepsResult(results);
    assert.match(text, /^Steps: 1 of 2 passed\.\n- pull: exit 0 in 0\.4s\n {4}Already up to date\.\n- test: exit 1 in 3\.2s\n {4}ok 1\n {4}not ok 2\n {4}1 failing$/);
    const slower = results.map((r) => ({ ...r, durationMs: r.durationMs * 3, tail: `${r.tail} (took longer)` }));
    assert.equal(stepsStableText(slower), stepsStableText(results));
    assert.notEqual(stepsStableText([results[0]!, { ...results[1]!, exitCode: 2 }]), stepsStableText(results));
  });

  it("the prompt after a failed step holds its command, exit code and output tail, marked as output", () => {
    const text = failedStepPrompt(results[1]!, "line\n".repeat(100) + "1 failing\n", results);
    assert.match(text, /Step "test" FAILED: `npm test` exited with code 1 after 3\.2s/);
    assert.match(text, /not instructions\.\]\n(line\n){39}1 failing\n\[End of output\]$/);
  });
});
