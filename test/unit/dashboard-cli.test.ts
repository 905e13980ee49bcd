import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import { runningTask } from "../store/task-fixtures.ts";

const BIN = fileURLToPath(new URL("../../bin/opencode-background-tasks.mjs", import.meta.url));

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
    const path = join(dataHome, "opencode-background-tasks", "tasks.db");
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
      assert.match(waiting, /opencode-background-tasks&quot;\] \}/, "the opencode.json line");
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
});
