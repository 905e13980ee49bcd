import picomatch from "picomatch";

/** Paths here are relative to the project directory, with "/" separators; "" is the directory itself. */
type Match = (rel: string) => boolean;

/** Folders never watched, wherever they are in the tree. */
const ALWAYS_IGNORED = new Set([".git", "node_modules"]);

/**
 * One watched or ignored pattern: "src/" or "src" is that path and everything under it, a glob
 * ("test/**\/*.ts") matches paths, a glob ending in "/" matches folders and what is under them.
 * `root` is the part before the first glob character: nothing outside it can match.
 */
export type PathRule = { root: string; matches: Match };

export function compileRule(pattern: string): PathRule {
  const folder = pattern.endsWith("/");
  const body = normalizePattern(pattern);
  if (body === "") return { root: "", matches: () => true };
  const scan = picomatch.scan(body);
  if (!scan.isGlob) return { root: body, matches: (rel) => rel === body || rel.startsWith(`${body}/`) };
  const matches = picomatch(folder ? [body, `${body}/**`] : body, { dot: true });
  return { root: scan.base, matches };
}

function normalizePattern(pattern: string): string {
  return pattern
    .replace(/\\/g, "/")
    .replace(/\/{2,}/g, "/")
    .replace(/^(\.\/)+/, "")
    .replace(/\/$/, "")
    .replace(/^\.$/, "");
}

/**
 * What a watch trigger looks at: `wanted` says whether a changed file fires, `skip` whether the
 * watcher leaves a path (and, for a folder, everything under it) out entirely.
 */
export type WatchScope = {
  /** The smallest set of roots: none inside another; "" when the whole project is watched. */
  roots: string[];
  wanted: Match;
  skip: Match;
  /** Whether a watcher built for this scope already sees everything `other` wants. */
  covers(other: WatchScope): boolean;
  /** The `ignore` patterns, normalized. */
  ignore: string[];
};

/** `gitIgnored` answers for a path whose own name (not a parent's) git ignores. */
export function watchScope(paths: string[], ignore: string[], gitIgnored: Match = () => false): WatchScope {
  const rules = paths.map(compileRule);
  const ignoreRules = ignore.map(compileRule);
  const roots = smallestRoots(rules.map((r) => r.root));
  const inRoot = (rel: string) => roots.some((root) => root === "" || rel === root || rel.startsWith(`${root}/`));
  const onWayToRoot = (rel: string) => roots.some((root) => root.startsWith(`${rel}/`));
  // A folder's rule covers everything under it, as in .gitignore.
  const ignored = (rel: string) =>
    rel.split("/").some((name) => ALWAYS_IGNORED.has(name)) ||
    selfOrParent(rel).some((p) => gitIgnored(p) || ignoreRules.some((r) => r.matches(p)));
  const scope: WatchScope = {
    roots,
    ignore: ignore.map((p) => (p.endsWith("/") ? `${normalizePattern(p)}/` : normalizePattern(p))),
    covers: (other) =>
      other.roots.every((r) => roots.some((q) => q === "" || r === q || r.startsWith(`${q}/`))) &&
      scope.ignore.every((p) => other.ignore.includes(p)),
    wanted: (rel) => rel !== "" && !ignored(rel) && rules.some((r) => r.matches(rel)),
    skip: (rel) => rel !== "" && (!(inRoot(rel) || onWayToRoot(rel)) || ignored(rel)),
  };
  return scope;
}

function smallestRoots(roots: string[]): string[] {
  const unique = [...new Set(roots)].sort();
  return unique.filter((root) => !unique.some((other) => other !== root && (other === "" || root.startsWith(`${other}/`))));
}

/** "a/b/c" -> ["a", "a/b", "a/b/c"]. */
function selfOrParent(rel: string): string[] {
  const names = rel.split("/");
  return names.map((_, i) => names.slice(0, i + 1).join("/"));
}
