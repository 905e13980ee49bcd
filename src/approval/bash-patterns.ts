import { createRequire } from "node:module";
import type { Node, Parser } from "web-tree-sitter";
import { commandPrefix } from "./bash-arity.ts";
import { shGap } from "./sh-syntax.ts";

export { commandPrefix };

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
    // The plugin runs commands with /bin/sh: bash-only syntax would be judged as bash but run as sh.
    if (!tree || tree.rootNode.hasError || shGap(tree.rootNode) !== undefined) return undefined;
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

const WORD_TYPES = new Set(["command_name", "word", "string", "raw_string", "concatenation"]);
const DIRECTORY_CHANGES = new Set(["cd", "chdir", "popd", "pushd"]);

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
