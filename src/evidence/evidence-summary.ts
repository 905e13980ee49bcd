import type { CommandEvidence, FileEvidence, RunEvidence } from "./evidence-types.ts";

const FILES_SHOWN = 6;
const COMMANDS_SHOWN = 3;
const ITEM_CHARS = 80;
const SUMMARY_CHARS = 1200;

/**
 * The short evidence block put after a result: contradictions first, in plain words, then files,
 * commands and failed tools on one line. Empty when the run touched nothing and ran nothing.
 */
export function evidenceSummary(evidence: RunEvidence): string {
  const warnings = evidence.contradictions.map((c) => `WARNING: ${c.message}`);
  const parts: string[] = [];
  if (evidence.files.length > 0) parts.push(`Files: ${listed(evidence.files.map(fileShort), FILES_SHOWN)}`);
  if (evidence.commands.length > 0) {
    const recent = evidence.commands.slice(-COMMANDS_SHOWN).map(commandShort);
    const older = evidence.commands.length - recent.length;
    parts.push(`Commands: ${older > 0 ? `(${older} earlier), ` : ""}${recent.join(", ")}`);
  }
  if (evidence.failures.length > 0) {
    const first = evidence.failures[0]!;
    parts.push(`Failed tools: ${evidence.failures.length} (${first.tool}: ${clip(first.error, ITEM_CHARS)}${evidence.failures.length > 1 ? ", …" : ""})`);
  }
  if (warnings.length === 0 && parts.length === 0) return "";
  const lines = [...warnings, ...(parts.length > 0 ? [`Evidence: ${parts.join("; ")}`] : [])];
  return clip(lines.join("\n"), SUMMARY_CHARS);
}

/** Every file, command and failed tool of a run, one per line. */
export function evidenceDetails(evidence: RunEvidence): string {
  const lines = [`Evidence of run ${evidence.run}${evidence.run === 0 ? " (first run)" : ` (resume #${evidence.run})`}:`];
  for (const c of evidence.contradictions) lines.push(`  WARNING: ${c.message}`);
  lines.push(evidence.files.length > 0 ? "  Files:" : "  Files: none");
  for (const file of evidence.files) lines.push(`    ${fileLong(file)}`);
  lines.push(evidence.commands.length > 0 ? "  Commands:" : "  Commands: none");
  for (const command of evidence.commands) lines.push(`    ${command.command.split("\n")[0]} — ${outcome(command)}${command.durationMs !== undefined ? `, ${seconds(command.durationMs)}` : ""}`);
  lines.push(evidence.failures.length > 0 ? "  Failed tools:" : "  Failed tools: none");
  for (const failure of evidence.failures) lines.push(`    ${failure.tool}: ${failure.error}`);
  return lines.join("\n");
}

function fileShort(file: FileEvidence): string {
  const bits = [actionsText(file)];
  if (file.additions !== undefined || file.deletions !== undefined) bits.push(`+${file.additions ?? 0} -${file.deletions ?? 0}`);
  if (file.check?.exists && (file.actions.written || file.actions.created)) bits.push(formatSize(file.check.size ?? 0));
  if (file.check) bits.push(file.check.verdict === "missing" ? "MISSING" : file.check.verdict);
  return `${clip(file.path, ITEM_CHARS)} (${bits.join(", ")})`;
}

function fileLong(file: FileEvidence): string {
  const tools = Object.entries(file.tools).map(([tool, n]) => `${tool} ${n}x`).join(", ");
  const check = file.check;
  const state = !check ? "not verified" : check.exists
    ? `exists, ${formatSize(check.size ?? 0)}, sha256 ${check.sha256?.slice(0, 12) ?? "?"}…; ${check.verdict} (compared with ${basisText(check.basis)})`
    : `does not exist; ${check.verdict}`;
  const diff = file.additions !== undefined || file.deletions !== undefined ? `, +${file.additions ?? 0} -${file.deletions ?? 0}` : "";
  return `${file.path} — ${actionsText(file)} (${tools}${diff}); ${state}`;
}

function actionsText(file: FileEvidence): string {
  return Object.entries(file.actions).map(([action, n]) => (n > 1 ? `${action} ${n}x` : action)).join("/") || "seen";
}

function basisText(basis: NonNullable<FileEvidence["check"]>["basis"]): string {
  return basis === "before-write" ? "the file before the first write" : basis === "git-index" ? "git's index" : "nothing (no earlier copy known)";
}

function commandShort(command: CommandEvidence): string {
  return `${clip(command.command.split("\n")[0]!, ITEM_CHARS)} (${outcome(command)})`;
}

function outcome(command: CommandEvidence): string {
  if (command.exitCode !== undefined) return `exit ${command.exitCode}`;
  return command.error ? `failed: ${clip(command.error, ITEM_CHARS)}` : "no exit code";
}

export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function listed(items: string[], max: number): string {
  const shown = items.slice(0, max).join(", ");
  return items.length > max ? `${shown}, and ${items.length - max} more` : shown;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
