import { isoTime } from "../automations/automation-text.ts";
import { definitionRows, escapeInvisible } from "../proposals/proposal-definition.ts";
import { PROPOSAL_EXPIRY_MS } from "../proposals/proposal-rules.ts";
import type { ProjectAutomation } from "../store/reads/automation-reads.ts";

const LABEL_WIDTH = 16;
/** A run of spaces this long inside a command gets a note: it can push the rest out of sight. */
const LONG_SPACES = 8;

/**
 * A proposal's full definition for the terminal, as the dashboard shows it: every field that runs
 * or leaves the machine, never cut. Commands and other exact texts are quoted with escapes
 * (controls, ANSI escapes, bidirectional overrides and zero-width characters never reach the
 * terminal raw); the prompt is shown line by line.
 */
export function proposalText(a: ProjectAutomation, version: string, now: number): string {
  const p = a.proposal!;
  const expires = p.proposedAt + PROPOSAL_EXPIRY_MS;
  const lines = [`${a.id}  ${quote(a.title)}  version ${version}`];
  const field = (label: string, values: string[]) => values.forEach((v, i) => lines.push(`  ${(i === 0 ? `${label}:` : "").padEnd(LABEL_WIDTH)}${v}`));
  field("Project", [a.projectId]);
  field("Proposed by", [`${p.by === "discovery" ? `discovery, reporting to session ${a.reportTo}` : `the agent in conversation ${a.createdBy}`}, ${isoTime(p.proposedAt)}`]);
  field("Expires", [expires <= now ? `expired ${isoTime(expires)} (removed at OpenCode's next check)` : isoTime(expires)]);
  field("Why", p.reason.split("\n").map(escapeInvisible));
  for (const row of definitionRows(a, a.triggers)) {
    const exact = row.exact ?? [];
    const shown = row.label === "Prompt" ? exact.flatMap((text) => text.split("\n").map((line) => `| ${escapeInvisible(line)}`)) : exact.map(exactLine);
    field(row.label, [...(row.text ? [escapeInvisible(row.text)] : []), ...shown]);
  }
  return lines.join("\n");
}

/** Quoted with JSON's escapes plus the invisible characters JSON leaves raw; a long run of spaces is pointed out. */
function exactLine(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/ +/g)].map((m) => m[0].length));
  return `${quote(text)}${longest >= LONG_SPACES ? `  (note: a run of ${longest} spaces inside)` : ""}`;
}

function quote(text: string): string {
  return escapeInvisible(JSON.stringify(text));
}
