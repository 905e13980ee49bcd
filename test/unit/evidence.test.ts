import { describe, it, afterEach } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { evidenceFixture } from "../helpers/evidence-fixture.ts";
import { PARENT } from "../helpers/core-fixture.ts";

type Fixture = ReturnType<typeof evidenceFixture>;
let current: Fixture | undefined;
afterEach(() => current?.cleanup());

function setup(overrides: Parameters<typeof evidenceFixture>[0] = {}): Fixture {
  current = evidenceFixture(overrides);
  current.host.setActivity(PARENT, "idle");
  return current;
}

/** Ends the child's run with `text` and waits (on the core's own settle latch, or the continuation) for the outcome. */
async function answer(f: Fixture, id: string, text: string): Promise<void> {
  const prompts = f.host.promptsTo(id).length;
  const done = f.manager.waitFor([f.store.get(id)!], 60_000);
  f.host.finishRun(id, text);
  // The run-end check reads real files: wait until it settled the task or sent it back to work.
  while (f.store.get(id)!.status === "running" && f.host.promptsTo(id).length === prompts) await new Promise((r) => setTimeout(r, 2));
  if (f.store.get(id)!.status !== "running") await done;
  f.host.setActivity(PARENT, "idle"); // the parent's own turn (that launched the task) is over: notifications go out
  await f.flush();
}

const notification = (f: Fixture, id: string) => f.host.promptsTo(PARENT).map((p) => p.text).find((t) => t.includes(`task_id="${id}" status=`)) ?? "";

describe("evidence in the notification", () => {
  it("a file the child wrote is listed as created and verified, with its size", async () => {
    const f = setup();
    const id = await f.launch();
    await f.evidence.beforeWrite(id, ["report.md"]);
    await f.toolCall(id, "write", { filePath: "report.md", content: "# Report\n" }, { metadata: { exists: false }, before: () => writeFileSync(join(f.projectDir, "report.md"), "# Report\n") });
    await answer(f, id, "I wrote report.md.");
    assert.equal(f.store.get(id)!.status, "completed");
    assert.match(notification(f, id), /Evidence: Files: report\.md \(created, 9 B, verified\)/);
    assert.doesNotMatch(notification(f, id), /WARNING/);
  });

  it("a file written back with the same bytes is unchanged; commands show their exit code; failed tools their first error line", async () => {
    const f = setup();
    writeFileSync(join(f.projectDir, "same.txt"), "same\n");
    const id = await f.launch();
    await f.evidence.beforeWrite(id, ["same.txt"]);
    await f.toolCall(id, "write", { filePath: "same.txt", content: "same\n" }, { metadata: { exists: true } });
    await f.toolCall(id, "bash", { command: "npm test", description: "tests" }, { metadata: { exit: 1, output: "1 failing" } });
    await f.toolCall(id, "edit", { filePath: "a.ts", oldString: "x", newString: "y" }, { error: "oldString not found in content\nmore detail" });
    await answer(f, id, "Done.");
    const text = notification(f, id);
    assert.match(text, /same\.txt \(written, 5 B, unchanged\)/);
    assert.match(text, /Commands: npm test \(exit 1\)/);
    assert.match(text, /Failed tools: 1 \(edit: oldString not found in content\)/);
    assert.doesNotMatch(text, /more detail/);
  });

  it("a child that only claims a file gets a plain warning; so does 'tests pass' after a failing test run", async () => {
    const f = setup();
    const id = await f.launch();
    await f.toolCall(id, "bash", { command: "npx vitest run", description: "tests" }, { metadata: { exit: 2 } });
    await answer(f, id, "I created summary.md with the findings. All tests pass.");
    const text = notification(f, id);
    assert.match(text, /WARNING: the result says summary\.md was written, but summary\.md does not exist\./);
    assert.match(text, /WARNING: the result says the tests pass, but the last test command \(npx vitest run\) exited with 2\./);
  });

  it("no warning for plain cases: an existing file, a passing test run, a negated or future claim", async () => {
    const f = setup();
    writeFileSync(join(f.projectDir, "notes.md"), "n");
    const id = await f.launch();
    await f.toolCall(id, "bash", { command: "npm test", description: "tests" }, { metadata: { exit: 1 } });
    await f.toolCall(id, "bash", { command: "npm test", description: "tests" }, { metadata: { exit: 0 } });
    await answer(f, id, "I saved notes.md. All tests pass now.\nI could not create extra.md. I will write later.md next. Should I create other.md?");
    assert.doesNotMatch(notification(f, id), /WARNING/);
  });

  it("secrets in commands and errors are masked before they are stored", async () => {
    const f = setup();
    const id = await f.launch();
    await f.toolCall(id, "bash", { command: "curl -H 'Authorization: Bearer abcdefghijklmnop123' https://x", description: "x" }, { metadata: { exit: 0 } });
    await f.toolCall(id, "bash", { command: "GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789 gh pr list", description: "x" }, { error: "failed with ghp_abcdefghijklmnopqrstuvwxyz0123456789" });
    const stored = JSON.stringify(f.evidenceStore.rows(id));
    assert.doesNotMatch(stored, /abcdefghijklmnop123|ghp_abcdefghij/);
    assert.match(stored, /Bearer \[MASKED\]/);
  });

  it("evidence grows as the run goes: background_output shows it while the child still works", async () => {
    const f = setup();
    const id = await f.launch();
    await f.toolCall(id, "bash", { command: "npm run build", description: "x" }, { metadata: { exit: 0 } });
    const out = await f.call("background_output", { task_id: id });
    assert.match(out, /Status: running/);
    assert.match(out, /Evidence: Commands: npm run build \(exit 0\)/);
  });

  it("background_output gives the short block, and every item with evidence: true", async () => {
    const f = setup();
    const id = await f.launch();
    await f.toolCall(id, "bash", { command: "ls", description: "x" }, { metadata: { exit: 0 } });
    await f.toolCall(id, "read", { filePath: "nope.txt" }, { error: "File not found: /x/nope.txt" });
    await answer(f, id, "Listed.");
    const short = await f.call("background_output", { task_id: id });
    assert.match(short, /Evidence: Commands: ls \(exit 0\); Failed tools: 1 \(read: File not found: \/x\/nope\.txt\)/);
    const full = await f.call("background_output", { task_id: id, evidence: true });
    assert.match(full, /Evidence of run 0 \(first run\):/);
    assert.match(full, /ls — exit 0, 250 ms/);
    assert.match(full, /read: File not found/);
  });
});

