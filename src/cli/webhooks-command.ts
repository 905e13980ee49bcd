import { SharedStore } from "../store/shared-store.ts";
import type { ProjectWebhook } from "../store/reads/automation-reads.ts";
import type { ReadModel } from "../store/reads/read-model.ts";
import type { CliArgs } from "./parse-cli-args.ts";
import { CliError } from "./cli-error.ts";
import type { CliIo } from "./cli-io.ts";
import { formatTable, type Column } from "./format-table.ts";

const MIN_SECRET = 16;
const MAX_SECRET = 4096;

/**
 * `webhooks [--show-secret]`: every webhook trigger with its URL; the secrets only when asked.
 * `webhooks set-secret <name>`: the user's own secret for a hook (returns the promise of its exit code).
 */
export function webhooksCommand(reader: ReadModel, dbPath: string, args: CliArgs, io: CliIo): Promise<number> | undefined {
  if (args.operands[0] === "set-secret") return setSecret(reader, dbPath, args.operands[1]!, io);
  if (args.showSecret && insideOpenCode(io)) {
    throw new CliError("Not shown: this runs inside an OpenCode tool call (AGENT or OPENCODE is set), and a webhook's secret must not pass through the model. Run `opencode-errands webhooks --show-secret` in your own terminal.", 1);
  }
  const hooks = reader.automations.webhooks(args.project).map((h) => (args.showSecret ? h : { ...h, secret: "(hidden: --show-secret)" }));
  if (args.json) return void io.stdout(JSON.stringify(hooks, null, 2) + "\n");
  if (hooks.length === 0) return void io.stdout("No webhooks. A trigger { \"webhook\": \"<name>\" } on an automation makes one.\n");
  const columns: Column<ProjectWebhook>[] = [
    { header: "NAME", value: (h) => h.name },
    { header: "URL", value: (h) => h.url ?? `/hooks/${h.name}` },
    { header: "AUTOMATION", value: (h) => `${h.automationId} ${h.title ?? ""}`.trim(), maxWidth: 40 },
    { header: "WAITING", value: (h) => String(h.waiting) },
    { header: "SECRET", value: (h) => h.secret },
  ];
  io.stdout(formatTable(hooks, columns));
}

/** OpenCode's bash tool sets AGENT=1 and OPENCODE=1: a secret printed or piped in there reaches the model. */
function insideOpenCode(io: CliIo): boolean {
  return io.env.AGENT === "1" || io.env.OPENCODE === "1";
}

/**
 * Reads the secret from stdin: typed twice without echo on a terminal, else the whole input (a
 * pipe or a file) less its final newline. Never from argv: the command line lands in the shell's
 * history and, while it runs, in every local user's `ps`.
 */
async function setSecret(reader: ReadModel, dbPath: string, name: string, io: CliIo): Promise<number> {
  if (insideOpenCode(io)) {
    throw new CliError(`Not set: this runs inside an OpenCode tool call (AGENT or OPENCODE is set), and a webhook's secret must not pass through the model. Run \`opencode-errands webhooks set-secret ${name}\` in your own terminal. Nothing was changed.`, 1);
  }
  if (!reader.automations.webhooks().some((h) => h.name === name)) {
    throw new CliError(`No webhook named "${name}". \`opencode-errands webhooks\` lists them. Nothing was changed.`, 1);
  }
  const secret = await readNewSecret(name, io);
  const problem = secretProblem(secret);
  if (problem) throw new CliError(`Not set: the secret ${problem}. Nothing was changed.`, 1);
  const store = SharedStore.open(dbPath);
  try {
    store.setWebhookSecret(name, secret);
  } finally {
    store.close();
  }
  io.stdout(`Webhook ${name}: the new secret is set (${secret.length} characters). Deliveries signed with the old one are refused (401) from now on. \`opencode-errands webhooks --show-secret\` shows it.\n`);
  return 0;
}

async function readNewSecret(name: string, io: CliIo): Promise<string> {
  if (io.readSecret) {
    const first = await io.readSecret(`New secret for webhook ${name} (at least ${MIN_SECRET} characters, not shown): `);
    const again = await io.readSecret("The same again: ");
    if (first !== again) throw new CliError("Not set: the two secrets typed did not match; nothing was changed.", 1);
    return first;
  }
  if (!io.readStdin) throw new CliError(`Not set: give the secret on stdin, e.g. \`opencode-errands webhooks set-secret ${name} < secret.txt\`. Nothing was changed.`, 1);
  return (await io.readStdin()).replace(/\r?\n$/, "");
}

function secretProblem(secret: string): string | undefined {
  if (secret.length < MIN_SECRET) return `must be at least ${MIN_SECRET} characters (got ${secret.length})`;
  if (secret.length > MAX_SECRET) return `must be at most ${MAX_SECRET} characters`;
  if (/[\x00-\x1f\x7f]/.test(secret)) return "must not contain control characters (a newline inside, a tab...)";
  return undefined;
}
