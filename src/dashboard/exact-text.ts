import { INVISIBLE } from "../proposals/proposal-definition.ts";
import { html, type SafeHtml } from "./html.ts";

/** Runs of two or more spaces, tabs, and characters that do not show as themselves. */
const MARKED = new RegExp(` {2,}|\\t+|${INVISIBLE.source}`, "gu");

/**
 * A text that runs (a command, a prompt) exactly as stored, in an element with
 * `white-space: pre-wrap` (class exact): runs of spaces and tabs are kept and outlined, with
 * their count on hover; controls, bidirectional overrides and zero-width characters are written
 * as \u{…} and flagged. Everything is escaped.
 */
export function exactText(text: string, tag: "code" | "pre" = "code"): SafeHtml {
  const parts: (string | SafeHtml)[] = [];
  let last = 0;
  for (const match of text.matchAll(MARKED)) {
    parts.push(text.slice(last, match.index));
    parts.push(marked(match[0]));
    last = match.index + match[0].length;
  }
  parts.push(text.slice(last));
  return tag === "pre" ? html`<pre class="exact">${parts}</pre>` : html`<code class="exact">${parts}</code>`;
}

function marked(run: string): SafeHtml {
  if (run[0] === " ") return html`<span class="ws" title="${run.length} spaces">${run}</span>`;
  if (run[0] === "\t") return html`<span class="ws" title="${run.length} tab${run.length === 1 ? "" : "s"}">${run}</span>`;
  const code = run.codePointAt(0)!.toString(16);
  return html`<span class="ctl" title="an invisible or control character (U+${code.toUpperCase().padStart(4, "0")})">\\u{${code}}</span>`;
}
