import type { Node } from "web-tree-sitter";

/**
 * Where /bin/sh (dash on Debian), which runs the plugin's commands, would see more than the bash
 * grammar the plugin judges with. Seen: `[[ -n a || touch f ]]` and `(( touch /x ))` run `touch`
 * under sh while the grammar sees a test or arithmetic (no command); `git status &> /dev/null
 * touch f` is `git status &` then `> /dev/null touch f` to sh but one git command to the grammar;
 * and the grammar leaves some substitutions unparsed (`${x:-`touch f`}`, nested backticks,
 * backticks in a here-document) while sh runs them. A command with any of these is refused.
 */
const BASH_ONLY_TOKENS = new Set(["[[", "((", "&>", "&>>", "|&", "<<<", "<(", ">(", ";&", ";;&", "function"]);
const BASH_ONLY_NODES = new Set(["array", "c_style_for_statement", "ansi_c_string", "translated_string"]);
const LITERAL_LEAVES = new Set(["raw_string", "comment"]);

/** The first bash-only construct, or substitution the grammar did not parse; undefined when there is none. */
export function shGap(root: Node): string | undefined {
  const cursor = root.walk();
  try {
    for (;;) {
      const type = cursor.nodeType;
      if (cursor.nodeIsNamed ? BASH_ONLY_NODES.has(type) : BASH_ONLY_TOKENS.has(type)) return cursor.nodeIsNamed ? cursor.nodeText : type;
      if (cursor.gotoFirstChild()) continue;
      if (cursor.nodeIsNamed && unparsedSubstitution(cursor.currentNode)) return cursor.nodeText;
      while (!cursor.gotoNextSibling()) {
        if (!cursor.gotoParent()) return undefined;
      }
    }
  } finally {
    cursor.delete();
  }
}

/** A leaf that still holds `$(` or a backtick: sh would run it, the grammar saw no command there. */
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
