import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runShell } from "../../src/triggers/run-shell.ts";
import { runCommand } from "../../src/evidence/expectation-check.ts";
import { commandShell, shellAmong } from "../../src/approval/command-shell.ts";
import { FakeClock } from "../helpers/fake-clock.ts";
import { waitFor } from "../helpers/wait-for.ts";

const tempDir = () => mkdtempSync(join(tmpdir(), "run-shell-"));

/** Pids of the live processes in a process group (zombies excluded). */
function groupMembers(pgid: number): number[] {
  const ps = execFileSync("ps", ["-eo", "pid=,pgid=,stat="], { encoding: "utf8" });
  return ps
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([, group, stat]) => Number(group) === pgid && !stat?.startsWith("Z"))
    .map(([pid]) => Number(pid));
}

/** The shell writes its pid (its process group id, as it is the group's leader) to `pgid`. */
const readPgid = (dir: string) => (existsSync(join(dir, "pgid")) ? Number(readFileSync(join(dir, "pgid"), "utf8")) || undefined : undefined);

describe("runShell", () => {
  it("returns exit code, stdout and stderr apart, and does not throw for a failing command", async () => {
    const dir = tempDir();
    const result = await runShell("echo out; echo err >&2; pwd; exit 3", { cwd: dir, timeoutMs: 5_000 });
    assert.equal(result.exitCode, 3);
    assert.equal(result.signal, undefined);
    assert.equal(result.timedOut, false);
    assert.equal(result.stdout, `out\n${dir}\n`);
    assert.equal(result.stderr, "err\n");
    assert.equal(result.outputTruncated, false);
    assert.ok(result.durationMs >= 0);
    const missing = await runShell("no-such-command-xyz", { cwd: dir, timeoutMs: 5_000 });
    assert.equal(missing.exitCode, 127);
    assert.match(missing.stderr, /no-such-command-xyz/);
  });

  it("rejects with a message naming the directory when it cannot start there", async () => {
    await assert.rejects(runShell("true", { cwd: "/no/such/dir", timeoutMs: 1_000 }), /the directory \/no\/such\/dir does not exist/);
  });

  it("adds env to the inherited environment", async () => {
    const result = await runShell('echo "$RUN_SHELL_TEST_VAR"; command -v sh >/dev/null && echo path-ok', {
      cwd: tempDir(),
      timeoutMs: 5_000,
      env: { RUN_SHELL_TEST_VAR: "a b $(x)" },
    });
    assert.equal(result.stdout, "a b $(x)\npath-ok\n");
  });

  it("kills the whole process group at the timeout: the shell and both sleeps", async () => {
    const dir = tempDir();
    const clock = new FakeClock();
    const run = runShell("echo $$ > pgid; sh -c 'sleep 30 & sleep 30'", { cwd: dir, timeoutMs: 700, clock });
    const pgid = await waitFor(() => readPgid(dir), "the pgid file");
    // The inner shell and its two sleeps are all in the group before the timeout (bash execs the
    // last command of its -c string, so the outer shell becomes the inner one; dash stays a fourth).
    await waitFor(() => groupMembers(pgid).length >= 3 || undefined, "three processes in the group");
    await clock.advance(699);
    assert.ok(groupMembers(pgid).length >= 3, "nothing killed before the timeout");
    await clock.advance(1);
    const result = await run;
    assert.equal(result.timedOut, true);
    assert.equal(result.exitCode, undefined);
    assert.equal(result.signal, "SIGTERM");
    assert.ok(result.durationMs < 10_000, `returned after ${result.durationMs} ms, not after the sleeps`);
    assert.deepEqual(groupMembers(pgid), [], "no process of the group survives");
  });

  it("sends SIGKILL after the grace when SIGTERM is ignored", async () => {
    const dir = tempDir();
    const clock = new FakeClock();
    const run = runShell("echo $$ > pgid; trap '' TERM; sleep 30; echo survived", { cwd: dir, timeoutMs: 300, killGraceMs: 300, clock });
    const pgid = await waitFor(() => readPgid(dir), "the pgid file");
    // The sleep runs once the trap is set, and ignores TERM too (an ignored signal stays ignored across exec).
    await waitFor(() => groupMembers(pgid).length >= 2 || undefined, "the trap set and the sleep started");
    await clock.advance(300); // SIGTERM, ignored
    assert.equal(clock.nextTimerIn(), 300, "SIGKILL waits the grace");
    await clock.advance(300); // SIGKILL
    const result = await run;
    assert.equal(result.timedOut, true);
    assert.equal(result.signal, "SIGKILL");
    assert.equal(result.stdout, "");
    assert.deepEqual(groupMembers(pgid), []);
  });

  it("an abort kills the group; an abort before the start runs nothing", async () => {
    const dir = tempDir();
    const controller = new AbortController();
    const run = runShell("echo $$ > pgid; sleep 30 & sleep 30", { cwd: dir, timeoutMs: 30_000, signal: controller.signal });
    const pgid = await waitFor(() => readPgid(dir), "the pgid file");
    await waitFor(() => groupMembers(pgid).length >= 3 || undefined, "three processes in the group");
    controller.abort();
    const result = await run;
    assert.equal(result.timedOut, false);
    assert.equal(result.signal, "SIGTERM");
    assert.deepEqual(groupMembers(pgid), []);

    const never = await runShell("touch ran", { cwd: dir, timeoutMs: 5_000, signal: controller.signal });
    assert.equal(never.signal, "SIGTERM");
    assert.equal(existsSync(join(dir, "ran")), false);
  });

  it("waits for a background child holding the output, and kills what is left in the group once done", async () => {
    const dir = tempDir();
    const held = await runShell("(sleep 0.3; echo late) & echo early", { cwd: dir, timeoutMs: 5_000 });
    assert.equal(held.stdout, "early\nlate\n");
    assert.equal(held.exitCode, 0);
    const result = await runShell("echo $$ > pgid; sleep 30 >/dev/null 2>&1 & echo done", { cwd: dir, timeoutMs: 5_000 });
    assert.equal(result.stdout, "done\n");
    assert.equal(result.timedOut, false);
    assert.deepEqual(groupMembers(readPgid(dir)!), [], "the background sleep is gone");
  });

  // Real time: it must return before a real 2 s sleep that left the group and holds the pipe ends.
  it("returns at the timeout even when a process that left the group holds the output open", async () => {
    const result = await runShell("echo hi; setsid sleep 2 & echo bye", { cwd: tempDir(), timeoutMs: 300, killGraceMs: 100 });
    assert.equal(result.timedOut, true);
    assert.equal(result.stdout, "hi\nbye\n");
    assert.ok(result.durationMs < 1_900, `returned after ${result.durationMs} ms, before the escaped sleep ended`);
  });

  it("keeps the last capBytes of stdout and of stderr each, and says it cut them", async () => {
    const dir = tempDir();
    const command = "head -c 200000 /dev/zero | tr '\\0' a; echo END; head -c 100000 /dev/zero | tr '\\0' b >&2; echo ERR >&2";
    const result = await runShell(command, { cwd: dir, timeoutMs: 10_000 });
    assert.equal(result.outputTruncated, true);
    assert.equal(result.stdout.length, 65_536);
    assert.ok(result.stdout.endsWith("aaaaEND\n"));
    assert.equal(result.stderr.length, 65_536);
    assert.ok(result.stderr.endsWith("bbbbERR\n"));
    const small = await runShell(command, { cwd: dir, timeoutMs: 10_000, capBytes: 10 });
    assert.equal(small.stdout, "aaaaaaEND\n");
    assert.equal(small.stderr, "bbbbbbERR\n");
  });

  it("does not start the cut inside a UTF-8 character", async () => {
    // "é" is two bytes: a cut of 5 bytes from "éééé" lands inside one.
    const result = await runShell("printf 'éééé'", { cwd: tempDir(), timeoutMs: 5_000, capBytes: 5 });
    assert.equal(result.stdout, "éé");
    assert.equal(result.outputTruncated, true);
  });
});

