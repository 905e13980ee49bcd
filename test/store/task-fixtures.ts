import type { Task } from "../../src/core/task.ts";
import type { PendingNotification } from "../../src/core/task-store.ts";

/** A task with every optional field set. */
export function fullTask(overrides: Partial<Task> = {}): Task {
  return {
    id: "ses_full",
    parentSessionID: "ses_parent",
    batchId: "msg_batch",
    description: "Find the flaky test",
    prompt: "Look through test/ and find the flaky one. Quote: \"'; DROP TABLE tasks; --",
    agent: "general",
    model: { providerID: "anthropic", modelID: "claude-sonnet" },
    parentAgent: "build",
    parentModel: { providerID: "openai", modelID: "gpt-5" },
    status: "completed",
    isForked: true,
    resumeCount: 2,
    result: "It is test/io.test.ts — timing dependent. ✓ ünïcödé",
    error: "an earlier error kept for the record",
    progress: { toolCalls: 7, lastTools: ["read", "grep", "bash"], lastActivityAt: 1_700_000_004_000 },
    createdAt: 1_700_000_000_000,
    promptedAt: 1_700_000_001_000,
    startedAt: 1_700_000_000_500,
    settledAt: 1_700_000_005_000,
    retrievedAt: 1_700_000_006_000,
    clearedAt: 1_700_000_007_000,
    budget: { usd: 0.5, tokens: 200_000 },
    ...overrides,
  };
}

/** A running task with no optional field set. */
export function runningTask(id: string, overrides: Partial<Task> = {}): Task {
  return {
    id,
    parentSessionID: "ses_parent",
    batchId: "msg_1",
    description: `task ${id}`,
    prompt: `do ${id}`,
    agent: "general",
    model: { providerID: "anthropic", modelID: "claude-sonnet" },
    parentAgent: "build",
    status: "running",
    isForked: false,
    resumeCount: 0,
    progress: { toolCalls: 0, lastTools: [], lastActivityAt: 1_000 },
    createdAt: 1_000,
    promptedAt: 1_000,
    ...overrides,
  };
}

export function notification(id: string, overrides: Partial<PendingNotification> = {}): PendingNotification {
  return {
    id,
    parentSessionID: "ses_parent",
    taskId: "ses_a",
    text: `notification ${id}`,
    wake: false,
    createdAt: 1_000,
    ...overrides,
  };
}

/** Drops keys whose value is undefined: stores may leave such keys out. */
export function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
