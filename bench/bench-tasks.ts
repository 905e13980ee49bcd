import type { Task } from "../src/core/task.ts";

const PROMPT = "Look through the repository and find where the retry logic lives. ".repeat(9); // ~600 chars
export const RESULT = "Found it in src/net/retry.ts: the backoff doubles up to 30 s, then gives up. ".repeat(19); // ~1,500 chars

/** A task of realistic size: about 2.2 KB once settled. */
export function benchTask(i: number, settled: boolean): Task {
  const createdAt = 1_700_000_000_000 + i * 1_000;
  const task: Task = {
    id: `ses_${String(i).padStart(8, "0")}bench`,
    parentSessionID: `ses_parent_${i % 50}`,
    batchId: `msg_${Math.floor(i / 4)}`,
    description: `Find the retry logic, part ${i}`,
    prompt: PROMPT,
    agent: "general",
    model: { providerID: "anthropic", modelID: "claude-sonnet-4" },
    parentAgent: "build",
    parentModel: { providerID: "anthropic", modelID: "claude-opus-4" },
    status: "running",
    isForked: i % 3 === 0,
    resumeCount: 0,
    progress: { toolCalls: i % 20, lastTools: ["read", "grep", "bash"], lastActivityAt: createdAt + 500 },
    createdAt,
    promptedAt: createdAt,
  };
  return settled ? { ...task, status: "completed", result: RESULT, settledAt: createdAt + 60_000 } : task;
}
