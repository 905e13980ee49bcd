import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { main } from "../../src/bin/main.ts";
import { CommandRepository } from "../../src/store/command-repository.ts";
import { openSqlite } from "../../src/store/sqlite-driver.ts";
import { launchTask, call, pluginDbPath, startStack, taskIdsIn, toolOutputs, waitUntil, type Stack } from "../harness/plugin-stack.ts";
import { freePort } from "../harness/opencode-server.ts";


/** Option dashboardPort: the same dashboard, served by the plugin inside OpenCode (under Bun). */
describe("the dashboard served from inside OpenCode", () => {
  let stack: Stack;
  let port: number;
  before(async () => {
    port = await freePort();
    stack = await startStack({ pluginOptions: { dashboardPort: port } });
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
    const cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
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
