import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CommandShell } from "../../src/approval/command-shell.ts";
import type { Judged } from "../../src/approval/bash-patterns.ts";

/** Commands the probe's PATH holds: each records its name, its arguments and $MARK, and does nothing else. */
const STUBS = ["git", "touch", "cat", "tee", "ls", "rm"];
const VICTIM = "keep me\n";

export type Observed = {
  /** One line per stub run: `name args…`, with ` MARK=value` when $MARK was set in its environment. */
  ran: string[];
  /** Files of the work folder created or changed (the victim file starts with content). */
  written: string[];
};

/** Runs `command` in the real shell with a PATH of recording stubs, in a fresh folder holding victim.txt. */
export function observe(command: string, shell: CommandShell): Observed {
  const root = mkdtempSync(join(tmpdir(), "sh-probe-"));
  const bin = join(root, "bin");
  const work = join(root, "work");
  mkdirSync(bin);
  mkdirSync(work);
  const log = join(root, "ran.log");
  writeFileSync(log, "");
  for (const name of STUBS) {
    writeFileSync(join(bin, name), `#!/bin/sh\nprintf '%s\\0' "\${0##*/} $*\${MARK:+ MARK=$MARK}" >> "$RUN_LOG"\n`);
    chmodSync(join(bin, name), 0o755);
  }
  writeFileSync(join(work, "victim.txt"), VICTIM);
  spawnSync(shell.file, [...shell.args, command], { cwd: work, env: { PATH: bin, RUN_LOG: log, HOME: work }, stdio: "ignore", timeout: 5_000 });
  const ran = readFileSync(log, "utf8").split("\0").filter(Boolean);
  const written = readdirSync(work).filter((f) => f !== "victim.txt" || readFileSync(join(work, f), "utf8") !== VICTIM);
  return { ran, written };
}

/** Commands whose argument text runs as code: what they run is shown in their own asked pattern. */
const RUNS_ITS_TEXT = ["eval", "alias", "trap", "source", ".", "exec"];

/** What ran or was written that no asked pattern covers; empty when the command was refused. */
export function uncovered(observed: Observed, judged: Judged): string[] {
  if ("refused" in judged) return [];
  const heads = judged.patterns.map((p) => p.split(/\s+/)[0]!);
  const missing: string[] = [];
  for (const line of observed.ran) {
    const name = line.split(" ")[0]!;
    const shown = judged.patterns.some((p) => RUNS_ITS_TEXT.includes(p.split(/\s+/)[0]!) && (p.includes(name) || /^(\.|source) /.test(p)));
    if (!heads.includes(name) && !shown) missing.push(`ran \`${line}\``);
    const mark = / MARK=/.test(line);
    if (mark && !judged.patterns.some((p) => /(^|\s)MARK=/.test(p) || /^(export|declare|typeset|readonly)\b.*\bMARK\b/.test(p))) missing.push(`ran with MARK set: \`${line}\``);
  }
  for (const file of observed.written) {
    const writes = judged.patterns.filter((p) => /^\d*(>|>>|>\||<>|&>|&>>|>&) /.test(p));
    if (!writes.some((p) => p.includes(file))) missing.push(`wrote ${file}`);
  }
  return missing;
}
