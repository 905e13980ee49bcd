import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { startStack, call, toolOutputs, waitUntil, MOCK_MODEL, queryDb, pendingPermissions, answerPermission, type Stack } from "../harness/plugin-stack.ts";
import { lastUserText, type MockModel } from "../harness/mock-model.ts";
import { startMockModel } from "../harness/mock-model.ts";

/** Proposals made and decided in the conversation, on a real OpenCode. */
describe("proposals on the real host", () => {
  let stack: Stack;
  let mock: MockModel;
  const dir = mkdtempSync(join(tmpdir(), "ocbt-proposals-"));
  const dbPath = join(dir, "tasks.db");
  after(async () => {
    await stack?.stop().catch(() => undefined);
    await mock?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The parent's model calls one tool; the answer it got. */
  const use = async (parent: string, tool: string, args: Record<string, unknown>) => {
    const before = (await toolOutputs(stack, parent, tool)).length;
    await stack.say(parent, call(tool, args));
    // A prompt to a session that a notice has woken joins that turn: the call may come after say returns.
    return waitUntil(async () => (await toolOutputs(stack, parent, tool))[before], { timeoutMs: 20_000, what: `${tool}'s answer` });
  };
  const runsOf = (id: string) => queryDb(dbPath, "SELECT * FROM automation_runs WHERE automation_id = ? ORDER BY id", id);
  /** A run's requests: its prompt starts with the automation's context line (the parent's CALL line holds the marker too). */
  const childRequests = (marker: string) => mock.requests().filter((r) => lastUserText(r).includes(marker) && lastUserText(r).startsWith("[Automation"));
  const proposal = (title: string, marker: string, every = "2s") => ({
    title, reason: `Because ${title} matters.`, prompt: `${marker} REPLY checked`, triggers: [{ every }],
  });

  it("task_propose stores a proposal that never fires; approving it through task_update asks the user, then it fires", async () => {
    mock = await startMockModel();
    stack = await startStack({ mock, pluginOptions: { dbPath, pollIntervalMs: 500 } });
    const parent = await stack.newSession("proposals");
    const out = await use(parent, "task_propose", proposal("watch the deploy", "PROPOSED-DEPLOY"));
    assert.match(out, /Proposed automation (au\w+) "watch the deploy": stored disabled; nothing runs until the user approves it/);
    assert.match(out, /Now tell the user what you proposed/);
    const id = /automation (au\w+)/.exec(out)![1]!;
    assert.deepEqual(await pendingPermissions(stack), [], "proposing asks nothing");
    await new Promise((r) => setTimeout(r, 5000));
    assert.equal(runsOf(id).length, 0, "a proposal never fires (every 2s, 5 s waited)");
    assert.equal(childRequests("PROPOSED-DEPLOY").length, 0);
    assert.match(await use(parent, "task_list", {}), /Proposals waiting for the user \(1;[^\n]*\n- au\w+ "watch the deploy": every 2s; why: Because watch the deploy matters\./);

    void stack.server.client.session.promptAsync({
      path: { id: parent }, body: { agent: "build", model: MOCK_MODEL, parts: [{ type: "text", text: call("task_update", { id, enabled: true }) }] },
    });
    const asked = await waitUntil(async () => (await pendingPermissions(stack)).find((p) => p.sessionID === parent), { timeoutMs: 15_000, what: "permission prompt" });
    assert.equal(asked.permission, "background_automation");
    assert.match(asked.patterns.join(), new RegExp(`^${id}@v1-[0-9a-f]{12}$`), "its id and the version approved (issue 33), never its title");
    assert.equal(runsOf(id).length, 0, `nothing runs before the user answers: ${JSON.stringify(runsOf(id))} ${JSON.stringify(queryDb(dbPath, "SELECT enabled, proposal, run_count FROM automations WHERE id = ?", id))}`);
    await answerPermission(stack, asked.id, "once");
    const approved = await waitUntil(async () => (await toolOutputs(stack, parent, "task_update"))[0], { timeoutMs: 15_000, what: "task_update output" });
    assert.match(approved, /Approved proposal au\w+ "watch the deploy": enabled/);
    await waitUntil(async () => childRequests("PROPOSED-DEPLOY").length > 0, { timeoutMs: 15_000, what: "the approved automation's first run" });
    const row = queryDb(dbPath, "SELECT enabled, proposal FROM automations WHERE id = ?", id)[0];
    assert.deepEqual({ enabled: row.enabled, proposal: row.proposal }, { enabled: 1, proposal: null });
    // Paused from a session of its own: the parent is being woken by the automation's reports, and a
    // prompt that joins such a turn is answered after the report, not as a tool call.
    assert.match(await use(await stack.newSession("pause it"), "task_update", { id, enabled: false }), /paused/);
  });

  it("task_delete rejects: the same proposal is refused during the cooldown; a fourth pending one is refused", async () => {
    const parent = await stack.newSession("rejections");
    const out = await use(parent, "task_propose", proposal("nightly dependency audit", "AUDIT", "1d"));
    const id = /automation (au\w+)/.exec(out)![1]!;
    assert.match(await use(parent, "task_delete", { id }), /Rejected proposal au\w+ "nightly dependency audit": deleted; proposing the same again is refused for 24 h/);
    assert.match(await use(parent, "task_propose", proposal("nightly dependency audit", "AUDIT", "1d")), /rejected 0 h ago \(via conversation\)/);
    assert.match(await use(parent, "task_propose", { ...proposal("audit the dependencies", "AUDIT", "1d") }), /rejected 0 h ago/, "same triggers and prompt, another title");
    const decisions = queryDb(dbPath, "SELECT outcome, via FROM proposal_decisions WHERE proposal_id = ?", id);
    assert.deepEqual(decisions.map((d) => `${d.outcome} ${d.via}`), ["rejected conversation"]);

    for (const n of [1, 2, 3]) assert.match(await use(parent, "task_propose", proposal(`job ${n}`, `JOB${n} unique words ${"x".repeat(n)}`, `${n}h`)), /Proposed automation/);
    assert.match(await use(parent, "task_propose", proposal("job 4", "JOB4", "4h")), /3 proposals already wait for the user's decision \(at most 3\)/);
    assert.equal(queryDb(dbPath, "SELECT count(*) AS n FROM automations WHERE proposal IS NOT NULL")[0].n, 3);
  });
});
