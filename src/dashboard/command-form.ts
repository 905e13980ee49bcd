import type { IncomingMessage } from "node:http";
import { isCommandKind, type CommandKind } from "../inbox/inbox-command.ts";

const MAX_BODY = 8192;

export type CommandForm = { kind: CommandKind; project: string; target: string; back: string };

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
  // Only a path on this server: never an absolute or protocol-relative URL.
  const safeBack = back.startsWith("/") && !back.startsWith("//") && !back.includes("\\") ? back : "/";
  return { kind, project, target, back: safeBack };
}
