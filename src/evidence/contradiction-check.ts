import { basename } from "node:path";
import type { CommandEvidence, Contradiction, FileEvidence } from "./evidence-types.ts";

const CLAIM = /\b(wrote|written|created|saved|generated|produced)\b/i;
const HEDGE = /\b(not|never|unable|cannot|can't|couldn't|didn't|wasn't|failed|without|will|would|should|could|might|going to|need to|please|if|instead of|removed|deleted|cleaned up|except|but|although|apart from|other than)\b|\?/i;
const FILE = /(?:^|[\s`'"(*])((?:[\w.-]+\/)*[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,7})(?=$|[\s`'"),:;!?*]|\.(?:\s|$))/g;
const TESTS_PASS = /\b(?:tests?|test suite|specs?)\b[^.!?\n]{0,40}\b(?:pass(?:es|ed|ing)?|succeed(?:s|ed)?|green)\b/i;
// A test runner, not the shell's own `test -f x`.
const TEST_COMMAND = /\b(?:npm|pnpm|yarn|bun|npx)\s+(?:run\s+)?test\b|\b(?:jest|vitest|pytest|mocha|rspec|phpunit|ctest|tox)\b|\b(?:go|cargo|deno|make|dotnet|mix|gradle|mvn)\s+test\b|node\s+(?:[^|;&]*\s)?--test\b/i;

/**
 * Only clear cases, because a false alarm is worse than silence: a sentence that plainly says a
 * file was written/created/saved, with no negation, condition or future in it, naming a file that
 * is not there (and no file of that name was written in the run); or a plain "tests pass" while
 * the last test-like command exited non-zero.
 */
export function findContradictions(
  result: string,
  files: FileEvidence[],
  commands: CommandEvidence[],
  exists: (path: string) => boolean,
): Contradiction[] {
  const found: Contradiction[] = [];
  // "0 failed" reports success; any other "failed" is a hedge.
  const sentences = result.split(/(?<=[.!?])\s+|\n+/).filter((s) => !HEDGE.test(s.replace(/\b(?:0|zero|no) fail(?:ed|ures?)\b/gi, "")));
  const written = new Set(files.filter((f) => f.check?.exists).map((f) => basename(f.path)));
  const missing = new Set<string>();
  for (const sentence of sentences.filter((s) => CLAIM.test(s))) {
    for (const match of sentence.matchAll(FILE)) {
      const path = match[1]!;
      if (/^https?:|^www\./i.test(path) || written.has(basename(path)) || exists(path)) continue;
      missing.add(path);
    }
  }
  for (const path of missing) found.push({ kind: "file-missing", message: `the result says ${path} was written, but ${path} does not exist.` });
  const lastTest = commands.filter((c) => TEST_COMMAND.test(c.command) && c.exitCode !== undefined).at(-1);
  if (lastTest && lastTest.exitCode !== 0 && sentences.some((s) => TESTS_PASS.test(s))) {
    found.push({ kind: "tests-failed", message: `the result says the tests pass, but the last test command (${lastTest.command.split("\n")[0]}) exited with ${lastTest.exitCode}.` });
  }
  return found;
}
