import { describe, it } from "bun:test";
import { MemoryTaskStore } from "../../src/core/memory-task-store.ts";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import { defineTaskStoreSuite } from "./task-store-suite.ts";

defineTaskStoreSuite("MemoryTaskStore", () => new MemoryTaskStore(), { describe, it });
defineTaskStoreSuite("SqliteTaskStore", ({ file, projectId }) => SqliteTaskStore.open({ path: file, projectId }), {
  describe,
  it,
  durable: true,
});
