import { it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

/**
 * The worktree git code is loaded at its first use (src/worktrees/load-worktrees.ts), not at every
 * plugin start: outside src/worktrees, only its paths, its types and the loader are imported
 * statically (the automation layer too: a project with automations rarely isolates one). The CLI
 * loads it for its own command.
 */
const SRC = join(import.meta.dirname, "../../src");
const AT_START = new Set(["worktree-paths", "worktree", "load-worktrees"]);
const LAZY_ELSEWHERE = ["worktrees/", "cli/"];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []));
}

it("nothing loaded at plugin start imports the worktree git code statically", () => {
  const offenders: string[] = [];
  for (const file of files(SRC)) {
    const rel = relative(SRC, file);
    if (LAZY_ELSEWHERE.some((dir) => rel.startsWith(dir))) continue;
    for (const [, module] of readFileSync(file, "utf8").matchAll(/^import (?!type )[^;]*? from "[./]*\/?worktrees\/([\w-]+)\.ts";/gm)) {
      if (!AT_START.has(module!)) offenders.push(`${rel}: worktrees/${module}.ts`);
    }
  }
  assert.deepEqual(offenders, [], "use loadWorktrees() from src/worktrees/load-worktrees.ts");
});
