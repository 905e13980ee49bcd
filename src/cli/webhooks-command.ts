import type { ProjectWebhook, TaskReader } from "../store/task-reader.ts";
import type { CliArgs } from "./parse-cli-args.ts";
import type { CliIo } from "./cli-io.ts";
import { formatTable, type Column } from "./format-table.ts";

/** `webhooks [--show-secret]`: every webhook trigger with its URL; the secrets only when asked. */
export function webhooksCommand(reader: TaskReader, args: CliArgs, io: CliIo): void {
  const hooks = reader.webhooks(args.project).map((h) => (args.showSecret ? h : { ...h, secret: "(hidden: --show-secret)" }));
  if (args.json) return io.stdout(JSON.stringify(hooks, null, 2) + "\n");
  if (hooks.length === 0) return io.stdout("No webhooks. A trigger { \"webhook\": \"<name>\" } on an automation makes one.\n");
  const columns: Column<ProjectWebhook>[] = [
    { header: "NAME", value: (h) => h.name },
    { header: "URL", value: (h) => h.url ?? `/hooks/${h.name}` },
    { header: "AUTOMATION", value: (h) => `${h.automationId} ${h.title ?? ""}`.trim(), maxWidth: 40 },
    { header: "WAITING", value: (h) => String(h.waiting) },
    { header: "SECRET", value: (h) => h.secret },
  ];
  io.stdout(formatTable(hooks, columns));
}
