import assert from "node:assert/strict";
import { request } from "node:http";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Task } from "../../src/core/task.ts";
import { startDashboard, type Dashboard } from "../../src/dashboard/dashboard-server.ts";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import { openSqlite } from "../../src/store/sqlite-driver.ts";
import { runningTask } from "../store/task-fixtures.ts";

const T0 = Date.UTC(2026, 10, 26, 8, 0, 0);
const TOKEN = "test-token-0123456789";

type Reply = { status: number; headers: Record<string, string | string[] | undefined>; body: string };

/** One raw request, so each header (Origin, Host, Cookie) is exactly what the test says. */
function send(d: Dashboard, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Reply> {
  const url = new URL(d.origin);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path, headers: { host: url.host, ...headers } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** The session cookie, named after the dashboard's port (set once it listens). */
let cookie = "";
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const FORM = "application/x-www-form-urlencoded";

function task(id: string, overrides: Partial<Task> = {}): Task {
  return runningTask(id, { description: `Task ${id}`, prompt: `Do ${id}`, createdAt: T0, promptedAt: T0, progress: { toolCalls: 2, lastTools: ["read", "bash"], lastActivityAt: T0 }, ...overrides });
}

describe("dashboard server", () => {
  let dir: string;
  let db: string;
  let d: Dashboard;
  let store: SqliteTaskStore;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "dash-"));
    db = join(dir, "tasks.db");
    store = SqliteTaskStore.open({ path: db, projectId: "proj_a" });
    store.save(task("ses_run1", { description: "Live <b>one</b>" }));
    store.save(task("ses_done1", { status: "completed", result: "<script>window.pwned = 1</script> & more", settledAt: T0 + 5000 }));
    store.save(task("ses_fail1", { status: "error", error: "provider said no", settledAt: Date.now() - 1000 }));
    store.appendEvent({ taskId: "ses_done1", at: T0, kind: "launched", detail: "general" });
    store.save(task("ses_perm1", { description: "Needs a yes" }));
    store.appendEvent({ taskId: "ses_perm1", at: T0 + 1, kind: "permission-asked", detail: "bash: rm -rf build" });
    store.save(task("ses_perm2", { description: "Answered already" }));
    store.appendEvent({ taskId: "ses_perm2", at: T0 + 1, kind: "permission-asked", detail: "bash: ls" });
    store.appendEvent({ taskId: "ses_perm2", at: T0 + 2, kind: "permission-replied" });
    d = await startDashboard({ dbPath: db, port: 0, host: "127.0.0.1", token: TOKEN, livePollMs: 20 });
    cookie = `obt_session_${new URL(d.origin).port}=${TOKEN}`;
  });

  after(async () => {
    await d?.close();
    store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("refuses every page without the token cookie", async () => {
    for (const path of ["/", "/task?project=proj_a&id=ses_run1", "/events", "/app.js"]) {
      const reply = await send(d, "GET", path);
      assert.equal(reply.status, 401, path);
      assert.match(reply.body, /open the URL the dashboard command printed/);
    }
  });

  it("refuses a wrong token and a wrong cookie", async () => {
    assert.equal((await send(d, "GET", "/?token=nope")).status, 401);
    assert.equal((await send(d, "GET", "/", { cookie: `obt_session_${new URL(d.origin).port}=nope` })).status, 401);
  });

  it("takes only the cookie named after its own port: another dashboard's (another port) or the old unbound name is refused", async () => {
    const port = Number(new URL(d.origin).port);
    for (const other of [`obt_session_${port + 1}=${TOKEN}`, `obt_dashboard=${TOKEN}`, `obt_session_=${TOKEN}`]) {
      assert.equal((await send(d, "GET", "/", { cookie: other })).status, 401, other);
    }
    assert.equal((await send(d, "GET", "/", { cookie: `obt_session_${port + 1}=x; ${cookie}` })).status, 200, "both cookies sent: its own is found");
  });

  it("exchanges the token in the URL for an HttpOnly SameSite=Strict cookie and drops it from the URL", async () => {
    const reply = await send(d, "GET", `/?project=proj_a&token=${TOKEN}`);
    assert.equal(reply.status, 303);
    assert.equal(reply.headers.location, "/?project=proj_a");
    const set = String(reply.headers["set-cookie"]);
    assert.match(set, new RegExp(`^obt_session_${new URL(d.origin).port}=${TOKEN};`));
    assert.match(set, /HttpOnly/);
    assert.match(set, /SameSite=Strict/);
  });

  it("refuses a Host header that is not the server's own (DNS rebinding)", async () => {
    const reply = await send(d, "GET", "/", { cookie, host: "evil.example:80" });
    assert.equal(reply.status, 403);
  });

  it("refuses a POST without an Origin, or from another origin, and stores no command", async () => {
    const body = form({ kind: "cancel_task", project: "proj_a", target: "ses_run1", back: "/" });
    const none = await send(d, "POST", "/command", { cookie, "content-type": FORM }, body);
    const other = await send(d, "POST", "/command", { cookie, "content-type": FORM, origin: "http://evil.example" }, body);
    const noCookie = await send(d, "POST", "/command", { "content-type": FORM, origin: d.origin }, body);
    assert.deepEqual([none.status, other.status, noCookie.status], [403, 403, 401]);
    assert.equal(commandCount(), 0);
  });

  it("refuses other methods, and sends no CORS headers", async () => {
    const options = await send(d, "OPTIONS", "/command", { cookie, origin: "http://evil.example", "access-control-request-method": "POST" });
    assert.equal(options.status, 405);
    const page = await send(d, "GET", "/", { cookie, origin: "http://evil.example" });
    assert.equal(page.status, 200);
    for (const r of [options, page]) assert.ok(!Object.keys(r.headers).some((h) => h.startsWith("access-control-")), "no CORS header");
    assert.match(String(page.headers["content-security-policy"]), /script-src 'self'/);
  });

  it("refuses a bad command form with the reason, and a back URL off this server", async () => {
    const bad = await send(d, "POST", "/command", { cookie, "content-type": FORM, origin: d.origin }, form({ kind: "format_disk", project: "p", target: "t" }));
    assert.equal(bad.status, 400);
    assert.match(bad.body, /Unknown command 'format_disk'/);
    const ok = await send(d, "POST", "/command", { cookie, "content-type": FORM, origin: d.origin }, form({ kind: "cancel_task", project: "proj_a", target: "ses_run1", back: "//evil.example/" }));
    assert.equal(ok.status, 303);
    assert.equal(ok.headers.location, "/");
  });

  it("stores a command from the page as pending in the inbox", async () => {
    const before = commandCount();
    const reply = await send(d, "POST", "/command", { cookie, "content-type": FORM, origin: d.origin }, form({ kind: "pause", project: "proj_a", target: "au_x", back: "/?project=proj_a" }));
    assert.equal(reply.status, 303);
    assert.equal(reply.headers.location, "/?project=proj_a");
    assert.equal(commandCount(), before + 1);
    const home = await send(d, "GET", "/", { cookie });
    assert.match(home.body, /data-command="\d+"[\s\S]*Pause[\s\S]*au_x[\s\S]*pending/);
  });

  it("home lists running tasks with progress, recent results and what needs attention, with the count in the title", async () => {
    const home = await send(d, "GET", "/", { cookie });
    assert.equal(home.status, 200);
    assert.match(home.body, /Live &lt;b&gt;one&lt;\/b&gt;/);
    assert.match(home.body, /2 tool calls, last: read, bash/);
    assert.match(home.body, /<title>\(2\) Home/);
    assert.match(home.body, /Needs a yes is waiting for permission: bash: rm -rf build/);
    assert.ok(!home.body.includes("waiting for permission: bash: ls"), "a replied permission is no longer waiting");
    assert.match(home.body, /provider said no/);
    assert.ok(!home.body.includes("<script>window.pwned"), "result preview escaped");
  });

  it("the task page shows the result as text, never as markup", async () => {
    const page = await send(d, "GET", "/task?project=proj_a&id=ses_done1", { cookie });
    assert.equal(page.status, 200);
    assert.match(page.body, /&lt;script&gt;window.pwned = 1&lt;\/script&gt; &amp; more/);
    assert.ok(!page.body.includes("<script>window"));
    assert.match(page.body, /opencode --session ses_done1/);
    assert.match(page.body, /launched/);
    assert.equal((await send(d, "GET", "/task?project=proj_a&id=ses_nope", { cookie })).status, 404);
  });

  it("tells open pages within a poll when the database changes", async () => {
    const events = await openEvents(d);
    try {
      store.save(task("ses_run2"));
      const message = await events.next();
      assert.match(message, /^event: change\ndata: \d+/);
    } finally {
      events.close();
    }
  });

  function commandCount(): number {
    const conn = openSqlite(db, { readonly: true });
    try {
      const has = conn.prepare("SELECT 1 FROM sqlite_master WHERE name = 'dashboard_commands'").get();
      return has ? Number(conn.prepare("SELECT count(*) AS n FROM dashboard_commands").get()!.n) : 0;
    } finally {
      conn.close();
    }
  }
});

