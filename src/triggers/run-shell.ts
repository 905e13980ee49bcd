import { spawn } from "node:child_process";
import { statSync } from "node:fs";
import { systemClock, type Clock } from "../core/clock.ts";
import { commandShell, shellEnv } from "../approval/command-shell.ts";

export type ShellOptions = {
  /** Where the command runs. */
  cwd: string;
  /** The whole process group is killed after this many milliseconds. */
  timeoutMs: number;
  /** Bytes kept of stdout and of stderr each: the last ones. Default 64 KB. */
  capBytes?: number;
  /** Variables added to (or replacing) the inherited environment. */
  env?: Record<string, string>;
  /** Aborting kills the whole process group, as the timeout does. */
  signal?: AbortSignal;
  /** Time between SIGTERM and SIGKILL. Default 2 s. */
  killGraceMs?: number;
  /** Runs the timeout, the grace and the wait for the pipes (tests pass a fake one). */
  clock?: Clock;
};

export type ShellResult = {
  /** Undefined when a signal ended the shell. */
  exitCode?: number;
  signal?: string;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** stdout or stderr was longer than capBytes; only its end is kept. */
  outputTruncated: boolean;
  durationMs: number;
};

const DEFAULT_CAP_BYTES = 64 * 1024;
const DEFAULT_KILL_GRACE_MS = 2_000;
/** After SIGKILL, how long to wait for the pipes to close (a process that left the group may hold them). */
const PIPE_WAIT_MS = 500;

/**
 * Runs `bash -c command` (or `sh -c` without bash: see approval/command-shell.ts) in its own process group (detached), stdin from /dev/null. It is done when
 * the shell has exited and its output is closed, as `$(…)` in a shell is; at the timeout or an
 * abort the whole group gets SIGTERM, then SIGKILL after a grace. Whatever is left in the group
 * when the command is done is killed too: a command polled every 30 s must not pile up background
 * processes. A failing command resolves with its exit code; only a failure to start rejects.
 */
export function runShell(command: string, options: ShellOptions): Promise<ShellResult> {
  const cap = options.capBytes ?? DEFAULT_CAP_BYTES;
  const started = performance.now();
  if (options.signal?.aborted) {
    // Cancelled before it started: it never runs, and reads as killed at once.
    return Promise.resolve({ signal: "SIGTERM", timedOut: false, stdout: "", stderr: "", outputTruncated: false, durationMs: 0 });
  }
  return new Promise((resolve, reject) => {
    const env = shellEnv({ ...process.env, ...options.env });
    const shell = commandShell();
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(shell.file, [...shell.args, command], { cwd: options.cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    } catch (error) {
      reject(startError(command, options.cwd, error));
      return;
    }
    const stdout = new TailBuffer(cap);
    const stderr = new TailBuffer(cap);
    child.stdout!.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr!.on("data", (chunk: Buffer) => stderr.push(chunk));

    let timedOut = false;
    let settled = false;
    const clock = options.clock ?? systemClock;
    const timers: unknown[] = [];
    const later = (fn: () => void, ms: number) => timers.push(clock.setTimeout(fn, ms));
    const stopGroup = () => {
      killGroup(child.pid, "SIGTERM");
      later(() => {
        killGroup(child.pid, "SIGKILL");
        later(() => {
          child.stdout!.destroy();
          child.stderr!.destroy();
        }, PIPE_WAIT_MS);
      }, options.killGraceMs ?? DEFAULT_KILL_GRACE_MS);
    };
    const onAbort = () => stopGroup();
    later(() => {
      timedOut = true;
      stopGroup();
    }, options.timeoutMs);
    options.signal?.addEventListener("abort", onAbort, { once: true });

    const finish = () => {
      settled = true;
      for (const timer of timers) clock.clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
    };
    child.on("error", (error) => {
      if (settled) return;
      finish();
      reject(startError(command, options.cwd, error));
    });
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    child.on("exit", (code, signal) => (exit = { code, signal }));
    // Both pipes closed (or destroyed) and the shell exited: the command is done.
    child.on("close", (code, signal) => {
      if (settled) return;
      finish();
      killGroup(child.pid, "SIGKILL");
      const ended = exit ?? { code, signal };
      resolve({
        exitCode: ended.code ?? undefined,
        signal: ended.signal ?? undefined,
        timedOut,
        stdout: stdout.text(),
        stderr: stderr.text(),
        outputTruncated: stdout.truncated || stderr.truncated,
        durationMs: Math.round(performance.now() - started),
      });
    });
  });
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: nothing left in the group.
  }
}

function startError(command: string, cwd: string, cause: unknown): Error {
  const reason = cause instanceof Error ? cause.message : String(cause);
  const missingDir = !isDirectory(cwd);
  const message = missingDir
    ? `Cannot run \`${command}\`: the directory ${cwd} does not exist or is not a directory.`
    : `Cannot start ${commandShell().file} to run \`${command}\` in ${cwd}: ${reason}`;
  return new Error(message, { cause });
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Keeps the last `cap` bytes of a stream without holding more than about twice that. */
class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  truncated = false;

  constructor(private readonly cap: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.size > 2 * this.cap) this.compact();
  }

  text(): string {
    this.compact();
    const bytes = Buffer.concat(this.chunks);
    // The cut may fall inside a UTF-8 character: drop its continuation bytes.
    let start = 0;
    if (this.truncated) while (start < bytes.length && start < 3 && (bytes[start]! & 0xc0) === 0x80) start++;
    return bytes.subarray(start).toString("utf8");
  }

  private compact(): void {
    if (this.size <= this.cap) return;
    this.truncated = true;
    const all = Buffer.concat(this.chunks);
    this.chunks = [Buffer.from(all.subarray(all.length - this.cap))]; // a copy, so the rest can be freed
    this.size = this.cap;
  }
}
