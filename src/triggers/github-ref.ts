/**
 * The rules of `git check-ref-format --branch`, as its manual states them, for a `github` trigger's
 * `ref`. Checked at parse time (no git process): a ref goes into GitHub API paths, where `..`
 * would walk out of the repository (`../../user/keys`).
 */

/** Longer than GitHub stores (its ref names are at most 255 bytes). */
const MAX_BYTES = 255;

/** The first rule `name` breaks, as a sentence naming it; undefined for a valid branch name. */
export function branchNameProblem(name: string): string | undefined {
  if (name === "") return "it is empty";
  if (name.startsWith("-")) return "it starts with \"-\" (a branch name may not)";
  if (name === "HEAD") return "\"HEAD\" is not a branch name";
  if (name === "@") return "it is the single character \"@\"";
  if (/[\x00-\x1f\x7f]/.test(name)) return "it contains a control character";
  const bad = /[ ~^:?*[\\]/.exec(name);
  if (bad) return `it contains ${bad[0] === " " ? "a space" : `"${bad[0]}"`} (not allowed: space ~ ^ : ? * [ \\)`;
  if (name.includes("..")) return "it contains \"..\"";
  if (name.includes("@{")) return "it contains \"@{\"";
  if (name.startsWith("/")) return "it starts with \"/\"";
  if (name.endsWith("/")) return "it ends with \"/\"";
  if (name.includes("//")) return "it contains \"//\" (an empty part)";
  if (name.endsWith(".")) return "it ends with \".\"";
  for (const part of name.split("/")) {
    if (part.startsWith(".")) return `its part "${part}" starts with "."`;
    if (part.endsWith(".lock")) return `its part "${part}" ends with ".lock"`;
  }
  if (Buffer.byteLength(name) > MAX_BYTES) return `it is longer than ${MAX_BYTES} bytes`;
  return undefined;
}

