import { mkdtempSync } from "node:fs"; import { tmpdir } from "node:os"; import { join } from "node:path";
import { TaskManager } from "./src/core/task-manager.ts";
import { DEFAULT_OPTIONS } from "./src/options.ts"; import { SqliteTaskStore } from "./src/store/sqlite-task-store.ts";
import { createAutomations } from "./src/automations/create-automations.ts";
import type { Clock } from "./src/core/clock.ts";
const t0 = Date.now();
const clock: Clock = { now: () => Date.now(), setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as any) };
const store = SqliteTaskStore.open({ path: join(mkdtempSync(join(tmpdir(), "x-")), "t.db"), projectId: "b" });
const host: any = { agents: async () => [], log: async () => {}, statuses: async () => ({}) };
const manager = new TaskManager(host, store, clock, DEFAULT_OPTIONS);
const service = createAutomations({ store, manager, host, clock }, DEFAULT_OPTIONS);
const zones = ["UTC", "Europe/Paris", "America/New_York", "Asia/Tokyo"];
const hour = (new Date().getUTCHours() + 3) % 24;
for (let i = 0; i < 1000; i++) {
  const id = service.newAutomationId();
  const trigger = i % 2 === 0 ? { every: `${1 + (i % 24)}h` } : { cron: `${i % 60} ${hour} * * *`, timezone: zones[i % zones.length] };
  service.create(id, { agent: "general", notify: "never", sessionMode: "fresh", overlap: "skip", catchUp: "skip", enabled: true, title: `b${i}`, prompt: "c" }, service.parseTriggers([trigger], id), { sessionID: "s", agent: "build" });
}
await manager.start();
const w = service.scheduler.wake.bind(service.scheduler);
service.scheduler.wake = () => { console.log(`+${Date.now() - t0} wake next=${(store.db.prepare("SELECT min(next_at) m FROM automation_triggers").get()!.m as number) - Date.now()}`); w(); };
service.start();
await new Promise((r) => setTimeout(r, 130000));
process.exit(0);
