import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { startStack, call, waitUntil, queryDb, MOCK_MODEL, type Stack } from "../harness/plugin-stack.ts";
import { defaultResponder, lastUserText, startMockModel, type MockModel, type MockRequest } from "../harness/mock-model.ts";

/**
 * Discovery on a real OpenCode: with `every` and `idle` of a few seconds, no run while the user
 * writes, one after the idle time; its task_propose calls become proposals the user's session is
 * told of; a run that proposes nothing tells nobody.
 */
describe("discovery on the real host", () => {
  let stack: Stack;
  let mock: MockModel;
  const dir = mkdtempSync(join(tmpdir(), "ocbt-discovery-"));
  const dbPath = join(dir, "tasks.db");
  after(async () => {
    await stack?.stop().catch(() => undefined);
    await mock?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const isDiscovery = (req: MockRequest) => lastUserText(req).includes("You look for background work");
  let proposeNext = true;
  const responder = (req: MockRequest) => {
    if (!req.isTitle && isDiscovery(req) && !req.body.messages.some((m) => m.role === "tool")) {
      if (!proposeNext) return { text: "Nothing to propose." };
      proposeNext = false;
      return defaultResponder({ ...req, body: { ...req.body, messages: [...req.body.messages, { role: "user", content: call("task_propose", {
        title: "nightly test run", reason: "Tests are only run by hand; a nightly run catches breakage early.", prompt: "Run the tests and report failures", triggers: [{ cron: "0 3 * * *" }],
      }) }] } });
    }
    return defaultResponder(req);
  };
  const runs = () => queryDb(dbPath, "SELECT * FROM automation_runs WHERE automation_id = 'audiscovery' ORDER BY id");
  const started = () => runs().filter((r) => r.run_no !== null);

  it("no run while the user writes; one after the idle time; its proposal is told to the user's session", async () => {
    mock = await startMockModel({ responder });
    stack = await startStack({ mock, pluginOptions: { dbPath, pollIntervalMs: 500, discovery: { every: "4s", idle: "3s" } } });
    const user = await stack.newSession("the user's session");
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(started().length, 0, "nobody has written yet: no run");
    // A message every second, each sent without waiting for its answer (as a user typing on).
    const until = Date.now() + 7000;
    while (Date.now() < until) {
      await stack.server.client.session.promptAsync({ path: { id: user }, body: { agent: "build", model: MOCK_MODEL, parts: [{ type: "text", text: "REPLY working on it" }] } });
      await new Promise((r) => setTimeout(r, 1000));
    }
    assert.equal(started().length, 0, "the user wrote every second for 7 s (idle 3s): no run");
    await waitUntil(async () => (await stack.server.client.session.status()).data?.[user] === undefined, { timeoutMs: 20_000, what: "the user's session idle" });
    const wroteAt = Math.max(...(await stack.messages(user)).filter((m) => m.info.role === "user").map((m) => m.info.time.created as number));
    const first = await waitUntil(async () => started().find((r) => r.task_id), { timeoutMs: 15_000, what: "a discovery run" });
    assert.ok(first.started_at - wroteAt >= 3000, `started ${first.started_at - wroteAt} ms after the user's last message (idle 3s)`);
    assert.equal(first.fired_by, "idle");
    const task = queryDb(dbPath, "SELECT * FROM tasks WHERE id = ?", first.task_id)[0];
    assert.equal(task.agent, "plan", "a read-only agent by default");
    assert.match(task.prompt, /only through task_propose/);
    assert.match(task.prompt, /\[Workspace(\]|: skipped)/, "the discovery run gets the workspace block too");

    const notice = await waitUntil(async () => (await stack.notifications(user)).find((n) => n.includes("discovery proposed")), { timeoutMs: 20_000, what: "the proposals notice" });
    assert.match(notice, /discovery proposed 1 automation\(s\)[\s\S]*"nightly test run" \(cron 0 3 \* \* \* \(UTC\)\): Tests are only run by hand/);
    const proposal = queryDb(dbPath, "SELECT * FROM automations WHERE title = 'nightly test run'")[0];
    assert.equal(proposal.enabled, 0);
    assert.equal(JSON.parse(proposal.proposal).by, "discovery");
    assert.equal(proposal.report_to, user, "it reports to the user's most recent session");
  });

  it("a run that proposes nothing tells nobody", async () => {
    const user = queryDb(dbPath, "SELECT report_to FROM automations WHERE id = 'audiscovery'")[0].report_to;
    const noticesBefore = (await stack.notifications(user)).length;
    const second = await waitUntil(async () => started().find((r) => r.run_no === 2 && r.status === "completed"), { timeoutMs: 30_000, what: "a second discovery run" });
    assert.equal(second.summary, "Nothing to propose.");
    assert.equal(second.notified, 0, JSON.stringify(started().map(({ event_data: _e, ...r }) => r)));
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal((await stack.notifications(user)).length, noticesBefore, "nobody was told");
    const gaps = started().slice(1).map((r, i) => r.started_at - started()[i]!.started_at);
    assert.ok(gaps.every((g) => g >= 4000), `never more often than every 4s: ${gaps}`);
  });
});
