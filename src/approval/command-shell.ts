import { accessSync, constants } from "node:fs";

/**
 * The shell that runs the plugin's own commands (steps, `expect.command`, command triggers), and
 * so the grammar they are judged in. bash when there is one: the judge parses with the bash
 * grammar, so what bash runs is what was asked. Without bash, /bin/sh (dash on Debian) runs them
 * and bash-only syntax is refused (see sh-syntax.ts). bash starts with no rc or profile file and
 * none of the variables that make it run more than the judged text.
 */
export type CommandShell = { kind: "bash" | "sh"; file: string; args: string[] };

const BASH_PATHS = ["/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash", "/opt/homebrew/bin/bash"];

let found: CommandShell | undefined;

/** Looked up once per process: a bash installed later is used after a restart. */
export function commandShell(): CommandShell {
  found ??= shellAmong(BASH_PATHS);
  return found;
}

export function shellAmong(bashPaths: string[]): CommandShell {
  const bash = bashPaths.find(isExecutable);
  return bash ? { kind: "bash", file: bash, args: ["--norc", "--noprofile", "-c"] } : { kind: "sh", file: "/bin/sh", args: ["-c"] };
}

/**
 * The environment without what a shell reads as code at start: BASH_ENV/ENV name a file it
 * sources, BASH_FUNC_* are exported functions that shadow commands (`git` could be one),
 * SHELLOPTS/BASHOPTS with PS4 run code through xtrace, POSIXLY_CORRECT changes the grammar.
 */
export function shellEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const clean: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(env)) {
    if (!UNSAFE_VARIABLES.has(key) && !key.startsWith("BASH_FUNC_")) clean[key] = value;
  }
  return clean;
}

const UNSAFE_VARIABLES = new Set(["BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "POSIXLY_CORRECT"]);

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