describe("expect", () => {
  it("a missing file sends the child back once with what failed; when it writes the file the task completes", async () => {
    const f = setup();
    const id = await f.launch({ expect: { files: ["report.md"] } });
    await answer(f, id, "Done.");
    assert.equal(f.store.get(id)!.status, "running");
    const prompts = f.host.promptsTo(id);
    assert.equal(prompts.length, 2);
    assert.match(prompts[1]!.text, /report\.md does not exist\./);
    assert.match(prompts[1]!.text, /continuation 1 of 2/);
    assert.match(await f.call("background_output", { task_id: id }), /Progress: .*; continuation 1 of 2: report\.md does not exist/);
    assert.match(await f.call("background_list", {}), /continuation 1 of 2: report\.md does not exist/);
    assert.ok(f.store.events(id).some((e) => e.kind === "continued" && /report\.md does not exist/.test(e.detail ?? "")));
    writeFileSync(join(f.projectDir, "report.md"), "content");
    f.clock.now(); // the next answer is newer than the continuation prompt
    await f.clock.advance(10);
    await answer(f, id, "Now it is written.");
    assert.equal(f.store.get(id)!.status, "completed");
  });

  it("never met: settles as error evidence_missing after maxContinuations continuations", async () => {
    const f = setup();
    const id = await f.launch({ expect: { files: ["report.md"] } });
    for (let i = 0; i < 3; i++) {
      await f.clock.advance(10);
      await answer(f, id, "Done.");
    }
    const task = f.store.get(id)!;
    assert.equal(task.status, "error");
    assert.match(task.error!, /^evidence_missing: after 2 continuation\(s\) the expectation still fails: report\.md does not exist\./);
    assert.equal(f.host.promptsTo(id).length, 3);
    assert.match(notification(f, id), /evidence_missing/);
  });

  it("a command must exit 0: its exit code and last lines go to the child; passing later completes", async () => {
    const f = setup();
    const id = await f.launch({ expect: { command: "for i in $(seq 1 50); do echo line $i; done; test -f ok.flag" } });
    await answer(f, id, "Done.");
    const prompt = f.host.promptsTo(id)[1]!.text;
    assert.match(prompt, /exited with 1\. Last 40 lines of its output:/);
    assert.match(prompt, /line 50/);
    assert.doesNotMatch(prompt, /line 10\n/);
    writeFileSync(join(f.projectDir, "ok.flag"), "");
    await f.clock.advance(10);
    await answer(f, id, "Fixed.");
    assert.equal(f.store.get(id)!.status, "completed");
  });

  it("expect.command goes through the user's bash permission first; a refusal launches nothing", async () => {
    const f = setup();
    const asked: unknown[] = [];
    const refused = await f.call("background_task", { description: "d", prompt: "p", agent: "general", expect: { command: "rm -rf build" } }, async (input) => {
      asked.push(input);
      throw new Error("rejected");
    });
    assert.match(refused, /Running `rm -rf build` after the task was not allowed \(bash permission\)/);
    assert.equal(f.store.list().length, 0);
    assert.deepEqual(asked, [{ permission: "bash", patterns: ["rm -rf build"], always: ["rm *"], metadata: { command: "rm -rf build", description: "expect.command of a background task", patterns: ["rm -rf build"] } }]);
    assert.match(await f.call("background_task", { description: "d", prompt: "p", agent: "general", expect: { command: "npm test" } }, async () => undefined), /task_id: /);
  });

  it("refuses an empty expect, and expect on a resume, changing nothing", async () => {
    const f = setup();
    assert.match(await f.call("background_task", { description: "d", prompt: "p", agent: "general", expect: {} }), /expect needs "files"/);
    assert.match(await f.call("background_task", { description: "d", prompt: "p", agent: "general", resume: "ses_x", expect: { files: ["a"] } }), /set when a task is launched/);
    assert.equal(f.store.list().length, 0);
  });
});

