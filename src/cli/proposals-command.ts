import { firstLine, isoTime } from "../automations/automation-text.ts";
import { describeTrigger } from "../automations/trigger-spec.ts";
import { CommandInbox } from "../inbox/command-inbox.ts";
import type { InboxCommand } from "../inbox/inbox-command.ts";
import { PROPOSAL_EXPIRY_MS } from "../proposals/proposal-rules.ts";
import { migrate } from "../store/migrations.ts";
import { openSqlite } from "../store/sqlite-driver.ts";
import type { ProjectAutomation, TaskReader } from "../store/task-reader.ts";
import { CliError } from "./cli-error.ts";
import { sleep, type CliIo } from "./cli-io.ts";
import { formatTable, type Column } from "./format-table.ts";
import type { CliArgs } from "./parse-cli-args.ts";

/** How long `proposals approve|reject` waits for an OpenCode of the project to apply the command. */
export const DECISION_WAIT_MS = 5000;
const POLL_MS = 100;

type Decision = "approve" | "reject";

/**
 * `proposals`: the proposals waiting for a decision. `proposals approve|reject <id>`: writes the
 * decision to the command inbox for an OpenCode of that project to apply, and waits briefly for
 * its outcome. Returns a promise only for a decision (the reader is closed by then).
 */
export function proposalsCommand(reader: TaskReader, dbPath: string, args: CliArgs, io: CliIo): Promise<number> | undefined {
  const [action, wanted] = args.operands;
  if (action === undefined) return void listProposals(reader, args, io);
  const proposal = findProposal(reader, wanted!, args.project);
  const directory = reader.projects().find((p) => p.id === proposal.projectId)?.directory;
  return decide(dbPath, action as Decision, proposal, directory, args, io);
}

function listProposals(reader: TaskReader, args: CliArgs, io: CliIo): void {
  const proposals = reader.automations(args.project).filter((a) => a.proposal !== undefined);
  if (args.json) return io.stdout(JSON.stringify(proposals.map((a) => ({ ...a, expiresAt: expiresAt(a) })), null, 2) + "\n");
  if (proposals.length === 0) return io.stdout("No proposals wait for a decision.\n");
  const now = io.now();
  const columns: Column<ProjectAutomation>[] = [
    { header: "ID", value: (a) => a.id },
    { header: "TITLE", value: (a) => a.title, maxWidth: 30 },
    { header: "TRIGGERS", value: (a) => a.triggers.map((t) => describeTrigger(t.spec)).join(", ") || "task_run only", maxWidth: 40 },
    { header: "REASON", value: (a) => firstLine(a.proposal!.reason, 200), maxWidth: 60 },
    { header: "PROPOSED BY", value: (a) => (a.proposal!.by === "discovery" ? "discovery" : `conversation ${a.createdBy}`) },
    { header: "EXPIRES", value: (a) => (expiresAt(a) <= now ? "expired" : isoTime(expiresAt(a))) },
    { header: "PROJECT", value: (a) => a.projectId, maxWidth: 16 },
  ];
  io.stdout(formatTable(proposals, columns) + "\nDecide with `opencode-background-tasks proposals approve <id>` or `proposals reject <id>`.\n");
}

function expiresAt(a: ProjectAutomation): number {
  return a.proposal!.proposedAt + PROPOSAL_EXPIRY_MS;
}

/** The one proposal whose id is `wanted` or starts with it; nothing is written otherwise. */
function findProposal(reader: TaskReader, wanted: string, project: string | undefined): ProjectAutomation {
  const matches = reader.automations(project).filter((a) => a.id === wanted || a.id.startsWith(wanted));
  const exact = matches.filter((a) => a.id === wanted);
  const found = exact.length ? exact : matches;
  if (found.length > 1) throw new CliError(`'${wanted}' matches ${found.length} automations; give more of the id.`, 1);
  const a = found[0];
  if (!a) throw new CliError(`No proposal has an id starting with '${wanted}'. Run \`opencode-background-tasks proposals\` to see them.`, 1);
  if (!a.proposal) throw new CliError(`${a.id} "${a.title}" is not a proposal (it was approved already, or made with task_create): nothing to decide. \`opencode-background-tasks proposals\` lists the proposals.`, 1);
  return a;
}

async function decide(dbPath: string, action: Decision, a: ProjectAutomation, directory: string | undefined, args: CliArgs, io: CliIo): Promise<number> {
  const db = openSqlite(dbPath);
  try {
    migrate(db); // a database of an older plugin version lacks the inbox's source column
    const inbox = new CommandInbox(db);
    const command = await waitForOutcome(inbox, inbox.submit(a.projectId, action, a.id, io.now(), "cli").id, io);
    if (args.json) io.stdout(JSON.stringify(command, null, 2) + "\n");
    else report(command, action, a, directory, io);
    return command.status === "failed" ? 1 : 0;
  } finally {
    db.close();
  }
}

async function waitForOutcome(inbox: CommandInbox, id: number, io: CliIo): Promise<InboxCommand> {
  const until = io.now() + DECISION_WAIT_MS;
  for (;;) {
    const command = inbox.get(id)!;
    if (command.status === "done" || command.status === "failed" || io.now() >= until) return command;
    await (io.sleep ?? sleep)(POLL_MS);
  }
}

function report(c: InboxCommand, action: Decision, a: ProjectAutomation, directory: string | undefined, io: CliIo): void {
  const what = `${action === "approve" ? "Approving" : "Rejecting"} ${a.id} "${a.title}"`;
  if (c.status === "done") return io.stdout(`${c.outcome}\n`);
  if (c.status === "failed") return io.stderr(`${what} failed: ${c.outcome}\n`);
  const check = "Check with `opencode-background-tasks proposals` (it leaves the list once applied) or on the dashboard.";
  if (c.status === "claimed") return io.stdout(`${what}: being applied by an OpenCode of the project (${c.claimedBy}). ${check}\n`);
  const where = directory ? `in ${directory}` : `in project ${a.projectId}`;
  io.stdout(`${what}: queued (command ${c.id}). No OpenCode running ${where} took it within ${DECISION_WAIT_MS / 1000} s; it is applied when OpenCode next runs there. ${check}\n`);
}
