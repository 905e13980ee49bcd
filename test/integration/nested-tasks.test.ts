import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { startStack, call, taskIdsIn, toolOutputs, waitUntil, pluginDbPath, queryDb, type Stack } from "../harness/plugin-stack.ts";
import { defaultResponder, lastUserText, messageText, startMockModel, trailingToolResults, type MockModel, type MockRequest } from "../harness/mock-model.ts";

/**
 * A child that launches background tasks of its own (grandchildren) on the real host. Its scripted
 * prompt says what it answers: `INTERIM <text>` right after launching (the interim answer), and
 * `ON_NEWS <text>` whenever a notification wakes it.
 */
function firstUserText(req: MockRequest): string {
  const first = req.body.messages.find((m) => m.role === "user");
  return first ? messageText(first) : "";
}

function responder(req: MockRequest) {
  if (req.isTitle) return defaultResponder(req);
  const own = firstUserText(req);
  const interim = /^INTERIM (.*)$/m.exec(lastUserText(req));
  if (interim && trailingToolResults(req).length > 0) return { text: interim[1] };
  const onNews = /^ON_NEWS (.*)$/m.exec(own);
  if (onNews && lastUserText(req).includes("<background-task-notification")) return { text: onNews[1] };
  return defaultResponder(req);
}

/** The prompt of a child that launches `grandchildren` (their prompts) and answers as scripted. */
function childPrompt(marker: string, grandchildren: string[], interim: string, onNews: string): string {
  return [
    marker,
    ...grandchildren.map((prompt, i) => call("background_task", { description: `grandchild ${i + 1}`, prompt, agent: "general" })),
    `INTERIM ${interim}`,
    `ON_NEWS ${onNews}`,
  ].join("\n");
}

