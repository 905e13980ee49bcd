import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import { runningTask } from "../store/task-fixtures.ts";
import { startDashboard } from "../../src/dashboard/dashboard-server.ts";
import { serveDashboardFromPlugin } from "../../src/dashboard/serve-from-plugin.ts";
import { tokenFilePath, writeTokenFile } from "../../src/dashboard/token-file.ts";
import type { Host } from "../../src/host/host.ts";
import { freePort } from "../harness/opencode-server.ts";


async function waitUntil<T>(check: () => T | undefined | false, { what, timeoutMs = 5000 }: { what: string; timeoutMs?: number }): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const BIN = fileURLToPath(new URL("../../bin/opencode-errands.mjs", import.meta.url));

/** Starts the real CLI and resolves with the URL it prints. */
async function startCli(args: string[], env: Record<string, string> = {}): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = spawn(process.execPath, [BIN, "dashboard", ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  let output = "";
  child.stdout!.on("data", (c) => (output += c));
  child.stderr!.on("data", (c) => (output += c));
  const url = await new Promise<string>((resolve, reject) => {
    const look = () => {
      const match = /(http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)/.exec(output);
      if (match) resolve(match[1]!);
    };
    child.stdout!.on("data", look);
    child.on("exit", (code) => reject(new Error(`the CLI exited with ${code}: ${output}`)));
  });
  return { child, url, output: () => output };
}

describe("the dashboard command", () => {
  let dir: string;
  let db: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "dash-cli-"));
    db = join(dir, "tasks.db");
    SqliteTaskStore.open({ path: db, projectId: "p" }).close();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("prints a URL with a token that signs a browser in, serves pages, and stops on SIGTERM", async () => {
    const cli = await startCli(["--db", db, "--port", "0"]);
    try {
      const signIn = await fetch(cli.url, { redirect: "manual" });
      assert.equal(signIn.status, 303);
      const cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
      const home = await fetch(new URL("/", cli.url), { headers: { cookie } });
      assert.equal(home.status, 200);
      assert.match(await home.text(), /Running and queued/);
      assert.equal((await fetch(new URL("/", cli.url))).status, 401);
    } finally {
      cli.child.kill("SIGTERM");
    }
    const [code] = await once(cli.child, "exit");
    assert.equal(code, 0);
  });

  it("says which port is taken and how to pick another", async () => {
    const first = await startCli(["--db", db, "--port", "0"]);
    try {
      const port = new URL(first.url).port;
      const second = spawn(process.execPath, [BIN, "dashboard", "--db", db, "--port", port], { stdio: ["ignore", "pipe", "pipe"] });
      let stderr = "";
      second.stderr!.on("data", (c) => (stderr += c));
      const [code] = await once(second, "exit");
      assert.equal(code, 1);
      assert.match(stderr, new RegExp(`Port ${port} is taken: pass --port <another>`));
    } finally {
      first.child.kill("SIGTERM");
      await once(first.child, "exit");
    }
  });

  it("starts before the plugin has created the default database, and shows it once the plugin has, without a restart", async () => {
    const dataHome = join(dir, "xdg");
    const path = join(dataHome, "opencode-errands", "errands.db");
    const cli = await startCli(["--port", "0"], { XDG_DATA_HOME: dataHome });
    try {
      assert.ok(cli.output().includes(`Dashboard for ${path}`), cli.output());
      assert.match(cli.output(), /no database there yet: the page says how to get one/);
      const signIn = await fetch(cli.url, { redirect: "manual" });
      const cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
      const before = await fetch(new URL("/", cli.url), { headers: { cookie } });
      assert.equal(before.status, 200);
      const waiting = await before.text();
      assert.match(waiting, /No background tasks yet/);
      assert.match(waiting, /opencode-errands&quot;\] \}/, "the opencode.json line");
      assert.equal(existsSync(dataHome), false, "the dashboard creates no file or folder");

      const store = SqliteTaskStore.open({ path, projectId: "proj_first" }); // as the plugin does when OpenCode starts
      store.save(runningTask("ses_first", { description: "First task ever" }));
      store.close();
      const after = await (await fetch(new URL("/", cli.url), { headers: { cookie } })).text();
      assert.match(after, /First task ever/);
      assert.doesNotMatch(after, /No background tasks yet/);
    } finally {
      cli.child.kill("SIGTERM");
    }
    const [code] = await once(cli.child, "exit");
    assert.equal(code, 0);
  });

  it("refuses a database given with --db that does not exist, naming --db", async () => {
    const child = spawn(process.execPath, [BIN, "dashboard", "--db", join(dir, "missing.db"), "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr!.on("data", (c) => (stderr += c));
    const [code] = await once(child, "exit");
    assert.equal(code, 1);
    assert.match(stderr, /--db <path>/);
  });

  it("`dashboard --port N` where OpenCode serves this database's dashboard (option dashboardPort): prints a signed-in URL for it, from the token file only the user can read; a stale file is not trusted", async () => {
    const served = await startDashboard({ dbPath: db, port: 0, host: "127.0.0.1" });
    const port = Number(new URL(served.origin).port);
    const run = async () => {
      const child = spawn(process.execPath, [BIN, "dashboard", "--db", db, "--port", String(port)], { stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout!.on("data", (c) => (stdout += c));
      child.stderr!.on("data", (c) => (stderr += c));
      const [code] = await once(child, "exit");
      return { code, stdout, stderr };
    };
    try {
      writeTokenFile(db, port, served.token);
      assert.equal(statSync(tokenFilePath(db, port)).mode & 0o777, 0o600);
      const out = await run();
      assert.deepEqual([out.code, out.stderr], [0, ""]);
      assert.match(out.stdout, new RegExp(`already runs on port ${port} \\(an OpenCode serves it`));
      const url = /(http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)/.exec(out.stdout)?.[1];
      assert.equal(url, served.url, "the running dashboard's own sign-in URL");
      const signIn = await fetch(url!, { redirect: "manual" });
      assert.equal(signIn.status, 303);
      assert.match(String(signIn.headers.get("set-cookie")), new RegExp(`^obt_session_${port}=`), "the cookie is named after the port");
      writeTokenFile(db, port, "a-stale-token-from-a-crashed-opencode");
      const stale = await run();
      assert.equal(stale.code, 1);
      assert.match(stale.stderr, new RegExp(`Port ${port} is taken: pass --port <another>`));
      assert.doesNotMatch(stale.stdout, /token=/);
    } finally {
      await served.close();
      rmSync(tokenFilePath(db, port), { force: true });
    }
  });
});

describe("the dashboard served by the plugin (option dashboardPort)", () => {
  it("logs and toasts that it runs and how to open it, never the token; leaves the token for the CLI in a file only the user can read, removed when it stops", async () => {
    const dir = mkdtempSync(join(tmpdir(), "dash-plugin-"));
    const db = join(dir, "tasks.db");
    SqliteTaskStore.open({ path: db, projectId: "p" }).close();
    const said: string[] = [];
    const host = {
      log: async (level: string, message: string, extra?: unknown) => void said.push(`${level} ${message} ${JSON.stringify(extra ?? {})}`),
      toast: async (t: { title: string; message: string }) => void said.push(`toast ${t.title} ${t.message}`),
    } as unknown as Host;
    const port = await freePort();
    const stop = serveDashboardFromPlugin(db, port, host);
    try {
      await waitUntil(() => said.some((s) => s.startsWith("toast")), { what: "the toast" });
      const token = readFileSync(tokenFilePath(db, port), "utf8").trim();
      assert.match(token, /^[\w-]{20,}$/);
      assert.equal(statSync(tokenFilePath(db, port)).mode & 0o777, 0o600);
      for (const line of said) assert.ok(!line.includes(token) && !line.includes("token="), `no token in: ${line}`);
      assert.ok(said.some((s) => s.includes(`The background tasks dashboard runs at http://127.0.0.1:${port}/. To open it signed in, run \`opencode-errands dashboard --open --port ${port} --db "${db}"\` in a terminal.`)), said.join("\n"));
      assert.equal((await fetch(`http://127.0.0.1:${port}/?token=${token}`, { redirect: "manual" })).status, 303, "the file holds the served token");
    } finally {
      stop();
    }
    await waitUntil(() => !existsSync(tokenFilePath(db, port)), { what: "the token file removed" });
    rmSync(dir, { recursive: true, force: true });
  });
});
