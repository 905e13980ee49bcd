import type { IncomingMessage } from "node:http";
import { isCommandKind, type CommandKind } from "../inbox/inbox-command.ts";

const MAX_BODY = 8192;

/** version: an approval's proposalVersion() of the definition the page showed. */
export type CommandForm = { kind: CommandKind; project: string; target: string; back: string; version?: string };

const VERSION = /^[0-9a-f]{32}$/;

/** Reads and checks a control's form post; an error names what is wrong. */
export async function readCommandForm(req: IncomingMessage): Promise<CommandForm | { error: string }> {
  if (!String(req.headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded")) {
    return { error: "Expected a form post (application/x-www-form-urlencoded)." };
  }
  let body = "";
  for await (const chunk of req) {
    body += chunk;
    if (body.length > MAX_BODY) return { error: "Form too large." };
  }
  const form = new URLSearchParams(body);
  const kind = form.get("kind") ?? "";
  const project = form.get("project") ?? "";
  const target = form.get("target") ?? "";
  const back = form.get("back") ?? "/";
  if (!isCommandKind(kind)) return { error: `Unknown command '${kind}'.` };
  if (!project || !target) return { error: "A command needs a project and a target." };
  const version = form.get("version") ?? undefined;
  if (kind === "approve" && !version) return { error: "An approval names the version of the proposal it approves: reload the page and approve what it shows." };
  if (version !== undefined && !VERSION.test(version)) return { error: "A proposal's version is 32 hex digits: reload the page and approve what it shows." };
  // Only a path on this server: never an absolute or protocol-relative URL.
  const safeBack = back.startsWith("/") && !back.startsWith("//") && !back.includes("\\") ? back : "/";
  return { kind, project, target, back: safeBack, ...(version ? { version } : {}) };
}
