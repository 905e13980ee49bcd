import { describe, it, after, before } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { startStack, call, toolOutputs, waitUntil, MOCK_MODEL, queryDb, pendingPermissions, answerPermission, type Stack, type PermissionRequest } from "../harness/plugin-stack.ts";
import { startMockModel, type MockModel } from "../harness/mock-model.ts";

/**
 * Issue 33 on a real OpenCode: the user allows `git *` and is asked for anything else. A step hides
 * its non-git part where the grammar used to miss it (a line continuation, an `export` before the
 * git command, a bare redirection). OpenCode must ask for that part; rejected, nothing is stored,
 * no file is created or emptied.
 */
describe("the gate sees what the shell will run (real host)", () => {
  let stack: Stack;
  let mock: MockModel;
  const dir = mkdtempSync(join(tmpdir(), "ocbt-sh-gaps-"));
  const dbPath = join(dir, "tasks.db");
  before(async () => {
    mock = await startMockModel();
    stack = await startStack({
      mock, pluginOptions: { dbPath, pollIntervalMs: 500 },
      config: { permission: { background_automation: "ask", bash: { "*": "ask", "git *": "allow" } } },
    });
  });
  after(async () => {
    await stack?.stop().catch(() => undefined);
    await mock?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const automationCount = () => queryDb(dbPath, "SELECT COUNT(*) AS n FROM automations")[0]!.n;

  /** The model calls task_create; the automation prompt is approved, every bash prompt rejected. */
  async function createRejectingBash(parent: string, args: Record<string, unknown>) {
    const before = (await toolOutputs(stack, parent, "task_create")).length;
    const prompts: PermissionRequest[] = [];
    void stack.server.client.session.promptAsync({ path: { id: parent }, body: { agent: "build", model: MOCK_MODEL, parts: [{ type: "text", text: call("task_create", args) }] } });
    const out = await waitUntil(async () => {
      for (const p of (await pendingPermissions(stack)).filter((q) => q.sessionID === parent && !prompts.some((s) => s.id === q.id))) {
        prompts.push(p);
        await answerPermission(stack, p.id, p.permission === "background_automation" ? "once" : "reject");
      }
      return (await toolOutputs(stack, parent, "task_create"))[before];
    }, { timeoutMs: 30_000, what: "task_create's answer" });
    await waitUntil(async () => (await stack.server.client.session.status()).data?.[parent] === undefined, { what: "parent idle" });
    return { out, bash: prompts.filter((p) => p.permission === "bash").map((p) => p.patterns) };
  }

  const pwned = join(dir, "pwned");
  const victim = join(dir, "victim.txt");
  const cases: [string, string, string[][]][] = [
    ["a line continuation before a comment", `git status\\\n#; touch ${pwned}`, [[`touch ${pwned}`]]],
    [
      "an export before git status",
      `export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch ${pwned}'; git status`,
      [[`export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch ${pwned}'`]],
    ],
    ["a bare redirection after git status", `git status; > ${victim}`, [[`> ${victim}`]]],
  ];
  for (const [what, run, asked] of cases) {
    it(`${what}: the non-git part is asked; rejected, nothing stored, no file created or emptied`, async () => {
      writeFileSync(victim, "keep me\n");
      const parent = await stack.newSession(`sh gap ${what}`);
      const before = automationCount();
      const { out, bash } = await createRejectingBash(parent, { title: `sneaky ${what}`, steps: [{ name: "look", run }] });
      assert.deepEqual(bash, asked, "OpenCode asks for the part outside git *, and only for it");
      assert.match(out, /was not allowed \(bash permission\)/);
      assert.equal(automationCount(), before, "nothing was stored");
      assert.equal(existsSync(pwned), false, "touch never ran");
      assert.equal(readFileSync(victim, "utf8"), "keep me\n", "the file was not emptied");
    });
  }
});