/** Commands are judged with the bash grammar: bash runs them when there is one, and nothing but the judged text runs (issue 33). */
describe("the shell that runs the plugin's commands", () => {
  const shell = commandShell();

  it("is bash with no rc files when bash is present, /bin/sh otherwise", () => {
    assert.deepEqual(shellAmong([]), { kind: "sh", file: "/bin/sh", args: ["-c"] });
    assert.deepEqual(shellAmong(["/no/such/bash", "/bin/bash"]).args, ["--norc", "--noprofile", "-c"]);
  });

  it("steps and command triggers (runShell) and expect.command (runCommand) run in it", async () => {
    const probe = 'if [ -n "$BASH_VERSION" ]; then echo bash; else echo sh; fi';
    assert.equal((await runShell(probe, { cwd: tempDir(), timeoutMs: 5_000 })).stdout, `${shell.kind}\n`);
    assert.equal((await runCommand(probe, tempDir(), 5_000)).output, `${shell.kind}\n`);
  });

  it("runs nothing a start-up variable names: BASH_ENV, ENV, exported functions, PS4 with xtrace", async () => {
    const dir = tempDir();
    const script = join(dir, "startup.sh");
    writeFileSync(script, `touch ${join(dir, "sourced")}\n`);
    const env = { BASH_ENV: script, ENV: script, "BASH_FUNC_git%%": `() { touch ${join(dir, "function")}; }`, SHELLOPTS: "xtrace", BASHOPTS: "expand_aliases", PS4: `$(touch ${join(dir, "ps4")})` };
    const saved = { ...process.env };
    Object.assign(process.env, env); // runCommand inherits the plugin's environment
    try {
      await runShell("git --version > /dev/null 2>&1; true", { cwd: dir, timeoutMs: 5_000, env });
      await runCommand("git --version > /dev/null 2>&1; true", dir, 5_000);
    } finally {
      for (const key of Object.keys(env)) if (saved[key] === undefined) delete process.env[key]; else process.env[key] = saved[key];
    }
    assert.deepEqual(["sourced", "function", "ps4"].filter((f) => existsSync(join(dir, f))), []);
  });
});
