import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { main } from "../../src/bin/main.ts";
import { CommandRepository } from "../../src/store/command-repository.ts";
import { openSqlite } from "../../src/store/sqlite-driver.ts";
import { launchTask, call, pluginDbPath, startStack, taskIdsIn, toolOutputs, waitUntil, type Stack } from "../harness/plugin-stack.ts";
import { freePort } from "../harness/opencode-server.ts";


/** A GitHub token a child's command carries: the task page must show it masked. */
const LEAKED = `ghp_${"Zx9".repeat(12)}`;

/** Option dashboardPort: the same dashboard, served by the plugin inside OpenCode (under Bun). */
describe("the dashboard served from inside OpenCode", () => {
  let stack: Stack;
  let port: number;
  let cookie = "";
  before(async () => {
    port = await freePort();
    // Priced: $3 / $15 per million input / output tokens, so each request below costs $0.027; the
    // machine's daily budget is passed by the second test's task.
    stack = await startStack({ pluginOptions: { dashboardPort: port, dailyBudgetUsd: 0.06 }, modelCost: { input: 3, output: 15 } });
  });
  after(async () => {
    await stack?.stop();
  });

  it("logs that it runs and how to open it, never its token; `dashboard` on that port prints a signed-in URL for it; the cookie is named after the port", async () => {
    const parent = await stack.newSession("parent: in-plugin dashboard");
    const id = await launchTask(stack, parent, { description: "seen from inside", prompt: "REPLY inside ok" });
    const hint = `The background tasks dashboard runs at http://127.0.0.1:${port}/. To open it signed in, run \`opencode-errands dashboard --open --port ${port}\` in a terminal.`;
    await waitUntil(() => stack.server.logs().includes(hint), { timeoutMs: 10_000, what: "the dashboard's line in the log" });
    // The user's terminal: the CLI finds the running dashboard and prints its URL, token included.
    let printed = "";
    const db = pluginDbPath(stack.server);
    assert.equal(await main(["dashboard", "--port", String(port), "--db", db], { stdout: (t) => void (printed += t), stderr: (t) => void (printed += t), env: {}, now: Date.now }), 0);
    const url = await waitUntil(() => new RegExp(`(http://127\\.0\\.0\\.1:${port}/\\?token=([\\w-]+))`).exec(printed), { timeoutMs: 10_000, what: "the URL printed by the CLI" });
    assert.match(printed, new RegExp(`already runs on port ${port} \\(an OpenCode serves it`));
    const token = url[2]!;
    const signIn = await fetch(url[1]!, { redirect: "manual" });
    assert.equal(signIn.status, 303);
    cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
    assert.equal(cookie, `obt_session_${port}=${token}`, "the cookie's name carries the port");
    const home = await waitUntil(async () => {
      const text = await (await fetch(`http://127.0.0.1:${port}/`, { headers: { cookie } })).text();
      return text.includes(id) ? text : undefined;
    }, { timeoutMs: 10_000, what: "the task on the page" });
    assert.match(home, /seen from inside/);
    assert.equal((await fetch(`http://127.0.0.1:${port}/`, { headers: { cookie: `obt_dashboard=${token}` } })).status, 401, "the old, port-less cookie name is not taken");
    const refused = await fetch(`http://127.0.0.1:${port}/command`, { method: "POST", headers: { cookie, "content-type": "application/x-www-form-urlencoded" }, body: "kind=cancel_task&project=p&target=t" });
    assert.equal(refused.status, 403, "no Origin: refused under Bun too");
    // Neither the server's output nor its log files (which the model can read) nor any event carry the token.
    const files = await stack.server.logFile();
    assert.ok(files.includes(hint), "the log files under $XDG_DATA_HOME/opencode/log have the line too");
    const logs = stack.server.logs() + files;
    assert.ok(!logs.includes(token), "the token is in no log line");
    assert.doesNotMatch(logs, /token=/);
    assert.ok(!JSON.stringify(stack.events.events).includes(token), "nor in any event (toasts included)");
  });

  it("a task's page shows its spend and each model request with its tool calls, live while it runs, the token in a command masked", async () => {
    assert.ok(cookie, "signed in by the test before");
    const parent = await stack.newSession("parent: spend on the page");
    const usage = JSON.stringify({ input: 4000, output: 1000 });
    // A no-op carrying the token: the child's answer (its result) echoes tool outputs, this one has none.
    const command = JSON.stringify({ command: `: cloned with ${LEAKED}`, description: "clone" });
    const id = await launchTask(stack, parent, { description: "costly child", prompt: `SLOW 1500\nUSAGE ${usage}\nCALL bash ${command}` });
    const get = async (path: string) => (await fetch(`http://127.0.0.1:${port}${path}`, { headers: { cookie } })).text();
    const href = await waitUntil(async () => new RegExp(`href="(/task\\?project=[^"&]+&amp;id=${id})"`).exec(await get("/"))?.[1]?.replace("&amp;", "&"), { what: "the task linked from home" });
    // While the child waits for its second answer, its first request is on the page already.
    const running = await waitUntil(async () => {
      const page = await get(href);
      return /id="task-status"><span class="status s-running">/.test(page) && page.includes('data-request="') ? page : undefined;
    }, { timeoutMs: 15_000, what: "the first request listed while the task runs" });
    assert.equal((running.match(/<tr data-request=/g) ?? []).length, 1);
    const done = await waitUntil(async () => {
      const page = await get(href);
      // The spend line reads the database, where a request's row lands up to 100 ms after it is recorded (written behind).
      return /id="task-status"><span class="status s-completed">/.test(page) && (page.match(/<tr data-request=/g) ?? []).length === 2 && /in 2 requests/.test(page) ? page : undefined;
    }, { timeoutMs: 20_000, what: "the task completed with two requests, both in its spend" });
    assert.match(done, /id="task-spend"><span class="spend">\$0\.054 · 10\.0k tok<\/span> in 2 requests/);
    assert.match(done, /<td>mock\/mock-model<\/td><td class="spend">\$0\.027 · 5\.0k tok<\/td><td>in 4\.0k · out 1\.0k<\/td>/);
    assert.match(done, /<details class="tool-call" data-key="[^"]+"><summary>bash <span class="status s-completed">completed<\/span>/);
    const requests = done.slice(done.indexOf('id="requests"'));
    assert.match(requests, /cloned with ghp_\[MASKED\]/, "the command, masked");
    assert.ok(!done.includes(LEAKED), "the token itself is nowhere on the page: not in a request, nor in the prompt the parent wrote");
    assert.doesNotMatch(done, /Served by the command line/);
    const ids = [...done.matchAll(/<tr data-request="([^"]+)"/g)].map((m) => m[1]!);
    assert.deepEqual([...ids].sort(), ids, "message ids sort as the session orders them: the command line's view orders the database's rows by id");
    const home = await get("/");
    assert.match(home, new RegExp(`data-task="${id}"[\\s\\S]*?<td class="spend">\\$0\\.054 · 10\\.0k tok</td>`), "home lists its spend");
    assert.match(home, /<span class="tag">budget<\/span> <a href="#spend">Daily budget reached: \$0\.\d{3} of \$0\.060 spent today by background work \(option dailyBudgetUsd, all projects\)/);
  });
});

