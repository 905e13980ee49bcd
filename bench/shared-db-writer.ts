/**
 * The second OpenCode process of the shared-db benchmark: writes `rate` task rows a second to the
 * database (alternately a progress update of a running task and a new task) until stdin closes.
 * Usage: shared-db-writer.ts DB_PATH PROJECT RATE
 */
import { SqliteTaskStore } from "../src/store/sqlite-task-store.ts";
import { benchTask } from "./bench-tasks.ts";

const [path, projectId, rate] = process.argv.slice(2);
const store = SqliteTaskStore.open({ path: path!, projectId: projectId! });
let n = 0;
const timer = setInterval(() => {
  n++;
  const task = n % 2 === 0 ? benchTask(n % 20, false) : benchTask(1_000_000 + n, false);
  task.progress.toolCalls = n;
  task.progress.lastActivityAt = Date.now();
  store.save(task);
}, 1000 / Number(rate));
process.stdout.write("writing\n");
process.stdin.resume();
process.stdin.on("end", () => {
  clearInterval(timer);
  store.close();
  process.stdout.write(`wrote ${n}\n`);
  process.exit(0);
});
