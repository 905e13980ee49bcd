import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import { launchTask, pluginDbPath, startStack, waitUntil, type Stack } from "../harness/plugin-stack.ts";

const BIN = fileURLToPath(new URL("../../bin/opencode-errands.mjs", import.meta.url));

/**
 * A new user's first minutes: `npx opencode-errands dashboard` before OpenCode has ever
 * run the plugin (no database at the default path), then OpenCode with the plugin, then a task.
 * Plain HTTP: what the page says, and that it follows the database once the plugin creates it.
 */
describe("the dashboard started before the plugin ever ran, on a real OpenCode", () => {
  let root: string;
  let homeDir: string;
  let dbPath: string;
  let cli: ChildProcess;
  let output = "";
  let url: URL;
  let cookie: string;
  let stack: Stack | undefined;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), "dash-first-"));
    homeDir = join(root, "home");
    dbPath = join(homeDir, ".local/share/opencode-errands/errands.db");
    // The CLI's default path under this home: the same file the plugin will use by default there.
    cli = spawn(process.execPath, [BIN, "dashboard", "--port", "0"], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, XDG_DATA_HOME: join(homeDir, ".local/share") },
    });
    cli.stdout!.on("data", (c) => (output += c));
    cli.stderr!.on("data", (c) => (output += c));
    url = new URL(await waitUntil(() => /(http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)/.exec(output)?.[1], { what: `the dashboard's URL (output: ${output})` }));
    const signIn = await fetch(url, { redirect: "manual" });
    assert.equal(signIn.status, 303);
    cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
  });

  after(async () => {
    await stack?.stop();
    if (cli && cli.exitCode === null) {
      cli.kill("SIGTERM");
      await once(cli, "exit");
    }
    rmSync(root, { recursive: true, force: true });
  });

  const home = async () => {
    const res = await fetch(new URL("/", url), { headers: { cookie } });
    assert.equal(res.status, 200);
    return res.text();
  };

  it("serves the empty page while there is no database, and creates none", async () => {
    assert.match(output, /no database there yet/);
    const page = await home();
    assert.match(page, /No background tasks yet/);
    assert.ok(page.includes(dbPath), "names the file it waits for");
    assert.match(page, /opencode-errands&quot;\] \}/, "the opencode.json line");
    assert.equal(existsSync(dbPath), false);
  });

  it("hears the plugin create the database, and shows the first task without a restart", async () => {
    const events = await fetch(new URL("/events", url), { headers: { cookie } });
    const stream = events.body!.getReader();
    try {
      stack = await startStack({ reuse: { homeDir } });
      assert.equal(pluginDbPath(stack.server), dbPath, "the plugin's default database is the one the dashboard waits for");
      await waitUntil(() => existsSync(dbPath), { timeoutMs: 15_000, what: "the plugin's database" });
      await readUntil(stream, "event: change", 15_000);
    } finally {
      await stream.cancel();
    }
    const parent = await stack!.newSession("parent: first run");
    const id = await launchTask(stack!, parent, { description: "first ever task", prompt: "REPLY first result" });
    const page = await waitUntil(async () => {
      const text = await home();
      return new RegExp(`data-task="${id}">(?:(?!</tr>)[\\s\\S])*s-completed`).test(text) ? text : undefined;
    }, { timeoutMs: 20_000, what: "the task completed on the page" });
    assert.doesNotMatch(page, /No background tasks yet/);
    assert.match(page, /first ever task/);
    assert.ok(page.includes(`>${basename(stack!.server.projectDir)}</option>`), "the project selector names the project");
    assert.equal(cli.exitCode, null, "the same dashboard process throughout");
  });
});

/** Reads the event stream until `needle` arrives; throws after timeoutMs. */
async function readUntil(stream: { read(): Promise<{ done: boolean; value?: Uint8Array }> }, needle: string, timeoutMs: number): Promise<void> {
  const decoder = new TextDecoder();
  const deadline = Date.now() + timeoutMs;
  let seen = "";
  while (!seen.includes(needle)) {
    const left = deadline - Date.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), Math.max(0, left))));
    const chunk = await Promise.race([stream.read(), timeout]).finally(() => clearTimeout(timer));
    if (!chunk || chunk.done) throw new Error(`no "${needle}" on the event stream within ${timeoutMs} ms (got: ${JSON.stringify(seen)})`);
    seen += decoder.decode(chunk.value, { stream: true });
  }
}
