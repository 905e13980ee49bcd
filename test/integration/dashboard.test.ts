import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { basename, join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { startDashboard, type Dashboard } from "../../src/dashboard/dashboard-server.ts";
import { CommandRepository } from "../../src/store/command-repository.ts";
import { openSqlite } from "../../src/store/sqlite-driver.ts";
import { launchBrowser, screenshotDir } from "../harness/browser.ts";
import { launchTask, call, pluginDbPath, startStack, toolOutputs, waitUntil, type Stack } from "../harness/plugin-stack.ts";

/** Playwright's own waits poll the page; this bounds each one (the page itself updates within a second). */
const UI_WAIT_MS = 15_000;

describe("the dashboard in a real browser, on a real OpenCode", () => {
  let stack: Stack;
  let dash: Dashboard;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let parent: string;
  let shots: string;

  before(async () => {
    // Priced, so that the pages (and the screenshots) show dollars: $3 / $15 per million input / output tokens.
    stack = await startStack({ config: { permission: { background_automation: "allow", bash: "ask" } }, modelCost: { input: 3, output: 15 } });
    parent = await stack.newSession("parent: dashboard");
    const db = pluginDbPath(stack.server);
    await waitUntil(() => existsSync(db), { what: "the plugin's database" });
    dash = await startDashboard({ dbPath: db, port: 0, host: "127.0.0.1" });
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
    page = await context.newPage();
    const response = await page.goto(dash.url);
    assert.equal(response?.status(), 200, "the token URL signs in");
    assert.ok(!page.url().includes("token="), "the token leaves the address bar");
    shots = screenshotDir();
  });

  after(async () => {
    await browser?.close();
    await dash?.close();
    await stack?.stop();
  });

  const launch = (description: string, prompt: string) => launchTask(stack, parent, { description, prompt });

  const statusOf = (section: string, id: string) => page.locator(`#${section} [data-task="${id}"] .task-status`);

  it("lists a running task and shows it completed when it settles, without a reload", async () => {
    await page.goto(dash.origin + "/");
    await page.evaluate(() => ((globalThis as unknown as { notReloaded: boolean }).notReloaded = true));
    const id = await launch("slow survey", "SLOW 2500\nREPLY survey finished");
    await statusOf("active", id).filter({ hasText: "running" }).waitFor({ timeout: UI_WAIT_MS });
    await statusOf("recent", id).filter({ hasText: "completed" }).waitFor({ timeout: UI_WAIT_MS });
    assert.equal(await page.evaluate(() => (globalThis as unknown as { notReloaded?: boolean }).notReloaded), true, "updated in place");
    assert.ok(Number(await page.locator("body").getAttribute("data-refreshes")) >= 2, "live refreshes happened");
    await page.goto(dash.origin + "/"); // the header is drawn per page load; the project has a task only now
    const named = page.locator('select[name="project"] option[value]:not([value=""])');
    assert.deepEqual(
      [await named.textContent(), await named.getAttribute("title")],
      [basename(stack.server.projectDir), stack.server.projectDir],
      "the selector names the project by its folder, not its id",
    );
  });

  it("cancel on the page stops the child on the real host", async () => {
    const id = await launch("endless job", "SLOW 60000\nREPLY never seen");
    await page.goto(dash.origin + "/");
    await statusOf("active", id).filter({ hasText: "running" }).waitFor({ timeout: UI_WAIT_MS });
    // The child's request carries the prompt; the parent's carries it inside its CALL line.
    const childRequest = () => stack.mock.requests().find((r) => JSON.stringify(r.body.messages).includes("never seen") && !JSON.stringify(r.body.messages).includes("CALL background_task"));
    await waitUntil(childRequest, { what: "the child's model request" });
    await page.locator(`#active [data-task="${id}"] button[data-kind="cancel_task"]`).click();
    await statusOf("recent", id).filter({ hasText: "cancelled" }).waitFor({ timeout: UI_WAIT_MS });
    await page.locator(".commands tr", { hasText: id }).locator(".s-done").waitFor({ timeout: UI_WAIT_MS });
    await waitUntil(async () => (await stack.server.client.session.status()).data?.[id] === undefined, { timeoutMs: 10_000, what: "the child session idle on the host" });
    await waitUntil(() => childRequest()?.aborted, { timeoutMs: 10_000, what: "the child's model request aborted" });
  });

  it("a child waiting for a permission is listed under needs attention, and the title counts it", async () => {
    await page.goto(dash.origin + "/");
    const id = await launch("asks first", `CALL bash ${JSON.stringify({ command: "echo hi", description: "say hi" })}`);
    const item = page.locator("#attention li", { hasText: "asks first is waiting for permission" });
    await item.waitFor({ timeout: UI_WAIT_MS });
    assert.match(await page.title(), /^\(\d+\) Home/);
    await page.locator(`#active [data-task="${id}"] .permission`).waitFor({ timeout: UI_WAIT_MS });
    await page.locator(`#active [data-task="${id}"] button[data-kind="cancel_task"]`).click();
    await item.waitFor({ state: "detached", timeout: UI_WAIT_MS });
  });

  it("shows a result containing <script> as text", async () => {
    const id = await launch("markup result", "REPLY <script>window.pwned = 1</script><b>not bold</b>");
    await page.goto(dash.origin + "/");
    await statusOf("recent", id).filter({ hasText: "completed" }).waitFor({ timeout: UI_WAIT_MS });
    await page.locator(`#recent [data-task="${id}"] a`).first().click();
    const result = page.locator("#result");
    await result.waitFor({ timeout: UI_WAIT_MS });
    assert.match(await result.innerText(), /<script>window\.pwned = 1<\/script><b>not bold<\/b>/);
    assert.equal(await page.locator("#result script, #result b").count(), 0);
    assert.equal(await page.evaluate(() => (globalThis as unknown as { pwned?: number }).pwned), undefined);
    assert.match(await page.locator("code", { hasText: "opencode --session" }).innerText(), new RegExp(`opencode --session ${id}`));
    await page.screenshot({ path: join(shots, "task.png"), fullPage: true });
  });

  it("pause and run now on an automation's page, and the run appears in its history", async () => {
    await stack.say(parent, call("task_create", { title: "Nightly <check>", prompt: "REPLY nightly all green", triggers: [{ every: "1h" }] }));
    const [created] = await toolOutputs(stack, parent, "task_create");
    const automationId = /Created automation (au\w+)/.exec(created ?? "")?.[1];
    assert.ok(automationId, `no automation id in: ${created}`);
    await page.goto(dash.origin + "/");
    await page.locator(`[data-automation="${automationId}"] a`).click();
    assert.match(await page.locator("h1").innerText(), /Nightly <check>/);
    await page.locator('button[data-kind="pause"]').click();
    await page.locator("#automation-controls .s-paused").waitFor({ timeout: UI_WAIT_MS });
    await page.locator("#automation-controls .commands .s-done").first().waitFor({ timeout: UI_WAIT_MS });
    await page.locator('button[data-kind="run_now"]').click();
    const row = page.locator("#history tr[data-run]", { hasText: "manual" });
    await row.locator(".s-completed").waitFor({ timeout: UI_WAIT_MS });
    assert.match(await row.innerText(), /nightly all green/);
    assert.equal(await page.locator("#chart rect.bar").count(), 1);
    await page.screenshot({ path: join(shots, "automation.png"), fullPage: true });
  });

  it("a command for a project with no OpenCode running stays pending, and the page says so", async () => {
    const db = openSqlite(pluginDbPath(stack.server));
    let id: number;
    try {
      id = new CommandRepository(db).submit("project-with-no-opencode", "cancel_task", "ses_elsewhere", Date.now()).id;
    } finally {
      db.close();
    }
    await page.goto(dash.origin + "/");
    const row = page.locator(`.commands tr[data-command="${id}"]`);
    await row.getByText("no OpenCode with project project-with-no-opencode open has picked it up").waitFor({ timeout: UI_WAIT_MS });
    assert.match(await row.locator(".status").innerText(), /pending/);
    await page.screenshot({ path: join(shots, "home.png"), fullPage: true });
  });

  it("the token is required: a fresh browser without it gets nothing", async () => {
    const stranger = await browser.newContext();
    try {
      const other = await stranger.newPage();
      const home = await other.goto(dash.origin + "/");
      assert.equal(home?.status(), 401);
      assert.match(await other.locator("body").innerText(), /Not signed in/);
      const wrong = await other.goto(dash.origin + "/?token=guess");
      assert.equal(wrong?.status(), 401);
    } finally {
      await stranger.close();
    }
  });
});
