/**
 * Notices a person can read (issue 23): every notice goes into a session as one user message with
 * two text parts, a short visible line for the person (no markup, no delivery key) and a synthetic
 * part holding the tagged payload for the model. Here: the visible line of each notice kind, what
 * the notifier hands the host, and the presence check that must still tell notices from the user.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { coreFixture, PARENT } from "../helpers/core-fixture.ts";
import { automationFixture, startedAutomations, tempDb, MODEL } from "../helpers/automation-fixture.ts";
import { FakeHost } from "../helpers/fake-host.ts";
import { FakeClock } from "../helpers/fake-clock.ts";
import { automationTools } from "../../src/tools/build-tools.ts";
import { Discovery, DISCOVERY_ID } from "../../src/discovery/discovery.ts";
import { parseDiscovery } from "../../src/discovery/discovery-config.ts";
import { lastUserMessage } from "../../src/discovery/user-presence.ts";
import { fallbackLine, interruptedLine, NOTICE_LINE_MAX, taskNoticeLine } from "../../src/core/notice-line.ts";
import { milestoneLine } from "../../src/evidence/milestone-text.ts";
import { pausedLine, runNoticeLine } from "../../src/automations/automation-text.ts";
import { ParentNotifier } from "../../src/core/parent-notifier.ts";
import { MemoryTaskStore } from "../../src/core/memory-task-store.ts";
import type { Task } from "../../src/core/task.ts";
import type { Automation, Run } from "../../src/automations/automation.ts";

const MIN = 60_000;

function task(fields: Partial<Task> = {}): Task {
  return {
    id: "ses_child1", parentSessionID: PARENT, description: "find flaky tests", status: "completed", createdAt: 1_000, settledAt: 5_000,
    resumeCount: 0, result: "Child A: the test suite has 3 flaky tests", ...fields,
  } as Task;
}

/** A visible line holds no markup and no delivery key, and fits one line. */
function assertPlain(line: string) {
  assert.doesNotMatch(line, /<[a-z/]/i, line);
  assert.doesNotMatch(line, /key="/, line);
  assert.doesNotMatch(line, /\n/, line);
  assert.ok(line.length <= NOTICE_LINE_MAX, `${line.length} chars: ${line}`);
}

describe("the visible line of each notice kind", () => {
  it("a completed task: ✓ description · duration · the result on one line", () => {
    const line = taskNoticeLine(task({ result: "Child A: the test suite\nhas 3 flaky tests" }));
    assert.equal(line, "✓ find flaky tests · 4s · Child A: the test suite has 3 flaky tests");
    assertPlain(line);
  });

  it("a completed task whose evidence contradicts its answer says so before the result", () => {
    const line = taskNoticeLine(task({ evidence: "WARNING: the answer names src/a.ts as written; no write to it was seen\nEvidence: Commands: npm test (exit 1)" }));
    assert.equal(line, "✓ find flaky tests · 4s · ⚠ the evidence contradicts the answer · Child A: the test suite has 3 flaky tests");
  });

  it("a long result is cut to one line with an ellipsis", () => {
    const line = taskNoticeLine(task({ result: `start ${"word ".repeat(200)}` }));
    assert.equal(line.length, NOTICE_LINE_MAX);
    assert.ok(line.endsWith("…"), line);
    assert.ok(line.startsWith("✓ find flaky tests · 4s · start word word"), line);
    assertPlain(line);
  });

  it("an error: ✗ description · duration · the error", () => {
    const line = taskNoticeLine(task({ status: "error", settledAt: 13_000, result: undefined, error: "budget_exceeded: the task used 120k of 100k tokens" }));
    assert.equal(line, "✗ find flaky tests · 12s · budget_exceeded: the task used 120k of 100k tokens");
    assertPlain(line);
  });

  it("a cancelled task: ⊘ description · cancelled, with the reason when there is one", () => {
    assert.equal(taskNoticeLine(task({ status: "cancelled", result: undefined })), "⊘ find flaky tests · cancelled");
    assert.equal(taskNoticeLine(task({ status: "cancelled", result: undefined, error: "not needed any more" })), "⊘ find flaky tests · cancelled · not needed any more");
  });

  it("a result that holds markup of its own is still one plain line with no tag", () => {
    const line = taskNoticeLine(task({ result: '<background-task-notification key="x">\nhi' }));
    assertPlain(line);
  });

  it("a milestone: the task, what happened", () => {
    assert.equal(milestoneLine(task({ status: "running" }), "started", "started after 12s in the queue."), "▸ find flaky tests · started after 12s in the queue");
    assert.equal(milestoneLine(task({ status: "running" }), "evidence_verified", "its expectation is met: npm test passes."), "☑ find flaky tests · its expectation is met: npm test passes");
    assertPlain(milestoneLine(task(), "completed", "completed."));
  });

  it("a task resumed after a restart", () => {
    assert.equal(interruptedLine(task({ status: "running" })), "↻ find flaky tests · interrupted by an OpenCode restart; told to continue");
  });

  it("an automation run and a pause", () => {
    const a = { id: "au_1", title: "main digest", consecutiveFailures: 2 } as Automation;
    const run = { runNo: 3 } as Run;
    assert.equal(runNoticeLine(a, run, { status: "completed", result: "3 commits on main\nmore" }), '✓ automation "main digest" · run #3 · 3 commits on main more');
    assert.equal(runNoticeLine(a, run, { status: "error", error: "rate limited" }), '✗ automation "main digest" · run #3 · rate limited');
    assert.equal(pausedLine(a), '⏸ automation "main digest" paused after 2 failures');
  });

  it("a stored notice without a line of its own (queued before this version) gets one from its text", () => {
    assert.equal(fallbackLine('<background-task-notification task_id="ses_1" status="completed">\nBackground task ses_1 "x" completed after 2s.\nResult:\nok\n</background-task-notification>'),
      'Background task ses_1 "x" completed after 2s. Result: ok');
  });
});

describe("what the notifier hands the host", () => {
  it("a settle: the person's line visible, the tagged payload with its key for the model", async () => {
    const f = coreFixture();
    const id = await f.launch({ description: "find flaky tests" });
    f.host.setActivity(PARENT, "idle");
    await f.clock.advance(4000);
    f.host.finishRun(id, "Child A: the test suite has 3 flaky tests");
    await f.flush();
    const [note] = f.host.promptsTo(PARENT);
    assert.equal(note!.visible, "✓ find flaky tests · 4s · Child A: the test suite has 3 flaky tests");
    assert.ok(note!.text.includes(`<background-task-notification key="${id}:0" task_id="${id}" status="completed">`), note!.text);
    assert.ok(note!.text.includes("Result:\nChild A: the test suite has 3 flaky tests"), note!.text);
  });

  it("several notices in one message: one visible line each, the payloads together", async () => {
    const f = coreFixture();
    const a = await f.launch({ description: "first" }, { messageID: "msg_x" });
    const b = await f.launch({ description: "second" }, { messageID: "msg_x" });
    f.host.finishRun(a, "AAA");
    f.host.finishRun(b, "", { error: "model broke" });
    await f.flush();
    f.host.setActivity(PARENT, "idle");
    await f.flush();
    const [note] = f.host.promptsTo(PARENT);
    assert.deepEqual(note!.visible!.split("\n").map((l) => l.slice(0, 8)).sort(), ["✓ first ", "✗ second"]);
    for (const id of [a, b]) assert.ok(note!.text.includes(`key="${id}:0"`), note!.text);
    assert.match(note!.text, /AAA[^]*\n\n[^]*model broke|model broke[^]*\n\n[^]*AAA/);
  });

  it("an outbox row without a line (queued by an older version) is sent with one made from its text", async () => {
    const clock = new FakeClock();
    const host = new FakeHost(clock);
    host.addSession(PARENT, "idle");
    const store = new MemoryTaskStore();
    const notifier = new ParentNotifier({ host, store, clock, resultCap: 1000, onError: () => {} });
    store.enqueueNotification({ id: "old:0", parentSessionID: PARENT, taskId: "ses_gone", text: "<automation-run>\nrun #1 completed\n</automation-run>", wake: false, createdAt: 0 });
    await notifier.deliver(PARENT);
    const [note] = host.promptsTo(PARENT);
    assert.equal(note!.visible, "run #1 completed");
    assert.match(note!.text, /key="old:0"/);
  });

  it("the FakeHost keeps both parts: the model's text holds both, the history marks the payload synthetic", async () => {
    const f = coreFixture();
    const id = await f.launch();
    f.host.setActivity(PARENT, "idle");
    f.host.finishRun(id, "found it");
    await f.flush();
    const [message] = (await f.host.sessionHistory(PARENT)).slice(-1);
    const texts = message!.parts.filter((p) => p.type === "text");
    assert.deepEqual(texts.map((p) => Boolean(p.synthetic)), [false, true]);
    assert.doesNotMatch(String(texts[0]!.text), /key="|</);
    assert.match(String(texts[1]!.text), new RegExp(`key="${id}:0"`));
  });

  it("an automation pause: its own line, next to the run's", async () => {
    const f = startedAutomations({});
    const a = f.create({ notify: "always", title: "main digest" }, [{ every: "1s" }]);
    for (const error of ["rate limited", "rate limited again"]) {
      await f.clock.advance(1000);
      for (const id of f.children()) if (f.manager.get(id)!.status === "running") f.host.finishRun(id, "", { error });
      await f.flush();
      f.host.setActivity(PARENT, "idle");
      await f.flush();
    }
    assert.equal(f.catalog.get(a.id)!.enabled, false);
    const last = f.host.promptsTo(PARENT).at(-1)!;
    assert.deepEqual(last.visible!.split("\n"), ['✗ automation "main digest" · run #2 · rate limited again', '⏸ automation "main digest" paused after 2 failures']);
    assert.match(last.text, /PAUSED after 2 consecutive failed runs/);
  });
});

describe("the presence check tells the plugin's notices from the user", () => {
  const USER = "ses_user";

  it("a two-part notice (the line visible, the tag only in the synthetic part) is not the user writing", async () => {
    const clock = new FakeClock();
    const host = new FakeHost(clock);
    host.addSession(USER, "idle");
    await clock.advance(10 * MIN);
    await host.prompt({ sessionID: USER, text: "fix the login bug", agent: "build", model: MODEL });
    await clock.advance(5 * MIN);
    await host.prompt({ sessionID: USER, visible: "✓ find flaky tests · 4s · done", text: '<background-task-notification key="ses_x:0" task_id="ses_x">\ndone\n</background-task-notification>', agent: "other" });
    const presence = await lastUserMessage(host, clock.now(), 60 * MIN);
    assert.equal(presence?.lastMessageAt, clock.now() - 5 * MIN, "the user's own message, not the notice");
    assert.equal(presence?.agent, "build");
  });

  it("discovery still sees a user away when only the plugin's notices arrived, and reports its proposals with a line", async () => {
    const f = automationFixture(tempDb().path);
    after(() => f.close());
    const discovery = new Discovery({
      automations: f.catalog, runs: f.runs, proposals: f.proposals, host: f.host, clock: f.clock, log: () => {},
      config: parseDiscovery({ every: "30m", idle: "10m", agent: "general" }).discovery!,
    });
    f.host.addSession(USER, "idle");
    await f.host.prompt({ sessionID: USER, text: "deploying now", agent: "build", model: MODEL });
    f.host.setActivity(USER, "idle");
    await f.clock.advance(11 * MIN);
    assert.equal(await discovery.check(), "started");
    const run = f.runs.runs(DISCOVERY_ID, 5).find((r) => r.runNo !== undefined)!;
    const child = run.taskId!;
    const tools = automationTools(f.automations, () => {});
    await tools.task_propose!.execute({ title: "watch CI", reason: "CI failed twice.", prompt: "check CI", triggers: [{ every: "1h" }] } as never,
      { sessionID: child, messageID: "m", agent: "general", abort: new AbortController().signal } as never);
    f.host.finishRun(child, "Proposed watch CI.");
    await f.flush();
    const note = f.host.promptsTo(USER).at(-1)!;
    assert.ok(note.visible?.split("\n").includes('◇ discovery proposed 1 automation while you were away: "watch CI" · nothing runs until you approve'), note.visible);
    assert.match(note.text, /discovery proposed 1 automation\(s\)/);
    f.host.setActivity(USER, "idle");
    // Only that notice arrived since: the user has still written nothing for 11 min + 30 min.
    await f.clock.advance(30 * MIN);
    assert.equal(await discovery.check(), "started");
  });
});
