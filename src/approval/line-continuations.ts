import type { Node, Tree } from "web-tree-sitter";

/**
 * The shell removes a backslash-newline before it parses (a line continuation) everywhere but in
 * single quotes, comments and quoted here-documents; the grammar does not, so `git status\` +
 * newline + `#; touch x` is one git command to the grammar and `touch x` to the shell. The
 * command is judged as the shell reads it: each continuation is joined, left to right, reading
 * its context from the tree of the text joined so far.
 */
export type Joined = { text: string } | { refused: string };

type Parse = (text: string) => Tree | null;

const MAX_JOINS = 500;

export function joinContinuations(command: string, parse: Parse, shell: "bash" | "sh"): Joined {
  let text = command;
  let from = 0;
  for (let joins = 0; joins <= MAX_JOINS; joins++) {
    const at = nextContinuation(text, from);
    if (at < 0) return { text };
    const tree = parse(text);
    if (!tree) return { refused: "it could not be parsed" };
    try {
      const context = continuationContext(tree.rootNode.descendantForIndex(at) ?? tree.rootNode, shell);
      if (typeof context === "object") return context;
      if (context === "literal") {
        from = at + 2;
        continue;
      }
    } finally {
      tree.delete();
    }
    text = text.slice(0, at) + text.slice(at + 2);
    from = at;
  }
  return { refused: `it has more than ${MAX_JOINS} line continuations` };
}

/** Index of the next backslash that escapes a newline (an odd run of backslashes before it). */
function nextContinuation(text: string, from: number): number {
  for (let i = text.indexOf("\\\n", from); i >= 0; i = text.indexOf("\\\n", i + 1)) {
    let run = 1;
    while (i - run >= 0 && text[i - run] === "\\") run++;
    if (run % 2 === 1) return i;
  }
  return -1;
}

function continuationContext(node: Node, shell: "bash" | "sh"): "join" | "literal" | { refused: string } {
  for (let n: Node | null = node; n; n = n.parent) {
    if (n.type === "raw_string" || n.type === "comment") return "literal";
    if (n.type === "ansi_c_string" || n.type === "translated_string") return { refused: "it has a line continuation inside $'…' or $\"…\" quotes" };
    if (n.type === "heredoc_redirect") return { refused: "it has a line continuation in a here-document's delimiter" };
    if (n.type === "heredoc_body") {
      if (quotedHereDocument(n)) return "literal";
      // dash joins the body's lines but then does not end the document at a joined delimiter line.
      if (shell === "sh") return { refused: "it has a line continuation inside a here-document, which sh reads differently from the grammar" };
      return "join";
    }
  }
  return "join";
}

function quotedHereDocument(node: Node): boolean {
  const start = node.parent?.children.find((c) => c?.type === "heredoc_start");
  return start !== undefined && start !== null && /['"\\]/.test(start.text);
}
