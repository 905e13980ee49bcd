/** Why a database could not be opened; decides what the person is told to do. */
export type StoreUnavailableReason =
  | "corrupt"
  | "locked"
  | "disk-full"
  | "permission"
  | "foreign"
  | "missing"
  | "driver-missing"
  | "unknown";

const ADVICE: Record<StoreUnavailableReason, string> = {
  corrupt:
    "The file is not a readable SQLite database (it may be corrupt). Move it aside (for example add .broken to its name) so that a new one is created, or set the dbPath option to another file.",
  locked:
    "Another process kept it locked for more than 5 seconds. Close other programs using it and try again, or set the dbPath option to another file.",
  "disk-full": "The disk is full. Free some space, or set the dbPath option to a file on another disk.",
  permission:
    "Check that the file and its folder exist and that you can read and write them, or set the dbPath option to another file.",
  foreign:
    "It is not an opencode-errands database, so it is left alone. Set the dbPath option to a new file.",
  missing:
    "There is no database yet: the plugin creates it when it first runs a background task. If the plugin's dbPath option is set, use that path.",
  "driver-missing":
    "The better-sqlite3 package (needed under Node) could not be loaded. Install it with: npm install better-sqlite3@12",
  unknown: "Check the file, or set the dbPath option to another file.",
};

/** The task database cannot be used. Nothing was deleted or overwritten. */
export class StoreUnavailableError extends Error {
  override readonly name = "StoreUnavailableError";

  constructor(
    readonly path: string,
    readonly reason: StoreUnavailableReason,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`Cannot use the background tasks database at ${path}: ${detail}. ${ADVICE[reason]}`, options);
  }
}

/** Wraps whatever a driver threw while opening or migrating into a StoreUnavailableError. */
export function toStoreUnavailable(path: string, error: unknown): StoreUnavailableError {
  if (error instanceof StoreUnavailableError) return error;
  const detail = error instanceof Error ? error.message : String(error);
  return new StoreUnavailableError(path, reasonOf(error), detail, { cause: error });
}

function reasonOf(error: unknown): StoreUnavailableReason {
  const code = String((error as { code?: unknown } | undefined)?.code ?? "");
  const message = error instanceof Error ? error.message : "";
  if (code === "SQLITE_NOTADB" || code.startsWith("SQLITE_CORRUPT")) return "corrupt";
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) return "locked";
  if (code === "SQLITE_FULL" || code === "ENOSPC") return "disk-full";
  if (code === "MODULE_NOT_FOUND" || code === "ERR_DLOPEN_FAILED") return "driver-missing";
  if (/^SQLITE_(CANTOPEN|PERM|READONLY|AUTH)/.test(code) || /^E(ACCES|PERM|NOENT|ROFS|ISDIR|NOTDIR|EXIST)$/.test(code)) {
    return "permission";
  }
  if (/directory does not exist|unable to open/i.test(message)) return "permission";
  return "unknown";
}