/** Two OpenCode processes on one project and database: the dashboard's cancel must reach the one running the child. */
describe("a dashboard command with two OpenCode processes on one database", () => {
  let first: Stack;
  let second: Stack;
  before(async () => {
    first = await startStack();
    second = await startStack({ mock: first.mock, reuse: { homeDir: first.server.homeDir, projectDir: first.server.projectDir } });
  });
  after(async () => {
    await second?.stop();
    await first?.stop();
  });

  it("cancel is applied once, by the process whose server runs the child, and stops it", async () => {
    const parent = await first.newSession("parent: two processes");
    await first.say(parent, call("background_task", { description: "runs in the first", prompt: "SLOW 30000\nREPLY two-process child", agent: "general" }));
    const [id] = taskIdsIn((await toolOutputs(first, parent, "background_task")).at(-1)!);
    assert.ok(id);
    const child = () => first.mock.requests().find((r) => JSON.stringify(r.body.messages).includes("two-process child") && !JSON.stringify(r.body.messages).includes("CALL"));
    await waitUntil(child, { what: "the child's model request" });
    const db = openSqlite(pluginDbPath(first.server));
    try {
      const inbox = new CommandRepository(db);
      const project = String(db.prepare("SELECT project_id FROM tasks WHERE id = ?").get(id!)!.project_id);
      const command = inbox.submit(project, "cancel_task", id!, Date.now());
      const done = await waitUntil(() => {
        const c = inbox.get(command.id)!;
        return c.status === "done" || c.status === "failed" ? c : undefined;
      }, { timeoutMs: 10_000, what: "the command applied" });
      assert.equal(done.status, "done", done.outcome);
      await waitUntil(() => child()?.aborted, { timeoutMs: 5000, what: "the child's model request aborted (the owner applied it)" });
      assert.equal(db.prepare("SELECT status FROM tasks WHERE id = ?").get(id!)!.status, "cancelled");
    } finally {
      db.close();
    }
  });
});
