import type { Node } from "web-tree-sitter";
import { commandPrefix } from "./bash-arity.ts";

/** patterns[i] and always[i] belong to the same part (an always prefix may repeat). */
export type CommandPatterns = { patterns: string[]; always: string[] };

/**
 * Every part of a parsed command that runs something or changes what later parts run, in the
 * order written: each simple command (its own text with its redirections, as OpenCode's bash tool
 * asks), and apart from it each assignment, declaration (`export`, `readonly`, `declare`, `local`,
 * `typeset`), `unset`, function definition and redirection that writes a file. A rule for `git *`
 * then never covers `GIT_DIR=x`, `export GIT_CONFIG_…` or `> victim.txt` next to a git command.
 */
export function patternParts(root: Node): CommandPatterns {
  const parts: CommandPatterns = { patterns: [], always: [] };
  const add = (pattern: string, always: string) => {
    if (parts.patterns.includes(pattern)) return;
    parts.patterns.push(pattern);
    parts.always.push(always);
  };
  visit(root, (node) => {
    const part = partOf(node);
    if (part) add(part[0], part[1]);
  });
  return parts;
}

function partOf(node: Node): [pattern: string, always: string] | undefined {
  switch (node.type) {
    case "command":
      return commandPart(node);
    case "variable_assignment":
      if (node.parent?.type === "declaration_command") return undefined; // the declaration is asked whole
      return [node.text, `${assignedName(node)}=*`];
    case "declaration_command":
    case "unset_command":
      return [node.text, `${node.child(0)!.text} *`];
    case "function_definition":
      return [node.text, `${withoutWildcards(functionName(node))}() *`];
    case "file_redirect":
      return writtenFile(node);
    case "expansion": {
      // ${x=v} and ${x:=v} assign x (an exported x stays exported).
      const assigns = node.children.some((c) => c?.type === "=" || c?.type === ":=");
      const name = node.children.find((c) => c?.type === "variable_name")?.text;
      return assigns && name ? [node.text, `${name}=*`] : undefined;
    }
    default:
      return undefined;
  }
}

function commandPart(node: Node): [string, string] | undefined {
  const words = commandWords(node);
  if (words.length === 0 || DIRECTORY_CHANGES.has(words[0]!)) return undefined; // as OpenCode: cd and the like are not asked
  // Prefix assignments are parts of their own: the command's pattern starts at its name.
  const name = node.children.find((c) => c?.type === "command_name")!;
  const end = node.parent?.type === "redirected_statement" ? node.parent.endIndex : node.endIndex;
  const source = node.tree.rootNode.text;
  return [source.slice(name.startIndex, end).trim(), `${commandPrefix(words).join(" ")} *`];
}

/** The command's name and arguments, as the grammar marks them (redirections and assignments left out). */
function commandWords(node: Node): string[] {
  const words: string[] = [];
  for (const child of node.children) {
    if (child && WORD_TYPES.has(child.type)) words.push(child.text);
  }
  return words;
}

/** `> f`, `>> f`, `>| f`, `<> f`, `&> f`, `&>> f`, `>& f` (a file, not an fd): the always rule is the same exact text. */
function writtenFile(node: Node): [string, string] | undefined {
  const operator = node.children.find((c) => c !== null && !c.isNamed)?.type;
  const target = node.children.filter((c) => c !== null && c.isNamed && c.type !== "file_descriptor").map((c) => c!.text).join(" ");
  if (!operator || !WRITES.has(operator) || target === "/dev/null") return undefined;
  if (operator === ">&" && /^(\d+|-)$/.test(target)) return undefined; // 2>&1, 3>&-: no file
  const fd = node.children.find((c) => c?.type === "file_descriptor")?.text ?? "";
  const pattern = `${fd}${operator} ${target}`;
  // A * or ? in an always rule would match every file: such a rule is offered without them, matching nothing else.
  return [pattern, withoutWildcards(pattern)];
}

function assignedName(node: Node): string {
  const target = node.child(0)!;
  return target.type === "subscript" ? target.child(0)!.text : target.text;
}

function functionName(node: Node): string {
  return node.children.find((c) => c?.type === "word")?.text ?? "function";
}

const withoutWildcards = (text: string) => text.replace(/[*?]/g, "");

function visit(node: Node, fn: (node: Node) => void): void {
  fn(node);
  for (const child of node.children) if (child) visit(child, fn);
}

const WORD_TYPES = new Set(["command_name", "word", "string", "raw_string", "concatenation"]);
const DIRECTORY_CHANGES = new Set(["cd", "chdir", "popd", "pushd"]);
const WRITES = new Set([">", ">>", ">|", "<>", "&>", "&>>", ">&"]);
