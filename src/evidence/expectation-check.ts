import { spawn } from "node:child_process";
import { stat } from "node:fs/promises";
import { absolutePath, readSnapshot } from "./verify-files.ts";
import type { FileReader } from "./evidence-types.ts";
import { formatSize } from "./evidence-summary.ts";
import { commandShell, shellEnv } from "../approval/command-shell.ts";

export type Expectation = { files?: string[]; command?: string };
export type ExpectationResult = { ok: boolean; problems: string[]; met: string[] };

const OUTPUT_LINES = 40;
const OUTPUT_KEEP_CHARS = 64 * 1024;

/** Checks what a task expects once its child stops: each file exists and is not empty, the command exits 0. */
export async function checkExpectation(projectDir: string, expect: Expectation, timeoutMs: number, read?: FileReader): Promise<ExpectationResult> {
  const problems: string[] = [];
  const met: string[] = [];
  for (const path of expect.files ?? []) {
    const info = read ? await remoteInfo(read, path) : await stat(absolutePath(projectDir, path)).catch(() => undefined);
    if (!info) problems.push(`${path} does not exist.`);
    else if (!info.isFile()) problems.push(`${path} is not a file.`);
    else if (info.size === 0) problems.push(`${path} is empty.`);
    else met.push(`${path} exists (${formatSize(info.size)})`);
  }
  if (expect.command) {
    const run = await runCommand(expect.command, projectDir, timeoutMs);
    if (run.exitCode === 0) met.push(`\`${expect.command}\` exited 0`);
    else {
      const what = run.timedOut ? `did not finish within ${Math.round(timeoutMs / 1000)} s and was stopped` : `exited with ${run.exitCode ?? run.signal ?? "an error"}`;
      problems.push(`\`${expect.command}\` ${what}. Last ${OUTPUT_LINES} lines of its output:\n${lastLines(run.output, OUTPUT_LINES)}`);
    }
  }
  return { ok: problems.length === 0, problems, met };
}

/** A worker's file as `stat` would tell it: the API reads files only. */
async function remoteInfo(read: FileReader, path: string): Promise<{ isFile(): boolean; size: number } | undefined> {
  const snapshot = await readSnapshot(read, path);
  return snapshot.exists ? { isFile: () => true, size: snapshot.size ?? 0 } : undefined;
}

export type CommandRun = { exitCode?: number; signal?: string; timedOut: boolean; output: string };

/** Runs a shell command in the project, stdout and stderr together, killed (with its children) at the timeout. */
export function runCommand(command: string, cwd: string, timeoutMs: number): Promise<CommandRun> {
  return new Promise((resolve) => {
    let output = "";
    let timedOut = false;
    const shell = commandShell(); // the shell the command was judged for
    const child = spawn(shell.file, [...shell.args, command], { cwd, env: shellEnv(process.env), detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString("utf8")).slice(-OUTPUT_KEEP_CHARS);
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      resolve({ timedOut, output: `${output}${error.message}` });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ exitCode: code ?? undefined, signal: signal ?? undefined, timedOut, output });
    });
  });
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // Already gone: nothing left to stop.
  }
}

function lastLines(text: string, n: number): string {
  const lines = text.replace(/\n$/, "").split("\n");
  return lines.slice(-n).join("\n") || "(no output)";
}
