import type { ToolCallInfo } from "./host.ts";

const STATUSES = ["pending", "running", "completed", "error"] as const;
const INPUT_KEY_CAP = 2000;

/**
 * Reads a `tool` part (v2 shape, as OpenCode 1.18 sends it in `message.part.updated`) into what the
 * evidence needs. Seen on the host: `pending` has `input: {}`; `running` has the input and
 * `time.start`; `completed` adds `output`, `metadata` (bash: `exit`; edit: `filediff.additions`,
 * `filediff.deletions`; write: `exists`, whether the file was there before) and `time.end`; `error`
 * has `state.error` instead.
 */
export function toolCallInfo(part: any): ToolCallInfo {
  const state = part.state ?? {};
  const input = isObject(state.input) ? state.input : {};
  const metadata = isObject(state.metadata) ? state.metadata : {};
  const status = STATUSES.includes(state.status) ? state.status : "pending";
  const info: ToolCallInfo = { status, files: filesOf(String(part.tool), input, metadata), inputKey: inputKey(input) };
  if (typeof input.command === "string") info.command = input.command;
  if (typeof metadata.exit === "number") info.exitCode = metadata.exit;
  if (typeof state.time?.start === "number") info.startedAt = state.time.start;
  if (typeof state.time?.end === "number") info.endedAt = state.time.end;
  if (status === "error") info.error = firstLine(state.error);
  const diff = metadata.filediff;
  if (typeof diff?.additions === "number") info.additions = diff.additions;
  if (typeof diff?.deletions === "number") info.deletions = diff.deletions;
  return info;
}

/** The files a call of `tool` with these arguments is about to write (for `tool.execute.before`). */
export function filesAboutToBeWritten(tool: string, args: unknown): string[] {
  return filesOf(tool, isObject(args) ? args : {}, {}).map((f) => f.path);
}

function filesOf(tool: string, input: any, metadata: any): ToolCallInfo["files"] {
  if (tool === "write" && typeof input.filePath === "string") {
    return [{ path: input.filePath, action: metadata.exists === false ? "created" : "written" }];
  }
  if ((tool === "edit" || tool === "multiedit") && typeof input.filePath === "string") return [{ path: input.filePath, action: "edited" }];
  if ((tool === "patch" || tool === "apply_patch") && typeof input.patchText === "string") return patchFiles(input.patchText);
  return [];
}

/** The files an OpenCode patch (`*** Add File: p`, `*** Update File: p`, `*** Delete File: p`, `*** Move to: p`) names. */
function patchFiles(text: string): ToolCallInfo["files"] {
  const files: ToolCallInfo["files"] = [];
  for (const match of text.matchAll(/^\*\*\* (Add File|Update File|Delete File|Move to): (.+)$/gm)) {
    const action = match[1] === "Add File" ? "created" : match[1] === "Delete File" ? "deleted" : "patched";
    files.push({ path: match[2]!.trim(), action });
  }
  return files;
}

function inputKey(input: Record<string, unknown>): string {
  const text = JSON.stringify(input);
  return text.length > INPUT_KEY_CAP ? `${text.slice(0, INPUT_KEY_CAP)}…${text.length}` : text;
}

function firstLine(error: unknown): string {
  const text = typeof error === "string" ? error : String((error as any)?.message ?? error ?? "unknown error");
  return text.trim().split("\n")[0]!.slice(0, 300);
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
