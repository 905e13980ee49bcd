import { createRequire } from "node:module";
import type { Node, Parser } from "web-tree-sitter";

/**
 * What OpenCode's `bash` permission is asked with for one command string, derived as OpenCode
 * 1.18.33's own bash tool does (read from the shipped binary, see docs/host-notes.md): the
 * command is parsed with the tree-sitter bash grammar, and every simple command in it (inside
 * `;`, `&&`, `||`, pipes, subshells, `$(…)`, backticks, newlines) is one pattern, its own text
 * with its redirections. The user's rules then decide each part: `"git *": "allow"` no longer
 * lets `git status; touch x` through. "Always" offers the command's prefix (`git status *`),
 * never the string the model wrote.
 */
export type CommandPatterns = { patterns: string[]; always: string[] };
// patterns[i] and always[i] belong to the same simple command (an always prefix may repeat).

/** `undefined` when the text is not a well-formed shell command (it cannot be judged part by part). */
export async function bashPatterns(command: string): Promise<CommandPatterns | undefined> {
  const tree = (await bashParser()).parse(command);
  try {
    if (!tree || tree.rootNode.hasError) return undefined;
    const patterns: string[] = [];
    const always: string[] = [];
    for (const node of tree.rootNode.descendantsOfType("command")) {
      if (!node) continue;
      const words = commandWords(node);
      if (words.length === 0 || DIRECTORY_CHANGES.has(words[0]!)) continue; // as OpenCode: cd and the like are not asked
      const pattern = withRedirections(node);
      if (patterns.includes(pattern)) continue;
      patterns.push(pattern);
      always.push(`${commandPrefix(words).join(" ")} *`);
    }
    return { patterns, always };
  } finally {
    tree?.delete();
  }
}

/** The command's name and arguments, as the grammar marks them (redirections and assignments left out). */
function commandWords(node: Node): string[] {
  const words: string[] = [];
  for (let i = 0; i < node.childCount; i++) {
    const child = node.child(i);
    if (child && WORD_TYPES.has(child.type)) words.push(child.text);
  }
  return words;
}

function withRedirections(node: Node): string {
  return (node.parent?.type === "redirected_statement" ? node.parent.text : node.text).trim();
}

/** How many leading words name what a command does: `git commit`, `npm run build`, `ls`. */
export function commandPrefix(words: string[]): string[] {
  for (let n = words.length; n > 0; n--) {
    const arity = ARITY[words.slice(0, n).join(" ")];
    if (arity !== undefined) return words.slice(0, arity);
  }
  return words.slice(0, 1);
}

const WORD_TYPES = new Set(["command_name", "word", "string", "raw_string", "concatenation"]);
const DIRECTORY_CHANGES = new Set(["cd", "chdir", "popd", "pushd"]);

/**
 * Subcommand depth of well-known tools (unlisted: the first word alone). The same idea and, for
 * the common tools, the same depths as OpenCode's bash tool, so an "always" given here reads like
 * one given there.
 */
const ARITY: Record<string, number> = {
  ...Object.fromEntries(["cat", "chmod", "chown", "cp", "echo", "env", "export", "grep", "kill", "ln", "ls", "mkdir", "mv", "ps", "pwd", "rm", "rmdir", "sleep", "tail", "touch", "which"].map((c) => [c, 1])),
  ...Object.fromEntries(["bun", "cargo", "deno", "docker", "git", "go", "helm", "kubectl", "make", "npm", "pip", "pnpm", "python", "terraform", "yarn"].map((c) => [c, 2])),
  ...Object.fromEntries(["aws", "gcloud", "gh", "bun run", "bun x", "cargo run", "docker compose", "git config", "git remote", "git stash", "npm exec", "npm run", "pnpm run", "pnpm exec", "yarn run"].map((c) => [c, 3])),
};

let parser: Promise<Parser> | undefined;

/** The grammar loads at the first command judged (about 1.5 MB of WebAssembly): most processes never judge one. */
function bashParser(): Promise<Parser> {
  parser ??= loadParser().catch((error: unknown) => {
    parser = undefined; // the next call tries again
    throw error;
  });
  return parser;
}

async function loadParser(): Promise<Parser> {
  const { Parser, Language } = await import("web-tree-sitter");
  const require = createRequire(import.meta.url);
  const runtime = require.resolve("web-tree-sitter/tree-sitter.wasm");
  await Parser.init({ locateFile: () => runtime });
  const bash = await Language.load(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"));
  const p = new Parser();
  p.setLanguage(bash);
  return p;
}
