import type { Node } from "web-tree-sitter";

/**
 * Bash-only syntax that /bin/sh (dash on Debian) reads differently from the bash grammar the
 * plugin judges with. Seen: `[[ -n a || touch f ]]` and `(( touch /x ))` run `touch` under sh while
 * the grammar sees a test or arithmetic (no command), and `git status &> /dev/null touch f` is
 * `git status &` then `> /dev/null touch f` to sh but one git command to the grammar. The plugin
 * runs commands with sh, so a command using any of these is refused rather than misjudged.
 */
const BASH_ONLY_TOKENS = new Set(["[[", "((", "&>", "&>>", "|&", "<<<", "<(", ">(", ";&", ";;&", "function"]);
const BASH_ONLY_NODES = new Set(["array", "c_style_for_statement", "ansi_c_string", "translated_string"]);

/** The first bash-only token or construct in the tree, or undefined when it is plain sh. */
export function bashOnlySyntax(root: Node): string | undefined {
  const cursor = root.walk();
  try {
    for (;;) {
      const type = cursor.nodeType;
      if (cursor.nodeIsNamed ? BASH_ONLY_NODES.has(type) : BASH_ONLY_TOKENS.has(type)) return cursor.nodeIsNamed ? cursor.nodeText : type;
      if (cursor.gotoFirstChild()) continue;
      while (!cursor.gotoNextSibling()) {
        if (!cursor.gotoParent()) return undefined;
      }
    }
  } finally {
    cursor.delete();
  }
}