describe("nested tasks on the real host", () => {
  let mock: MockModel;
  const stacks: Stack[] = [];
  const start = async (options: Parameters<typeof startStack>[0] = {}) => {
    mock ??= await startMockModel({ responder });
    const stack = await startStack({ mock, pluginOptions: { pollIntervalMs: 500 }, ...options });
    stacks.push(stack);
    return stack;
  };
  after(async () => {
    for (const stack of stacks.reverse()) await stack.stop().catch(() => undefined);
    await mock?.close();
  });
  let shared: Stack | undefined;
  const stack = async () => (shared ??= await start());

  async function launchChild(s: Stack, parent: string, prompt: string): Promise<string> {
    await s.say(parent, call("background_task", { description: "child", prompt, agent: "general" }));
    const [id] = taskIdsIn((await toolOutputs(s, parent, "background_task")).join("\n"));
    assert.ok(id, "the child was launched");
    return id;
  }

  /** The tasks the child launched itself (their ids), once they exist. */
  const grandchildrenOf = (s: Stack, child: string, n: number) =>
    waitUntil(async () => {
      const ids = taskIdsIn((await toolOutputs(s, child, "background_task")).join("\n"));
      return ids.length >= n ? ids : undefined;
    }, { timeoutMs: 20_000, what: `${n} grandchildren launched` });

  const statusOf = (s: Stack, id: string) => queryDb<{ status: string; result: string | null; error: string | null }>(pluginDbPath(s.server), "SELECT status, result, error FROM tasks WHERE id = ?", id)[0];
  const told = async (s: Stack, parent: string, child: string) => (await s.notifications(parent)).filter((n) => n.includes(`task_id="${child}"`));
  const parentIdle = (s: Stack, parent: string) =>
    waitUntil(async () => (await s.server.client.session.status()).data?.[parent] === undefined, { timeoutMs: 20_000, what: "parent idle" });

  it("the parent is told the child's final answer once, never the interim one; background_output holds it", async () => {
    const s = await stack();
    const parent = await s.newSession("parent: nested");
    const child = await launchChild(s, parent, childPrompt("CHILD-1", ["SLOW 4000\nREPLY the helper found 7"], "Launched a helper; waiting for its result", "Final: the helper found 7, so the answer is 7"));
    const [grandchild] = await grandchildrenOf(s, child, 1);
    await waitUntil(async () => (await s.messages(child)).some((m) => m.info.role === "assistant" && m.parts.some((p) => p.type === "text" && p.text.includes("waiting for its result"))), { timeoutMs: 15_000, what: "the interim answer" });
    await parentIdle(s, parent);
    await s.say(parent, call("background_output", { task_id: child }));
    const [waiting] = (await toolOutputs(s, parent, "background_output")).slice(-1);
    assert.match(waiting, /Status: running/);
    assert.match(waiting, new RegExp(`waiting for 1 background task of its own \\(${grandchild}\\)`));
    await s.say(parent, call("background_list", {}));
    const [list] = (await toolOutputs(s, parent, "background_list")).slice(-1);
    assert.match(list, new RegExp(`\\n  └ ${grandchild}`), `the grandchild stands under its task:\n${list}`);

    const note = await waitUntil(async () => (await told(s, parent, child))[0], { timeoutMs: 30_000, what: "the parent told" });
    assert.match(note, /status="completed"/);
    assert.match(note, /the answer is 7/);
    assert.doesNotMatch(note, /waiting for its result/);
    await parentIdle(s, parent);
    assert.equal((await told(s, parent, child)).length, 1, "told once");
    assert.equal(statusOf(s, grandchild).status, "completed");
    await s.say(parent, call("background_output", { task_id: child }));
    const [out] = (await toolOutputs(s, parent, "background_output")).slice(-1);
    assert.match(out, /Status: completed/);
    assert.match(out, /the answer is 7/);
  });

  it("two grandchildren, one fails: the child hears both and its answer is the result", async () => {
    const s = await stack();
    const parent = await s.newSession("parent: one fails");
    const child = await launchChild(s, parent, childPrompt("CHILD-2", ["FAIL 400 the helper broke", "SLOW 2500\nREPLY helper two found 3"], "Launched two helpers", "Decided: one helper failed, the other found 3"));
    const [g1, g2] = await grandchildrenOf(s, child, 2);
    const note = await waitUntil(async () => (await told(s, parent, child))[0], { timeoutMs: 40_000, what: "the parent told" });
    assert.match(note, /Decided: one helper failed, the other found 3/);
    const heard = (await s.notifications(child)).join("\n");
    assert.match(heard, new RegExp(`task_id="${g1}"`));
    assert.match(heard, new RegExp(`task_id="${g2}"`));
    assert.equal(statusOf(s, g1).status, "error");
    assert.equal(statusOf(s, g2).status, "completed");
    await parentIdle(s, parent);
    assert.equal((await told(s, parent, child)).length, 1);
  });

  it("cancelling the child while its grandchild runs cancels both, and no model request follows", async () => {
    const s = await stack();
    const parent = await s.newSession("parent: cancel");
    const child = await launchChild(s, parent, childPrompt("CHILD-3", ["GRAND-3\nSLOW 60000\nREPLY never"], "Waiting for the slow helper", "never"));
    const [grandchild] = await grandchildrenOf(s, child, 1);
    await waitUntil(() => mock.requests().some((r) => firstUserText(r).startsWith("GRAND-3") && !r.aborted), { timeoutMs: 15_000, what: "the grandchild's model call" });
    await parentIdle(s, parent);
    await s.say(parent, call("background_cancel", { task_id: child }));
    const cancelledAt = Date.now();
    const [out] = (await toolOutputs(s, parent, "background_cancel")).slice(-1);
    assert.match(out, new RegExp(`${child}: cancelled, and its own background tasks first: ${grandchild}`));
    assert.equal(statusOf(s, child).status, "cancelled");
    assert.equal(statusOf(s, grandchild).status, "cancelled");
    assert.match(statusOf(s, child).error ?? "", new RegExp(`cancelled too: ${grandchild}`));
    await waitUntil(() => mock.inFlight().current === 0, { timeoutMs: 10_000, what: "no model call in flight" });
    // A fixed window: a request that does not come leaves no event to wait for.
    await new Promise((r) => setTimeout(r, 1500));
    const late = mock.requests().filter((r) => r.at > cancelledAt && /^(CHILD|GRAND)-3/.test(firstUserText(r)));
    assert.deepEqual(late.map((r) => firstUserText(r).split("\n")[0]), [], "no model request for the child or grandchild after the cancel");
  });

  it("a settled child woken again gives the parent exactly one follow-up", async () => {
    const s = await stack();
    const parent = await s.newSession("parent: again");
    const child = await launchChild(s, parent, "REPLY first answer");
    await waitUntil(async () => (await told(s, parent, child))[0], { timeoutMs: 20_000, what: "the first notice" });
    await parentIdle(s, parent);
    // A late notice into the settled child's session wakes it; its new answer must reach the parent.
    await s.say(child, "A late notice arrived.\nREPLY second answer after the late notice");
    const followUp = await waitUntil(async () => (await told(s, parent, child)).find((n) => n.includes("answered again")), { timeoutMs: 20_000, what: "the follow-up" });
    assert.match(followUp, /second answer after the late notice/);
    assert.match(followUp, new RegExp(`${child} answered again`));
    await parentIdle(s, parent);
    await waitUntil(() => s.server.logs().includes("background tasks idle"), { timeoutMs: 20_000, what: "the plugin idle" });
    assert.equal((await told(s, parent, child)).filter((n) => n.includes("answered again")).length, 1, "exactly one follow-up");
    assert.equal(statusOf(s, child).result, "second answer after the late notice");
  });

  it("SIGKILL while the grandchild runs: after the restart the chain completes and the parent is told once", async () => {
    const first = await start();
    const parent = await first.newSession("parent: nested restart");
    const child = await launchChild(first, parent, childPrompt("CHILD-5", ["GRAND-5\nSLOW 20000\nREPLY never, the server dies"], "Waiting for the helper", "Final after the restart"));
    await grandchildrenOf(first, child, 1);
    await waitUntil(async () => (await first.messages(child)).some((m) => m.info.role === "assistant" && m.parts.some((p) => p.type === "text" && p.text.includes("Waiting for the helper"))), { timeoutMs: 15_000, what: "the interim answer" });
    await waitUntil(() => mock.requests().some((r) => firstUserText(r).startsWith("GRAND-5") && mock.inFlight().current > 0), { what: "the grandchild's model call in flight" });
    assert.equal(statusOf(first, child).status, "running", "the child waits for its grandchild");

    await first.server.kill();
    first.events.close();
    const second = await start({ reuse: { homeDir: first.server.homeDir, projectDir: first.server.projectDir } });
    const note = await waitUntil(async () => (await told(second, parent, child)).find((n) => n.includes('status="completed"')), { timeoutMs: 40_000, what: "the chain completed after the restart" });
    assert.match(note, /Final after the restart/);
    assert.doesNotMatch(note, /Waiting for the helper/);
    await parentIdle(second, parent);
    await waitUntil(() => second.server.logs().includes("background tasks idle"), { timeoutMs: 20_000, what: "the plugin idle" });
    assert.equal((await told(second, parent, child)).filter((n) => n.includes('status="completed"')).length, 1, "told once");
  });
});