describe("stalled loops", () => {
  it("the same tool call with the same input 5 times in a row stops the child as stalled_loop", async () => {
    const f = setup();
    const id = await f.launch();
    for (let i = 0; i < 4; i++) await f.toolCall(id, "bash", { command: "echo hi", description: "x" }, { metadata: { exit: 0 } });
    assert.equal(f.store.get(id)!.status, "running");
    await f.toolCall(id, "bash", { command: "echo hi", description: "x" }, { metadata: { exit: 0 } });
    assert.equal(f.store.get(id)!.status, "error");
    assert.match(f.store.get(id)!.error!, /^stalled_loop: the child repeated the same tool call 5 times in a row: bash \{"command":"echo hi"/);
    assert.deepEqual(f.host.aborted, [id]);
  });

  it("answers without a tool call in between, limit times in a row, are a loop too", async () => {
    const f = setup({ stalledLoopLimit: 3 });
    const id = await f.launch();
    const answerEvent = (n: number, toolCallsPending: boolean) => f.host.emit({ type: "message", sessionID: id, message: { id: `msg_a${n}`, role: "assistant", createdAt: n, completedAt: n + 1, toolCallsPending } });
    answerEvent(1, false);
    answerEvent(1, false); // the same message again is not another answer
    answerEvent(2, true);
    await f.toolCall(id, "read", { filePath: "x" });
    answerEvent(3, false);
    answerEvent(4, false);
    assert.equal(f.store.get(id)!.status, "running");
    answerEvent(5, false);
    assert.match(f.store.get(id)!.error ?? "", /^stalled_loop: the child repeated 3 answers in a row without a new tool call\./);
  });

  it("different inputs are not a loop", async () => {
    const f = setup({ stalledLoopLimit: 3 });
    const id = await f.launch();
    for (let i = 0; i < 6; i++) await f.toolCall(id, "bash", { command: `echo ${i % 2}`, description: "x" }, { metadata: { exit: 0 } });
    assert.equal(f.store.get(id)!.status, "running");
  });
});

describe("milestones", () => {
  it("started, evidence_verified and the outcome reach the parent as notices that start no turn", async () => {
    const f = setup();
    writeFileSync(join(f.projectDir, "report.md"), "x");
    const id = await f.launch({ expect: { files: ["report.md"] }, milestones: true });
    f.host.setActivity(PARENT, "idle");
    await f.flush();
    const [started] = f.host.promptsTo(PARENT);
    assert.match(started!.text, /milestone="started"/);
    assert.equal(started!.noReply, true, "a notice alone never starts a turn");
    await answer(f, id, "Done.");
    const toParent = f.host.promptsTo(PARENT);
    const order = toParent.flatMap((p) => [...p.text.matchAll(/milestone="(\w+)"|status="(\w+)"/g)].map((m) => m[1] ?? `notification:${m[2]}`));
    assert.deepEqual(order, ["started", "evidence_verified", "completed", "notification:completed"]);
    for (const p of toParent) if (!p.text.includes("status=")) assert.equal(p.noReply, true);
  });

  it("off by default", async () => {
    const f = setup();
    const id = await f.launch();
    await answer(f, id, "Done.");
    assert.ok(!f.host.promptsTo(PARENT).some((p) => p.text.includes("milestone")));
  });
});

describe("runs", () => {
  it("a resume is a new run: its notification shows its own evidence; evidence: true lists both runs", async () => {
    const f = setup();
    const id = await f.launch();
    await f.toolCall(id, "write", { filePath: "a.md", content: "a" }, { metadata: { exists: false }, before: () => writeFileSync(join(f.projectDir, "a.md"), "a") });
    await answer(f, id, "First.");
    await f.clock.advance(10);
    assert.match(await f.call("background_task", { description: "again", prompt: "more", agent: "general", resume: id }), /Resumed/);
    await f.toolCall(id, "bash", { command: "ls", description: "x" }, { metadata: { exit: 0 } });
    await f.clock.advance(10);
    await answer(f, id, "Second.");
    const notes = f.host.promptsTo(PARENT).map((p) => p.text).filter((t) => t.includes(`task_id="${id}" status="completed"`));
    assert.equal(notes.length, 2);
    assert.match(notes[0]!, /Files: a\.md/);
    assert.match(notes[1]!, /Evidence: Commands: ls \(exit 0\)/);
    assert.doesNotMatch(notes[1]!, /a\.md/);
    const full = await f.call("background_output", { task_id: id, evidence: true });
    assert.match(full, /Evidence of run 0 \(first run\):\n  Files:\n    a\.md/);
    assert.match(full, /Evidence of run 1 \(resume #1\):\n  Files: none\n  Commands:\n    ls — exit 0/);
  });
});
