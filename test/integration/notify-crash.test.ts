import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { startStack, call, waitUntil, pluginDbPath, MOCK_MODEL, type Stack } from "../harness/plugin-stack.ts";
import { startMockModel, type MockModel } from "../harness/mock-model.ts";
import { ReadModel } from "../../src/store/reads/read-model.ts";

/**
 * The host dies as the notifier sends (a test-only crash point in the host adapter,
 * OPENCODE_ERRANDS_FAULT: src/host/crash-fault-host.ts), after the claim or after the
 * send, and is restarted on the same home and project without it: the parent ends up with the
 * notification exactly once.
 */
describe("notifications survive a crash of the real host", () => {
  let mock: MockModel;
  const stacks: Stack[] = [];
  const start = async (options: Parameters<typeof startStack>[0] = {}) => {
    mock ??= await startMockModel();
    const stack = await startStack({ mock, pluginOptions: { pollIntervalMs: 250 }, ...options });
    stacks.push(stack);
    return stack;
  };
  after(async () => {
    // Newest first: the first server of a pair owns the home the restarted one still uses.
    for (const stack of stacks.reverse()) await stack.stop().catch(() => undefined);
    await mock?.close();
  });

  /** Launches one task that answers at once; the notifier then kills the host at `fault`. */
  async function crashAt(fault: "exit-after-claim" | "exit-after-send", result: string) {
    const first = await start({ env: { OPENCODE_ERRANDS_FAULT: fault } });
    const parent = await first.newSession(`parent: ${fault}`);
    const launch = call("background_task", { description: "crash probe", prompt: `REPLY ${result}`, agent: "general" });
    void first.server.client.session.promptAsync({ path: { id: parent }, body: { agent: "build", model: MOCK_MODEL, parts: [{ type: "text", text: launch }] } });
    await waitUntil(() => !alive(first.server.pid), { timeoutMs: 60_000, intervalMs: 50, what: `the host to die at ${fault}` });
    first.events.close();
    return { first, parent, outbox: readOutbox(first) };
  }

  function readOutbox(stack: Stack) {
    const reader = ReadModel.open(pluginDbPath(stack.server));
    try {
      const [task] = reader.tasks.list();
      const [notification] = reader.tasks.notifications().filter((n) => n.taskId === task?.id);
      return { task: task!, notification: notification!, notified: reader.tasks.events(task!.projectId, task!.id).filter((e) => e.kind === "notified") };
    } finally {
      reader.close();
    }
  }

  async function restartAndCount(first: Stack, parent: string, result: string) {
    const second = await start({ reuse: { homeDir: first.server.homeDir, projectDir: first.server.projectDir } });
    // Delivery is confirmed in the database only after the host accepted (or already had) it.
    await waitUntil(() => readOutbox(second).notification.deliveredAt !== undefined, { timeoutMs: 30_000, intervalMs: 100, what: "confirmed delivery" });
    // An accepted promptAsync is not always in session.messages yet (docs/host-notes.md), and a
    // woken parent runs a turn: count once the message is there and the parent is idle again.
    const notesNow = async () => (await second.notifications(parent)).filter((n) => n.includes(result));
    await waitUntil(async () => (await notesNow()).length > 0, { timeoutMs: 10_000, what: "the notification in the parent" });
    await waitUntil(async () => (await second.server.client.session.status()).data?.[parent] === undefined, { timeoutMs: 20_000, what: "parent idle" });
    return { second, notes: await notesNow(), outbox: readOutbox(second), shape: await noticeShape(second, parent) };
  }

  /** The notice's text parts: the plain line a person sees, and the synthetic payload with the key. */
  async function noticeShape(stack: Stack, parent: string) {
    const notices = (await stack.messages(parent)).filter((m) => m.info.role === "user" && JSON.stringify(m.parts).includes("<background-task-notification key="));
    const texts = notices.flatMap((m) => m.parts.filter((p) => p.type === "text"));
    return { visible: texts.filter((p) => !p.synthetic).map((p) => String(p.text)), synthetic: texts.filter((p) => p.synthetic).map((p) => String(p.text)) };
  }

  function assertTwoParts(shape: { visible: string[]; synthetic: string[] }, taskId: string, result: string) {
    assert.deepEqual(shape.visible.length, 1, JSON.stringify(shape));
    assert.match(shape.visible[0]!, new RegExp(`^✓ crash probe · .* · ${result}$`));
    assert.doesNotMatch(shape.visible[0]!, /<|key="/);
    assert.equal(shape.synthetic.length, 1);
    assert.ok(shape.synthetic[0]!.includes(`<background-task-notification key="${taskId}:0" task_id="${taskId}"`), shape.synthetic[0]);
  }

  it("killed between claim and send: sent once after the restart", async () => {
    const result = "claimed then crashed";
    const { first, parent, outbox } = await crashAt("exit-after-claim", result);
    assert.equal(outbox.task.status, "completed");
    assert.ok(outbox.notification.claim, "the crash left the notification claimed");
    assert.equal(outbox.notification.deliveredAt, undefined);

    const after = await restartAndCount(first, parent, result);
    assert.equal(after.notes.length, 1, after.notes.join("\n---\n"));
    assert.ok(after.notes[0].includes(`key="${outbox.task.id}:0"`), after.notes[0]);
    assert.deepEqual(after.outbox.notified.map((e) => e.detail), ["woke parent"]);
    assertTwoParts(after.shape, outbox.task.id, result);
  });

  it("killed after the send but before the confirmation: not sent again after the restart", async () => {
    const result = "sent then crashed";
    const { first, parent, outbox } = await crashAt("exit-after-send", result);
    assert.ok(outbox.notification.claim, "the crash left the notification claimed");
    assert.equal(outbox.notification.deliveredAt, undefined);

    const after = await restartAndCount(first, parent, result);
    assert.equal(after.notes.length, 1, after.notes.join("\n---\n"));
    assert.deepEqual(after.outbox.notified.map((e) => e.detail), ["found in the parent, not sent again"]);
    assertTwoParts(after.shape, outbox.task.id, result);
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
