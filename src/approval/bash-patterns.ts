import { createRequire } from "node:module";
import type { Parser } from "web-tree-sitter";
import { commandPrefix } from "./bash-arity.ts";
import { commandShell } from "./command-shell.ts";
import { joinContinuations } from "./line-continuations.ts";
import { patternParts, type CommandPatterns } from "./pattern-parts.ts";
import { shGap } from "./sh-syntax.ts";

export { commandPrefix, type CommandPatterns };

/**
 * What OpenCode's `bash` permission is asked with for one command string, derived as OpenCode
 * 1.18.33's own bash tool does (read from the shipped binary, see docs/host-notes.md): the
 * command is parsed with the tree-sitter bash grammar, and every simple command in it (inside
 * `;`, `&&`, `||`, pipes, subshells, `$(…)`, backticks, newlines) is one pattern, its own text
 * with its redirections. Unlike OpenCode, which asks for a person at the keyboard, the plugin's
 * commands run unattended, so assignments, declarations, function definitions and redirections
 * that write a file are parts of their own too (pattern-parts.ts). The user's rules then decide
 * each part: `"git *": "allow"` no longer lets `git status; touch x` through. "Always" offers
 * the command's prefix (`git status *`), never the string the model wrote. The command is judged
 * as the shell that runs it reads it: line continuations joined first, and constructs where that
 * shell would run more than the grammar shows refused.
 */
export type Judged = CommandPatterns | { refused: string };

/** `undefined` when the command cannot be judged part by part (judgeCommand says why). */
export async function bashPatterns(command: string, shell: "bash" | "sh" = commandShell().kind): Promise<CommandPatterns | undefined> {
  const judged = await judgeCommand(command, shell);
  return "refused" in judged ? undefined : judged;
}

/** The parts to ask for, or why the command is refused (the reason completes "refused: …"). */
export async function judgeCommand(command: string, shell: "bash" | "sh" = commandShell().kind): Promise<Judged> {
  const parser = await bashParser();
  const joined = joinContinuations(command, (text) => parser.parse(text), shell);
  if ("refused" in joined) return joined;
  const tree = parser.parse(joined.text);
  try {
    if (!tree || tree.rootNode.hasError) return { refused: "it is not a well-formed shell command" };
    const gap = shGap(tree.rootNode, shell);
    if (gap !== undefined) return { refused: gap };
    return patternParts(tree.rootNode);
  } finally {
    tree?.delete();
  }
}

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
