import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync, readFileSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { launchTask, startStack, call, taskIdsIn, toolOutputs, waitUntil, MOCK_MODEL, type Stack } from "../harness/plugin-stack.ts";
import { startMockModel, type MockModel } from "../harness/mock-model.ts";

/** Durable state across a SIGKILL of the OpenCode server, and a database that cannot be opened. */
describe("restart and database faults on the real host", () => {
  let mock: MockModel;
  const stacks: Stack[] = [];
  const start = async (options: Parameters<typeof startStack>[0] = {}) => {
    mock ??= await startMockModel();
    const stack = await startStack({ mock, ...options });
    stacks.push(stack);
    return stack;
  };
  after(async () => {
    for (const stack of stacks) await stack.stop().catch(() => undefined);
    await mock?.close();
  });

  const launch = (stack: Stack, parent: string, prompt: string) => launchTask(stack, parent, { description: "survivor", prompt });
  const restart = async (stack: Stack) => {
    await stack.server.kill();
    stack.events.close();
    return start({ reuse: { homeDir: stack.server.homeDir, projectDir: stack.server.projectDir } });
  };

  it("a child killed mid-run is resumed after restart and the parent hears the result once; an earlier result survives", async () => {
    const first = await start();
    const parent = await first.newSession("parent: restart");
    const done = await launch(first, parent, "REPLY finished before the crash");
    await waitUntil(async () => (await first.notifications(parent)).some((n) => n.includes(done)), { timeoutMs: 15_000, what: "first result" });
    await waitUntil(async () => (await first.server.client.session.status()).data?.[parent] === undefined, { what: "parent idle" });
    const running = await launch(first, parent, "SLOW 20000\nREPLY never, the server dies");
    await waitUntil(() => mock.inFlight().current > 0, { what: "the child's model call in flight" });

    const second = await restart(first);
    const note = await waitUntil(async () => (await second.notifications(parent)).find((n) => n.includes(running) && n.includes('status="completed"')), { timeoutMs: 30_000, what: "completion after restart" });
    assert.match(note, /ok: OpenCode was restarted/);
    const notes = await second.notifications(parent);
    assert.equal(notes.filter((n) => n.includes(running) && n.includes('status="completed"')).length, 1);
    assert.ok(notes.some((n) => n.includes(running) && n.includes("interrupted by an OpenCode restart")), "the parent was told about the interruption");

    await second.say(parent, call("background_output", { task_id: done }));
    const [out] = (await toolOutputs(second, parent, "background_output")).slice(-1);
    assert.match(out, /Status: completed/);
    assert.match(out, /finished before the crash/);
  });

  it("a notification pending at the kill is delivered exactly once after restart", async () => {
    const first = await start();
    const parent = await first.newSession("parent: outbox");
    // The parent stays busy (a slow model) while the child finishes, so the notification is held.
    // Its answer after the launch takes 5 s: the child's turn and the 300 ms below fit in that on a
    // loaded machine (with 1.5 s the parent could go idle first and get the notice).
    const line = call("background_task", { description: "quick", prompt: "REPLY held result", agent: "general" });
    void first.server.client.session.promptAsync({ path: { id: parent }, body: { agent: "build", model: MOCK_MODEL, parts: [{ type: "text", text: `SLOW 5000\n${line}` }] } });
    const id = await waitUntil(async () => taskIdsIn((await toolOutputs(first, parent, "background_task")).join("\n"))[0], { timeoutMs: 20_000, what: "launch" });
    await waitUntil(async () => (await first.messages(id)).some((m) => m.info.role === "assistant" && m.info.time?.completed), { what: "child done" });
    // A fixed wait: a held notification leaves no event to await (it is only a row in the outbox).
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await first.notifications(parent)).length, 0, "held while the parent is busy");

    const second = await restart(first);
    await waitUntil(async () => (await second.notifications(parent)).some((n) => n.includes("held result")), { timeoutMs: 20_000, what: "held notification delivered" });
    // Logged once no task is unsettled and the outbox is empty: nothing is left that could notify again.
    await waitUntil(() => second.server.logs().includes("background tasks idle"), { timeoutMs: 20_000, what: "the plugin idle" });
    assert.equal((await second.notifications(parent)).filter((n) => n.includes("held result")).length, 1);
  });

  it("a corrupt database: every tool says what to do, nothing is deleted, and OpenCode keeps working", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ocbt-corrupt-"));
    const dbPath = join(dir, "tasks.db");
    const garbage = Buffer.from("this is not a sqlite database ".repeat(200));
    writeFileSync(dbPath, garbage);
    const stack = await start({ pluginOptions: { dbPath } });
    const parent = await stack.newSession("parent: corrupt db");
    await stack.say(parent, call("background_list", {}));
    const [out] = await toolOutputs(stack, parent, "background_list");
    assert.match(out, /unavailable/);
    assert.ok(out.includes(dbPath), `the message names the path: ${out}`);
    assert.match(out, /(move|rename|dbPath)/i);
    assert.deepEqual(readFileSync(dbPath), garbage, "the file is untouched");
    await stack.say(parent, "REPLY still working");
    const messages = await stack.messages(parent);
    assert.ok(messages.some((m) => m.info.role === "assistant" && JSON.stringify(m.parts).includes("still working")));
    rmSync(dir, { recursive: true, force: true });
  });
});
