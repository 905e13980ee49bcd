import type { ReadModel } from "../store/reads/read-model.ts";
import type { CliIo } from "./cli-io.ts";

/** JSON is the only export format, so `--json` is accepted but not required. */
export function exportCommand(reader: ReadModel, dbPath: string, io: CliIo): void {
  const dump = {
    format: "opencode-errands-export",
    formatVersion: 1,
    exportedAt: new Date(io.now()).toISOString(),
    database: dbPath,
    schemaVersions: reader.schemaVersions(),
    tasks: reader.tasks.list({ includeCleared: true }),
    events: reader.tasks.allEvents(),
    notifications: reader.tasks.notifications(),
  };
  io.stdout(JSON.stringify(dump, null, 2) + "\n");
}
