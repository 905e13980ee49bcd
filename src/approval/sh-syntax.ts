import type { Node } from "web-tree-sitter";

/**
 * Where the shell that runs the plugin's commands would do more than the bash grammar shows.
 *
 * Under /bin/sh (dash on Debian, used when there is no bash): `[[ -n a || touch f ]]` and
 * `(( touch /x ))` run `touch` while the grammar sees a test or arithmetic (no command);
 * `git status &> /dev/null touch f` is `git status &` then `> /dev/null touch f` to sh but one
 * git command to the grammar. Under bash those read as the grammar reads them, but bash evaluates
 * the value of a variable used in arithmetic as an expression, subscripts and `$(…)` in it
 * included: `x='a[$(touch f)]'; echo $((x))` runs `touch` (dash does not). A command's text cannot
 * show what a variable will hold (an event's summary, a file's content), so arithmetic on names,
 * `[[`, `((`, `let`, `${!x}`, `${x:offset}`, `${x@P}`, subscripts and `-v` are refused under bash.
 * Under both, the grammar leaves some substitutions unparsed (`${x:-`touch f`}`, nested
 * backticks, backticks in a here-document) while the shell runs them. Any of these is refused.
 */
const SH_ONLY_REFUSED = {
  tokens: new Set(["[[", "((", "&>", "&>>", "|&", "<<<", "<(", ">(", ";&", ";;&", "function"]),
  nodes: new Set(["array", "c_style_for_statement", "ansi_c_string", "translated_string"]),
};
const BASH_REFUSED = {
  tokens: new Set(["[[", "(("]),
  nodes: new Set(["c_style_for_statement"]),
};
const LITERAL_LEAVES = new Set(["raw_string", "comment"]);

/** Why the shell would run more than the grammar shows, naming the first such construct; undefined when there is none. */
export function shGap(root: Node, shell: "bash" | "sh" = "sh"): string | undefined {
  const refused = shell === "bash" ? BASH_REFUSED : SH_ONLY_REFUSED;
  const cursor = root.walk();
  try {
    for (;;) {
      const type = cursor.nodeType;
      const text = () => (cursor.nodeIsNamed ? cursor.nodeText : type);
      if (cursor.nodeIsNamed ? refused.nodes.has(type) : refused.tokens.has(type)) return shell === "bash" ? evaluatesWhy(text()) : shOnlyWhy(text());
      if (shell === "bash" && cursor.nodeIsNamed && evaluatesData(cursor.currentNode)) return evaluatesWhy(text());
      if (cursor.gotoFirstChild()) continue;
      if (cursor.nodeIsNamed && unparsedSubstitution(cursor.currentNode)) return `the grammar leaves the substitution in \`${cursor.nodeText}\` unparsed while the shell would run it: write $( ) in a plain word or "…" string`;
      while (!cursor.gotoNextSibling()) {
        if (!cursor.gotoParent()) return undefined;
      }
    }
  } finally {
    cursor.delete();
  }
}

const shOnlyWhy = (text: string) =>
  `\`${text}\` is bash syntax, and without bash the command runs with /bin/sh, which reads it differently: use POSIX sh ([ ] not [[ ]], > f 2>&1 not &> f)`;

const evaluatesWhy = (text: string) =>
  `in \`${text}\` bash evaluates a variable's value as code (arithmetic, a subscript or a variable name), and a value can come from outside (an event, a file): use literal numbers, [ "$n" -eq 1 ] for comparisons, and plain names`;

/** Where bash would evaluate a variable's value as arithmetic, or as a name with a subscript. */
function evaluatesData(node: Node): boolean {
  switch (node.type) {
    case "arithmetic_expansion":
      return /[A-Za-z_$`]/.test(node.text.replace(/^\$(\(\(|\[)/, ""));
    case "subscript":
      return !/^\d+$/.test(node.child(2)?.text ?? "");
    case "expansion":
      // ${x@P} expands x's value as a prompt, $(…) in it included.
      return node.children.some((c) => c?.type === "!") || substringOffset(node) || /@P\}$/.test(node.text);
    case "command":
      return evaluatingCommand(node);
    case "declaration_command":
      return node.children.some((c) => c !== null && ((c.type === "word" && /^[-+][A-Za-z]*i/.test(c.text)) || (c.isNamed && !["word", "variable_name", "variable_assignment"].includes(c.type))));
    case "unary_expression":
      return node.child(0)?.text === "-v";
    default:
      return false;
  }
}

/** `${x:offset:length}` evaluates offset and length as arithmetic; plain numbers are safe. */
function substringOffset(node: Node): boolean {
  const colon = node.children.findIndex((c) => c?.type === ":");
  if (colon < 0) return false;
  return node.children.slice(colon + 1).some((c) => c !== null && c.isNamed && !/^-?\d+$/.test(c.text));
}

/** `let` and `declare -i` evaluate arithmetic; `test -v`, `printf -v` and `read` take a name that may carry a subscript. */
function evaluatingCommand(node: Node): boolean {
  const words = node.children.filter((c): c is Node => c !== null && c.isNamed && !c.type.endsWith("redirect") && c.type !== "variable_assignment");
  const name = words[0]?.text;
  const args = words.slice(1);
  if (name === "let") return true;
  if (name === "test" || name === "[" || name === "printf") return args.some((a) => a.text === "-v");
  if (name === "read" || name === "mapfile" || name === "readarray" || name === "getopts") return args.some((a) => a.type !== "word" || /[$`[]/.test(a.text));
  return false;
}

/** A leaf that still holds `$(` or a backtick: the shell would run it, the grammar saw no command there. */
function unparsedSubstitution(leaf: Node): boolean {
  if (LITERAL_LEAVES.has(leaf.type) || quotedHereDocument(leaf)) return false;
  // Inside backticks \` opens a nested substitution; elsewhere a backslash makes the next character literal.
  const text = insideBackticks(leaf) ? leaf.text : leaf.text.replace(/\\[\s\S]/g, "");
  return text.includes("`") || text.includes("$(");
}

function quotedHereDocument(leaf: Node): boolean {
  if (leaf.type !== "heredoc_body") return false;
  const start = leaf.parent?.children.find((c) => c?.type === "heredoc_start");
  return start !== undefined && start !== null && /['"\\]/.test(start.text);
}

function insideBackticks(node: Node): boolean {
  for (let n = node.parent; n; n = n.parent) {
    if (n.type === "command_substitution" && n.text.startsWith("`")) return true;
  }
  return false;
}
