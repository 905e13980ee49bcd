import { readFileSync, writeFileSync } from "node:fs";
import type { Task } from "../src/core/task.ts";

/**
 * How the best-known competing plugin keeps tasks: all of them in memory, and one JSON file
 * with every task rewritten whole, synchronously, on every save.
 */
export class JsonFileTaskStore {
  private readonly tasks = new Map<string, Task>();

  constructor(private readonly path: string) {}

  save(task: Task): void {
    this.tasks.set(task.id, task);
    writeFileSync(this.path, JSON.stringify([...this.tasks.values()]));
  }

  /** What listing costs them in memory: filter and sort, handing out their own objects. */
  list(): Task[] {
    return [...this.tasks.values()].filter((t) => t.clearedAt === undefined).sort((a, b) => a.createdAt - b.createdAt);
  }

  /** What listing costs them from the file, as after a restart. */
  load(): Task[] {
    const tasks = JSON.parse(readFileSync(this.path, "utf8")) as Task[];
    for (const task of tasks) this.tasks.set(task.id, task);
    return this.list();
  }

  /** Fills memory and writes the file once, so seeding does not pay a rewrite per task. */
  seed(tasks: Task[]): void {
    for (const task of tasks) this.tasks.set(task.id, task);
    writeFileSync(this.path, JSON.stringify(tasks));
  }
}
