import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { main } from "../../src/cli/main.ts";
import { startDashboard, type Dashboard } from "../../src/dashboard/dashboard-server.ts";
import { allText, lastUserText } from "../harness/mock-model.ts";
import { launchBrowser, screenshotDir } from "../harness/browser.ts";
import { call, pendingPermissions, pluginDbPath, queryDb, startStack, toolOutputs, waitUntil, type Stack } from "../harness/plugin-stack.ts";

const UI_WAIT_MS = 15_000;

/**
 * Proposals decided outside the conversation, on a real OpenCode: the parent's model calls
 * task_propose, the user approves or rejects on the dashboard (a real browser) or with the CLI,
 * and the plugin applies it from the command inbox. The permission `background_automation` stays
 * at the plugin's default ("ask"), so a prompt raised by approving would show in the server's
 * pending permissions.
 */
describe("proposals on the dashboard and the command line, on a real OpenCode", () => {
  let stack: Stack;
  let dash: Dashboard;
  let browser: Browser;
  let page: Page;
  let parent: string;
  let db: string;

  before(async () => {
    stack = await startStack({ pluginOptions: { pollIntervalMs: 500, channels: { "team-chat": { url: "http://127.0.0.1:9/hook", format: "slack" } } } });
    parent = await stack.newSession("parent: proposals");
    db = pluginDbPath(stack.server);
    await waitUntil(() => existsSync(db), { what: "the plugin's database" });
    dash = await startDashboard({ dbPath: db, port: 0, host: "127.0.0.1" });
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1100, height: 900 } })).newPage();
    assert.equal((await page.goto(dash.url))?.status(), 200);
  });

  after(async () => {
    await browser?.close();
    await dash?.close();
    await stack?.stop();
  });

  /** The parent's model calls task_propose; returns the tool's answer. */
  const propose = async (args: Record<string, unknown>) => {
    const before = (await toolOutputs(stack, parent, "task_propose")).length;
    await stack.say(parent, call("task_propose", args));
    return waitUntil(async () => (await toolOutputs(stack, parent, "task_propose"))[before], { what: "task_propose's answer" });
  };
  const idIn = (out: string) => {
    const id = /Proposed automation (au\w+)/.exec(out)?.[1];
    assert.ok(id, `no proposal in: ${out}`);
    return id;
  };
  /** A run's child request: its prompt carries the marker, and it is not the parent's CALL line. */
  const runRequest = (marker: string) => stack.mock.requests().find((r) => lastUserText(r).includes(marker) && !allText(r).includes("CALL task_propose"));
  const decisions = (id: string) => queryDb<{ outcome: string; via: string }>(db, "SELECT outcome, via FROM proposal_decisions WHERE proposal_id = ?", id);
  /** Waits for the run's child request, checking all along that OpenCode asked the user nothing. */
  const firesWithoutPrompt = async (marker: string) => {
    await waitUntil(async () => {
      assert.deepEqual(await pendingPermissions(stack), [], "no permission prompt");
      return runRequest(marker);
    }, { timeoutMs: 20_000, what: `a run of the approved proposal (${marker})` });
    assert.deepEqual(await pendingPermissions(stack), []);
    // The run's notice reaches the parent; a next CALL said before it could be answered as the notice's turn.
    await waitUntil(async () => (await stack.notifications(parent)).some((text) => text.includes(marker)), { timeoutMs: 20_000, what: `the notice of ${marker}` });
  };

  it("Approve on the page enables a proposal with no permission prompt, and it fires", async () => {
    const id = idIn(await propose({
      title: "Watch the deploy", reason: "You started a deploy; a failure would go unnoticed.", prompt: "REPLY deploy watch ran",
      triggers: [{ every: "2s" }], max_runs: 1,
    }));
    await page.goto(dash.origin + "/");
    const item = page.locator(`#attention [data-proposal="${id}"]`);
    await item.waitFor({ timeout: UI_WAIT_MS });
    assert.match(await item.innerText(), /You started a deploy; a failure would go unnoticed\.[\s\S]*every 2s[\s\S]*REPLY deploy watch ran/);
    assert.match(await page.title(), /^\(\d+\) 1 proposal · Home/);
    assert.match(await page.locator(`[data-automation="${id}"]`).innerText(), /proposed/);
    // Absence has no event to wait for: longer than one period of its trigger.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    assert.equal(runRequest("deploy watch ran"), undefined, "a proposal does not fire");
    await page.screenshot({ path: join(screenshotDir(), "proposal.png"), fullPage: true });
    await item.locator('button[data-kind="approve"]').click();
    await firesWithoutPrompt("deploy watch ran");
    assert.deepEqual(decisions(id), [{ outcome: "approved", via: "dashboard" }]);
    await item.waitFor({ state: "detached", timeout: UI_WAIT_MS });
    await page.locator(".commands tr", { hasText: id }).locator(".s-done").waitFor({ timeout: UI_WAIT_MS });
  });

  it("Reject on the page records the rejection, and the same proposal is then refused", async () => {
    const args = { title: "Nightly lint", reason: "Lint errors piled up last week.", prompt: "REPLY lint ran", triggers: [{ every: "1h" }] };
    const id = idIn(await propose(args));
    await page.goto(dash.origin + "/");
    const item = page.locator(`#attention [data-proposal="${id}"]`);
    await item.waitFor({ timeout: UI_WAIT_MS });
    page.once("dialog", (dialog) => void dialog.accept());
    await item.locator('button[data-kind="reject"]').click();
    await item.waitFor({ state: "detached", timeout: UI_WAIT_MS });
    await waitUntil(() => decisions(id).length > 0, { what: "the rejection recorded" });
    assert.deepEqual(decisions(id), [{ outcome: "rejected", via: "dashboard" }]);
    assert.deepEqual(queryDb(db, "SELECT id FROM automations WHERE id = ?", id), [], "deleted");
    assert.match(await propose(args), /Refused: the same proposal \("Nightly lint"\) was rejected 0 h ago \(via dashboard\)/);
  });

  it("the CLI lists a proposal, and `proposals approve` makes it fire", async () => {
    const id = idIn(await propose({
      title: "Check CI on main", reason: "CI on main failed twice this week.", prompt: "REPLY ci check ran", triggers: [{ every: "2s" }], max_runs: 1,
    }));
    const cli = async (...argv: string[]) => {
      let stdout = "";
      let stderr = "";
      const code = await main([...argv, "--db", db], { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), env: {}, now: Date.now });
      return { code, stdout, stderr };
    };
    const listed = await cli("proposals");
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`^${id}  "Check CI on main"  version [0-9a-f]{32}\n[^]*  Proposed by: +the agent in conversation ${parent}, [^]*  Why: +CI on main failed twice this week\\.\n  Trigger 1: +every 2s\n  Prompt: +\\| REPLY ci check ran\n`));
    const refused = await cli("proposals", "approve", id.slice(0, 8));
    assert.equal(refused.code, 1, "no terminal, no --yes");
    assert.match(refused.stderr, /stdin is not one\. Run it in a terminal, or add --yes/);
    const approved = await cli("proposals", "approve", id.slice(0, 8), "--yes");
    assert.deepEqual([approved.code, approved.stderr], [0, ""]);
    assert.match(approved.stdout, /\nApproved "Check CI on main": enabled; it runs at its triggers/);
    await firesWithoutPrompt("ci check ran");
    assert.deepEqual(decisions(id), [{ outcome: "approved", via: "cli" }]);
    assert.match((await cli("proposals")).stdout, /No proposals wait for a decision/);
  });

  it("issue 22: the card shows a 300-character command trigger, an expect command and a channel in full; an Approve after the agent changed the proposal (task_update) is refused and nothing runs", async () => {
    const head = `git status --porcelain${" ".repeat(40)}; touch pwned-by-trigger`;
    const command = `${head} # ${"x".repeat(300 - head.length - 3)}`;
    const expectCommand = "test -f tidy.txt   && touch pwned-by-expect";
    const id = idIn(await propose({
      title: "Tidy the tree", reason: "The tree keeps getting dirty.", prompt: "REPLY tidy ran",
      triggers: [{ command, every: "2s" }], expect: { command: expectCommand }, channels: ["team-chat"], max_runs: 1,
    }));
    await page.goto(dash.origin + "/");
    const card = page.locator(`#attention [data-proposal="${id}"]`);
    await card.waitFor({ timeout: UI_WAIT_MS });
    assert.equal(command.length, 300);
    const trigger = card.locator('[data-field="trigger"] code.exact');
    assert.equal(await trigger.innerText(), command, "the command whole, its 40 spaces kept");
    // No DOM types in this project: the browser's getComputedStyle, reached through globalThis.
    type Styles = { getComputedStyle(el: unknown): { whiteSpace: string } };
    assert.equal(await trigger.evaluate((el) => (globalThis as unknown as Styles).getComputedStyle(el).whiteSpace), "pre-wrap");
    assert.equal(await card.locator('[data-field="trigger"] .ws').getAttribute("title"), "40 spaces");
    assert.equal(await card.locator('[data-field="expect-command"] code.exact').innerText(), expectCommand);
    assert.equal(await card.locator('[data-field="channels"] code.exact').innerText(), "team-chat");
    await page.screenshot({ path: join(screenshotDir(), "proposal-in-full.png"), fullPage: true });

    // While the user reads, the agent changes what the proposal runs.
    const updates = (await toolOutputs(stack, parent, "task_update")).length;
    await stack.say(parent, call("task_update", { id, prompt: "REPLY tidy changed, and more" }));
    const updated = await waitUntil(async () => (await toolOutputs(stack, parent, "task_update"))[updates], { what: "task_update's answer" });
    assert.doesNotMatch(updated, /denied|refused|rejected/i, updated);
    assert.equal(queryDb(db, "SELECT prompt FROM automations WHERE id = ?", id)[0].prompt, "REPLY tidy changed, and more");
    // The page refreshes live but keeps the version the user saw, marked as changed.
    await card.locator(".changed-note").waitFor({ timeout: UI_WAIT_MS });
    assert.match(await card.innerText(), /REPLY tidy ran/);
    await card.locator('button[data-kind="approve"]').click();
    const row = page.locator(".commands tr", { hasText: id });
    await row.locator(".s-failed").waitFor({ timeout: UI_WAIT_MS });
    assert.match(await row.innerText(), /changed since you looked; look again/);

    assert.deepEqual(queryDb(db, "SELECT enabled, proposal IS NOT NULL AS proposal FROM automations WHERE id = ?", id), [{ enabled: 0, proposal: 1 }]);
    assert.deepEqual(decisions(id), []);
    // Absence has no event to wait for: longer than one period of its trigger.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    assert.deepEqual(queryDb(db, "SELECT id FROM automation_runs WHERE automation_id = ?", id), [], "no run rows");
    assert.equal(runRequest("tidy"), undefined, "no model request for it");
    for (const file of ["pwned-by-trigger", "pwned-by-expect"]) assert.ok(!existsSync(join(stack.server.projectDir, file)), file);
    assert.deepEqual(await pendingPermissions(stack), []);
    // Looking again shows what it is now, under a new version.
    await page.reload();
    await card.waitFor({ timeout: UI_WAIT_MS });
    assert.match(await card.innerText(), /REPLY tidy changed, and more/);
    assert.equal(await card.locator(".changed-note").count(), 0);
  });
});
