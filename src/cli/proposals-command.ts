import type { CommandRepository } from "../store/command-repository.ts";
import type { InboxCommand } from "../inbox/inbox-command.ts";
import { PROPOSAL_EXPIRY_MS } from "../proposals/proposal-rules.ts";
import { SharedStore } from "../store/shared-store.ts";
import type { ProjectAutomation } from "../store/reads/automation-reads.ts";
import type { ReadModel } from "../store/reads/read-model.ts";
import { CliError } from "./cli-error.ts";
import { sleep, type CliIo } from "./cli-io.ts";
import { proposalText } from "./proposal-text.ts";
import { proposalVersion } from "../proposals/proposal-version.ts";
import type { CliArgs } from "./parse-cli-args.ts";

/** How long `proposals approve|reject` waits for an OpenCode of the project to apply the command. */
export const DECISION_WAIT_MS = 5000;
const POLL_MS = 100;

type Decision = "approve" | "reject";

/**
 * `proposals`: the proposals waiting for a decision, each with its full definition.
 * `proposals approve|reject <id>`: writes the decision to the command inbox for an OpenCode of
 * that project to apply, and waits briefly for its outcome. approve first prints the full
 * definition and asks y/N on a terminal (--yes for scripts; without a terminal and without --yes
 * it refuses), and names the version it printed: the plugin refuses it if the proposal changed.
 * Returns a promise only for a decision (the reader is closed by then).
 */
export function proposalsCommand(reader: ReadModel, dbPath: string, args: CliArgs, io: CliIo): Promise<number> | undefined {
  const [action, wanted] = args.operands;
  if (action === undefined) return void listProposals(reader, args, io);
  const proposal = findProposal(reader, wanted!, args.project);
  const directory = reader.projects().find((p) => p.id === proposal.projectId)?.directory;
  if (action === "reject") return decide(dbPath, "reject", proposal, undefined, directory, args, io);
  return approve(dbPath, proposal, directory, args, io);
}

function listProposals(reader: ReadModel, args: CliArgs, io: CliIo): void {
  const proposals = reader.automations.list(args.project).filter((a) => a.proposal !== undefined);
  if (args.json) {
    return io.stdout(JSON.stringify(proposals.map((a) => ({ ...a, version: proposalVersion(a, a.triggers), expiresAt: expiresAt(a) })), null, 2) + "\n");
  }
  if (proposals.length === 0) return io.stdout("No proposals wait for a decision.\n");
  const shown = proposals.map((a) => proposalText(a, proposalVersion(a, a.triggers), io.now()));
  io.stdout(`${shown.join("\n\n")}\n\nDecide with \`opencode-errands proposals approve <id>\` (it shows the definition again and asks) or \`proposals reject <id>\`.\n`);
}

/** Prints what would be approved, gets the user's yes, and approves exactly that version. */
async function approve(dbPath: string, a: ProjectAutomation, directory: string | undefined, args: CliArgs, io: CliIo): Promise<number> {
  const version = proposalVersion(a, a.triggers);
  // OpenCode's bash tool runs commands with AGENT=1 and OPENCODE=1 (seen on 1.18.33): the agent
  // asking to approve its own proposal. A speed bump, not the boundary (bash's permission is).
  if (io.env.AGENT === "1" || io.env.OPENCODE === "1") {
    throw new CliError(`Not approved: this runs inside an OpenCode tool call (AGENT or OPENCODE is set), and a proposal is approved by you only: run \`opencode-errands proposals approve ${a.id}\` in your own terminal, or Approve on the dashboard. Nothing was written.`, 1);
  }
  const show = args.json ? io.stderr : io.stdout; // --json keeps stdout for the outcome
  show(`${proposalText(a, version, io.now())}\n\n`);
  if (!args.yes) {
    if (!io.ask) {
      throw new CliError(`Not approved: approving asks you to confirm the definition above on a terminal, and stdin is not one. Run it in a terminal, or add --yes (for scripts) to approve exactly the version printed (${version}). Nothing was written.`, 1);
    }
    const answer = await io.ask(`Approve exactly this (version ${version.slice(0, 12)})? It enables it with its commands, no further prompt. [y/N] `);
    if (!/^\s*y(es)?\s*$/i.test(answer)) {
      io.stderr("Not approved: nothing was written.\n");
      return 1;
    }
  }
  return decide(dbPath, "approve", a, version, directory, args, io);
}

function expiresAt(a: ProjectAutomation): number {
  return a.proposal!.proposedAt + PROPOSAL_EXPIRY_MS;
}

/** The one proposal whose id is `wanted` or starts with it; nothing is written otherwise. */
function findProposal(reader: ReadModel, wanted: string, project: string | undefined): ProjectAutomation {
  const matches = reader.automations.list(project).filter((a) => a.id === wanted || a.id.startsWith(wanted));
  const exact = matches.filter((a) => a.id === wanted);
  const found = exact.length ? exact : matches;
  if (found.length > 1) throw new CliError(`'${wanted}' matches ${found.length} automations; give more of the id.`, 1);
  const a = found[0];
  if (!a) throw new CliError(`No proposal has an id starting with '${wanted}'. Run \`opencode-errands proposals\` to see them.`, 1);
  if (!a.proposal) throw new CliError(`${a.id} "${a.title}" is not a proposal (it was approved already, or made with task_create): nothing to decide. \`opencode-errands proposals\` lists the proposals.`, 1);
  return a;
}

async function decide(dbPath: string, action: Decision, a: ProjectAutomation, version: string | undefined, directory: string | undefined, args: CliArgs, io: CliIo): Promise<number> {
  const store = SharedStore.open(dbPath); // migrates: an older plugin's database lacks the inbox's source and version columns
  try {
    const inbox = store.commands;
    const command = await waitForOutcome(inbox, inbox.submit(a.projectId, action, a.id, io.now(), "cli", version).id, io);
    if (args.json) io.stdout(JSON.stringify(command, null, 2) + "\n");
    else report(command, action, a, directory, io);
    return command.status === "failed" ? 1 : 0;
  } finally {
    store.close();
  }
}

async function waitForOutcome(inbox: CommandRepository, id: number, io: CliIo): Promise<InboxCommand> {
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
  const check = "Check with `opencode-errands proposals` (it leaves the list once applied) or on the dashboard.";
  if (c.status === "claimed") return io.stdout(`${what}: being applied by an OpenCode of the project (${c.claimedBy}). ${check}\n`);
  const where = directory ? `in ${directory}` : `in project ${a.projectId}`;
  io.stdout(`${what}: queued (command ${c.id}). No OpenCode running ${where} took it within ${DECISION_WAIT_MS / 1000} s; it is applied when OpenCode next runs there. ${check}\n`);
}
