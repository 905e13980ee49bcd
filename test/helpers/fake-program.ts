import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export type FakeProgram = {
  /** The directory to put first on PATH. */
  dir: string;
  /** Each call's arguments, in the order the calls were made. */
  calls(): string[][];
  /** Exit code of later calls (0 by default). */
  exitWith(code: number): void;
  remove(): void;
};

/**
 * A stand-in for a program (e.g. notify-send) in a temp dir: each call writes its argv,
 * NUL-separated, to a file of its own, so arguments holding newlines come back exactly.
 */
export function fakeProgram(name: string): FakeProgram {
  const dir = mkdtempSync(join(tmpdir(), `fake-${name}-`));
  const script = [
    "#!/bin/sh",
    'd=$(dirname "$0")',
    'n=$(date +%s%N)-$$',
    'for a in "$@"; do printf \'%s\\0\' "$a"; done > "$d/call-$n.tmp"',
    'mv "$d/call-$n.tmp" "$d/call-$n"',
    'exit $(cat "$d/exit-code" 2>/dev/null || echo 0)',
  ].join("\n");
  writeFileSync(join(dir, name), `${script}\n`);
  chmodSync(join(dir, name), 0o755);
  return {
    dir,
    calls: () =>
      readdirSync(dir).filter((f) => /^call-[\d-]+$/.test(f)).sort((a, b) => a.localeCompare(b, "en", { numeric: true }))
        .map((f) => readFileSync(join(dir, f), "utf8").split("\0").slice(0, -1)),
    exitWith: (code) => writeFileSync(join(dir, "exit-code"), String(code)),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