/** The event stream as a queue of messages (blank-line separated), skipping the retry line. */
async function openEvents(d: Dashboard): Promise<{ next(): Promise<string>; close(): void }> {
  const url = new URL(d.origin);
  const queue: string[] = [];
  let wake: (() => void) | undefined;
  let buffer = "";
  const req = request({ host: url.hostname, port: url.port, path: "/events", headers: { host: url.host, cookie } });
  await new Promise<void>((resolve, reject) => {
    req.on("response", (res) => {
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        buffer += chunk;
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const message = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (message.startsWith("event:")) queue.push(message);
        }
        wake?.();
      });
      resolve();
    });
    req.on("error", reject);
    req.end();
  });
  return {
    async next() {
      while (queue.length === 0) await new Promise<void>((r) => (wake = r));
      return queue.shift()!;
    },
    close: () => req.destroy(),
  };
}

describe("dashboard server on every interface (--host 0.0.0.0)", () => {
  it("answers to this machine's addresses and refuses other Host names", async () => {
    const dir = mkdtempSync(join(tmpdir(), "dash-any-"));
    const db = join(dir, "tasks.db");
    SqliteTaskStore.open({ path: db, projectId: "p" }).close();
    const d = await startDashboard({ dbPath: db, port: 0, host: "0.0.0.0", token: TOKEN });
    cookie = `obt_session_${new URL(d.origin).port}=${TOKEN}`;
    try {
      const port = new URL(d.origin).port;
      assert.equal((await send(d, "GET", "/", { cookie, host: `127.0.0.1:${port}` })).status, 200);
      assert.equal((await send(d, "GET", "/", { cookie, host: `localhost:${port}` })).status, 200);
      assert.equal((await send(d, "GET", "/", { cookie })).status, 200, `the printed origin ${d.origin}`);
      assert.equal((await send(d, "GET", "/", { cookie, host: `rebound.example:${port}` })).status, 403);
    } finally {
      await d.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("dashboard server before the plugin has created the database", () => {
  let dir: string;
  let db: string;
  let d: Dashboard;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "dash-none-"));
    db = join(dir, "not-yet", "tasks.db");
    d = await startDashboard({ dbPath: db, port: 0, host: "127.0.0.1", token: TOKEN, livePollMs: 20 });
    cookie = `obt_session_${new URL(d.origin).port}=${TOKEN}`;
  });

  after(async () => {
    await d?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves a page that says what will be here and how to get there, and creates nothing", async () => {
    const home = await send(d, "GET", "/", { cookie });
    assert.equal(home.status, 200);
    assert.match(home.body, /No background tasks yet/);
    assert.ok(home.body.includes(db), "names the file it waits for");
    assert.match(home.body, /opencode\.json/);
    assert.ok(home.body.includes("{ &quot;plugin&quot;: [&quot;opencode-errands&quot;] }"), "the install line");
    assert.match(home.body, /ask the agent for a background task/);
    assert.match(home.body, /<main id="main" data-live>/, "live, so the home page replaces it");
    assert.equal((await send(d, "GET", "/task?project=p&id=ses_x", { cookie })).status, 404);
    assert.equal((await send(d, "GET", "/app.js", { cookie })).status, 200);
    assert.equal(existsSync(join(dir, "not-yet")), false, "not even the folder");
  });

  it("refuses a command while there is no database, and does not create one", async () => {
    const body = form({ kind: "cancel_task", project: "p", target: "ses_x", back: "/" });
    const reply = await send(d, "POST", "/command", { cookie, "content-type": FORM, origin: d.origin }, body);
    assert.equal(reply.status, 409);
    assert.match(reply.body, /no database yet, so there is nothing to command/);
    assert.equal(existsSync(db), false);
  });

  it("picks the database up when the plugin creates it: the open page hears a change, the next load shows the task", async () => {
    const events = await openEvents(d);
    try {
      mkdirSync(join(dir, "not-yet"));
      writeFileSync(db, ""); // the instant between the plugin creating the file and migrating it
      assert.match((await send(d, "GET", "/", { cookie })).body, /No background tasks yet/);
      const store = SqliteTaskStore.open({ path: db, projectId: "proj_new" });
      store.save(task("ses_first", { description: "The very first task" }));
      store.close();
      assert.match(await events.next(), /^event: change\ndata: \d+/);
    } finally {
      events.close();
    }
    const home = await send(d, "GET", "/", { cookie });
    assert.equal(home.status, 200);
    assert.doesNotMatch(home.body, /No background tasks yet/);
    assert.match(home.body, /The very first task/);
    assert.match(home.body, /Running and queued \(1\)/);
    const command = await send(d, "POST", "/command", { cookie, "content-type": FORM, origin: d.origin }, form({ kind: "cancel_task", project: "proj_new", target: "ses_first", back: "/" }));
    assert.equal(command.status, 303, "commands work once it exists");
  });
});
