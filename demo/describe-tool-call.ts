/** One-line summaries of a child's tool call, for the timeline. */
import { basename } from "node:path";
import { oneLine } from "./timeline.ts";

export type ToolState = { status: string; input?: Record<string, unknown>; output?: string; error?: string };

/** e.g. `bash "echo hi" -> hi` or `read README.md -> test project`. */
export function describeToolCall(tool: string, state: ToolState): string {
  const result = state.status === "error" ? `failed: ${oneLine(state.error ?? "", 50)}` : `-> ${outputSummary(tool, state.output ?? "")}`;
  return `${tool} ${inputSummary(tool, state.input ?? {})} ${result}`;
}

function inputSummary(tool: string, input: Record<string, unknown>): string {
  if (tool === "bash" && typeof input.command === "string") return JSON.stringify(input.command);
  if (typeof input.filePath === "string") return basename(input.filePath);
  return oneLine(JSON.stringify(input), 40);
}

function outputSummary(tool: string, output: string): string {
  if (tool === "read") return JSON.stringify(oneLine(fileLines(output), 40));
  return JSON.stringify(oneLine(output, 40));
}

/** The file text of a `read` result, without its wrapper and line numbers. */
function fileLines(output: string): string {
  const numbered = output.split("\n").filter((line) => /^\s*\d+[|:]/.test(line));
  if (numbered.length === 0) return output;
  return numbered.map((line) => line.replace(/^\s*\d+[|:]\s?/, "")).join(" ");
}
