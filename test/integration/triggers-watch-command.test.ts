import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { startStack, call, toolOutputs, waitUntil, MOCK_MODEL, type Stack, queryDb, pendingPermissions, answerPermission } from "../harness/plugin-stack.ts";
import { allText, type MockRequest } from "../harness/mock-model.ts";
import type { SqlValue } from "../../src/store/sqlite-driver.ts";
import { inotifyInodes } from "../harness/inotify.ts";

/**
 * Watch and command triggers on a real OpenCode, driven as a user would: each scenario's parent
 * session has its model call task_create, then the test changes files and reads the history.
 * One server for all of them (each start costs seconds): every scenario watches its own folder or
 * polls its own file, so they run side by side. `bash: "ask"` makes every command trigger ask
 * OpenCode's bash permission, answered through the server's HTTP API.
 */
const QUIET_MS = 3000; // how long "nothing more fires" is watched: several debounces and polls
const RUN_MS = 30_000; // a run to appear or end on a loaded 2-core machine

describe("watch and command triggers on the real host", { concurrency: true }, () => {
  let s: Stack;
  const dir = mkdtempSync(join(tmpdir(), "ocbt-trig-"));
  const dbPath = join(dir, "tasks.db");
  const made = new Map<string, { parent: string; id?: string; out: string; asked?: { permission: string; patterns: string[] }; asks: { permission: string; patterns: string[] }[] }>();
  const at = (rel: string) => join(s.server.projectDir, rel);
  const write = (rel: string, text = `${rel} ${Date.now()}\n`) => {
    mkdirSync(join(at(rel), ".."), { recursive: true });
    writeFileSync(at(rel), text);
  };
  const idOf = (title: string) => made.get(title)!.id!;

  // ---- the store, read-only ----
  const query = <T = any>(sql: string, ...params: SqlValue[]): T[] => queryDb<T>(dbPath, sql, ...params);
  const runs = (title: string) => query<any>("SELECT * FROM automation_runs WHERE automation_id = ? ORDER BY id", idOf(title));
  const trigger = (title: string) => query<any>("SELECT * FROM automation_triggers WHERE automation_id = ?", idOf(title))[0];
  const ended = (r: any) => !["waiting", "starting", "running"].includes(r.status);
  /** Waits for `n` rows, all ended, then watches QUIET_MS more: exactly `n` rows, whatever their status. */
  const exactlyRuns = async (title: string, n: number) => {
    await waitUntil(() => { const all = runs(title); return all.length >= n && all.every(ended); }, { timeoutMs: RUN_MS, intervalMs: 200, what: `${n} ended run(s) of "${title}"` });
    await sleep(QUIET_MS);
    const all = runs(title);
    assert.equal(all.length, n, `"${title}": ${JSON.stringify(all.map((r) => [r.status, r.event_summary]))}`);
    for (const r of all) assert.equal(r.status, "completed", `"${title}" run: ${r.summary}`);
    return all;
  };
  /** The first model request of the run's child: the one whose prompt names the automation. */
  const firstChildRequest = (title: string): MockRequest | undefined =>
    s.mock.requests().find((r) => allText(r).includes(`[Automation "${title}" (`));

  // ---- permission prompts, through the server's HTTP API ----
  const permissions = () => pendingPermissions(s);
  const reply = (id: string, answer: "once" | "reject") => answerPermission(s, id, answer);

  /** The parent's model calls task_create; a command trigger's bash prompt is answered. */
  const create = async (title: string, trig: Record<string, unknown>, prompt: string, answer: "once" | "reject" = "once") => {
    const parent = await s.newSession(`parent: ${title}`);
    const args = { title, prompt, triggers: [trig], notify: "never" };
    void s.server.client.session.promptAsync({
      path: { id: parent }, body: { agent: "build", model: MOCK_MODEL, parts: [{ type: "text", text: call("task_create", args) }] },
    });
    // One bash prompt per simple command of the trigger's command: each is answered until the tool answers.
    const asks: { id: string; permission: string; patterns: string[] }[] = [];
    const out = await waitUntil(async () => {
      for (const p of (await permissions()).filter((p) => p.sessionID === parent && !asks.some((a) => a.id === p.id))) {
        asks.push(p);
        await reply(p.id, answer);
      }
      return (await toolOutputs(s, parent, "task_create"))[0];
    }, { timeoutMs: 15_000, what: `task_create output for "${title}"` });
    await waitUntil(async () => (await s.server.client.session.status()).data?.[parent] === undefined, { what: "parent idle" });
    made.set(title, { parent, out, asked: asks[0], asks, id: /Created automation (au\w+)/.exec(out)?.[1] });
  };

  before(async () => {
    s = await startStack({
      pluginOptions: { dbPath, pollIntervalMs: 500 },
      config: { permission: { background_automation: "allow", bash: "ask" } },
    });
    write("one/a.ts", "export const a = 1;\n");
    for (const folder of ["burst", "ign", "ign/dist", "grow", "src"]) write(`${folder}/.keep`, "");
    write(".gitignore", "ign/build/\nign/dist/\n*.tmp\n");
    write("state.txt", "alpha\n");
    const watches: Array<[string, Record<string, unknown>, string]> = [
      ["watch one", { watch: ["one/"], debounce: "300ms" }, "REPLY saw one"],
      ["watch burst", { watch: ["burst/"], debounce: "400ms" }, "REPLY saw burst"],
      ["watch ignored", { watch: ["ign/"], ignore: ["**/*.log"], debounce: "300ms" }, "REPLY saw ign"],
      ["watch grow", { watch: ["grow/"], debounce: "300ms" }, "REPLY saw grow"],
      ["watch later", { watch: ["later/"], debounce: "300ms" }, "REPLY saw later"],
      ["own writes", { watch: ["src/"], debounce: "300ms" }, call("write", { filePath: "src/own.ts", content: "x" })],
    ];
    // No prompt for these (background_automation is allowed), so they go side by side; bash prompts one at a time.
    await Promise.all([
      ...watches.map(([title, trig, prompt]) => create(title, trig, prompt)),
      (async () => {
        await create("command full", { command: "cat state.txt", every: "1s", diff: "full" }, "REPLY saw diff");
        await create("command exit", { command: "date +%N; test -f flag", every: "1s", diff: "exit_code" }, "REPLY saw exit");
        await create("command hang", { command: "sleep 37", every: "1s", timeout: "1s" }, "REPLY saw hang");
        await create("command refused", { command: "cat refused.txt", every: "1s" }, "REPLY never", "reject");
      })(),
    ]);
    for (const [title] of watches) assert.ok(made.get(title)?.id, `created "${title}": ${made.get(title)?.out}`);
    // Each watched folder is in the server's inotify set: from then on its changes reach the trigger.
    const folders = ["one", "burst", "ign", "grow", "src"].map((f) => statSync(at(f)).ino);
    await waitUntil(() => { const watched = inotifyInodes(s.server.pid); return folders.every((ino) => watched.has(ino)); }, { timeoutMs: 30_000, what: "watched folders in inotify" });
  });

  after(async () => {
    await s?.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it("watch: one save fires one run, with the path in the child's first model request", async () => {
    write("one/a.ts", "export const a = 2;\n");
    const [run] = await exactlyRuns("watch one", 1);
    assert.equal(run.fired_by, "watch");
    assert.equal(run.event_summary, "one/a.ts changed");
    const first = firstChildRequest("watch one");
    assert.ok(first, "the run's child called the model");
    assert.match(allText(first), /run #1, fired by when one\/ change\]\n\[Event: one\/a\.ts changed\]\n1 file: 1 changed\nchanged one\/a\.ts/);
  });

  it("watch: a burst of 200 files fires once, with the count", async () => {
    for (let i = 0; i < 200; i++) writeFileSync(at(`burst/f${String(i).padStart(3, "0")}.ts`), `${i}\n`);
    const [run] = await exactlyRuns("watch burst", 1);
    assert.equal(run.event_summary, "burst/f000.ts and 199 more added");
    const lines = String(run.event_data).split("\n");
    assert.equal(lines[0], "200 files: 200 added");
    assert.equal(lines.length, 1 + 50 + 1, "50 paths listed");
    assert.equal(lines.at(-1), "and 150 more");
    assert.match(allText(firstChildRequest("watch burst")!), /\[Event: burst\/f000\.ts and 199 more added\]\n200 files: 200 added\nadded burst\/f000\.ts\n/);
  });

  it("watch: ignored, .gitignored and node_modules paths never fire", async () => {
    write("ign/x.log");
    write("ign/deep/y.log");
    write("ign/build/out.js"); // a folder git ignores, created after the start
    write("ign/dist/out.js"); // a folder git ignored from the start
    write("ign/z.tmp");
    write("ign/node_modules/pkg/index.js");
    await sleep(QUIET_MS);
    assert.equal(runs("watch ignored").length, 0, "nothing ignored fired");
    // Still watching: one wanted file among ignored ones fires once, naming only itself.
    write("ign/ok.ts");
    write("ign/again.log");
    write("ign/build/again.js");
    write("ign/node_modules/pkg/again.js");
    const [run] = await exactlyRuns("watch ignored", 1);
    assert.equal(run.event_summary, "ign/ok.ts added");
    assert.equal(run.event_data, "1 file: 1 added\nadded ign/ok.ts");
  });

  it("watch: folders created after the start are watched (inside a watched folder, and the watched folder itself)", async () => {
    write("grow/sub/deep/x.ts");
    write("later/y.ts");
    const [grown] = await exactlyRuns("watch grow", 1);
    assert.equal(grown.event_summary, "grow/sub/deep/x.ts added");
    const [later] = await exactlyRuns("watch later", 1);
    assert.equal(later.event_summary, "later/y.ts added");
  });

  it("watch: the run's own writes do not fire it again", async () => {
    write("src/start.ts");
    const [run] = await exactlyRuns("own writes", 1);
    assert.equal(run.event_summary, "src/start.ts added");
    assert.equal(readFileSync(at("src/own.ts"), "utf8"), "x", "the run's child wrote src/own.ts with the write tool");
  });

  it("command: a baseline, nothing while unchanged, then one run with the diff", async () => {
    await waitUntil(() => trigger("command full").state, { timeoutMs: RUN_MS, what: "baseline" });
    assert.equal(JSON.parse(trigger("command full").state).output, "alpha\n");
    await sleep(QUIET_MS);
    assert.equal(runs("command full").length, 0, "unchanged output fires nothing");
    write("state.txt", "alpha\nbeta\n");
    const [run] = await exactlyRuns("command full", 1);
    assert.equal(run.fired_by, "command");
    assert.equal(run.event_summary, "`cat state.txt` output changed (1 line added, 0 removed)");
    assert.match(run.event_data, /^\+beta$/m);
    assert.doesNotMatch(run.event_data, /^[+-]alpha$/m);
    assert.match(allText(firstChildRequest("command full")!), /\[Event: `cat state\.txt` output changed \(1 line added, 0 removed\)\]\n[^]*\+beta/);
  });

  it("command: exit_code fires on 1 -> 0 and 0 -> 1 only, not on output that changes every check", async () => {
    await waitUntil(() => trigger("command exit").state, { timeoutMs: RUN_MS, what: "baseline" });
    assert.equal(JSON.parse(trigger("command exit").state).outcome, "exit:1");
    await sleep(QUIET_MS);
    assert.equal(runs("command exit").length, 0, "new output with the same exit code fires nothing");
    write("flag", "");
    const [up] = await exactlyRuns("command exit", 1);
    assert.equal(up.event_summary, "`date +%N; test -f flag` exit code 1 -> 0");
    rmSync(at("flag"));
    const [, down] = await exactlyRuns("command exit", 2);
    assert.equal(down.event_summary, "`date +%N; test -f flag` exit code 0 -> 1");
  });

  it("command: a hanging command is killed at its timeout, and the trigger says it timed out", async () => {
    const note = "The last check timed out after 1s.";
    await waitUntil(() => trigger("command hang").note === note, { timeoutMs: RUN_MS, what: "timed-out note" });
    const { parent } = made.get("command hang")!;
    await s.say(parent, call("task_read", { id: idOf("command hang") }));
    assert.match((await toolOutputs(s, parent, "task_read"))[0]!, /when `sleep 37` output changes \(checked every 1s\) \(The last check timed out after 1s\.\)/);
    // Checks go on every second; none of their `sleep 37` outlives its 1 s timeout by much.
    const seen = new Set<number>();
    let oldest = 0;
    for (const until = Date.now() + 5000; Date.now() < until; await sleep(200)) {
      for (const [pid, age] of sleepProcesses()) (seen.add(pid), (oldest = Math.max(oldest, age)));
    }
    assert.ok(seen.size >= 2, `the command ran again and again (saw ${seen.size} processes)`);
    assert.ok(oldest <= 2, `a sleep 37 lived ${oldest} s`);
    assert.equal(runs("command hang").length, 0, "always timing out is no change");
    await s.say(parent, call("task_delete", { id: idOf("command hang") }));
    await waitUntil(() => sleepProcesses().length === 0, { timeoutMs: 5000, what: "no sleep 37 left after the delete" });
  });

  it("command: the bash permission is asked for the command; once stores it, reject stores nothing", async () => {
    for (const title of ["command full", "command exit", "command hang"]) {
      const { asked, out } = made.get(title)!;
      assert.equal(asked?.permission, "bash");
      assert.match(out, new RegExp(`Created automation au\\w+ "${title}"`));
    }
    // Asked per simple command, never as the whole string (a "date *" rule must not let "; test …" through).
    assert.deepEqual(made.get("command exit")!.asks.map((a) => a.patterns), [["date +%N"], ["test -f flag"]]);
    const refused = made.get("command refused")!;
    assert.deepEqual(refused.asked?.patterns, ["cat refused.txt"]);
    assert.match(refused.out, /Running `cat refused\.txt` every 1s was not allowed \(bash permission\); nothing was stored/);
    assert.equal(refused.id, undefined);
    assert.equal(query("SELECT id FROM automations WHERE title = ?", "command refused").length, 0);
    assert.equal(query("SELECT id FROM automation_triggers WHERE spec LIKE ?", "%refused.txt%").length, 0);
  });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `sleep 37` processes on the machine: [pid, age in seconds]. */
function sleepProcesses(): Array<[number, number]> {
  let pids: string[];
  try {
    pids = execFileSync("pgrep", ["-f", "sleep 37"], { encoding: "utf8" }).trim().split("\n").filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
  return pids.flatMap((pid) => {
    try {
      return [[Number(pid), Number(execFileSync("ps", ["-o", "etimes=", "-p", pid], { encoding: "utf8" }).trim())] as [number, number]];
    } catch {
      return []; // gone meanwhile
    }
  });
}
