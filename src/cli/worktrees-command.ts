import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { UNSETTLED_STATUSES } from "../core/task.ts";
import type { ProjectTask } from "../store/reads/task-reads.ts";
import { listWorktrees, removeSpares, removeWorktree, worktreesRoot, type ListedWorktree } from "../worktrees/worktrees.ts";
import type { CliArgs } from "./parse-cli-args.ts";
import type { CliIo } from "./cli-io.ts";
import { formatTable, type Column } from "./format-table.ts";
import { openReader } from "./open-reader.ts";

type Row = ListedWorktree & { projectId: string; task?: ProjectTask };

const COLUMNS: Column<Row>[] = [
  { header: "BRANCH", value: (r) => r.branch, maxWidth: 60 },
  { header: "TASK", value: (r) => (r.task ? `${r.task.id} (${r.task.status})` : "-") },
  { header: "BASE", value: (r) => r.base.slice(0, 7) || "-" },
  { header: "UNMERGED", value: (r) => (r.unmerged ? `${r.unmergedCommits} commit${r.unmergedCommits === 1 ? "" : "s"}` : "no") },
  { header: "DIRECTORY", value: directoryText },
  { header: "PROJECT", value: (r) => r.projectId, maxWidth: 16 },
];

function directoryText(r: Row): string {
  if (!r.registered) return "(removed; branch kept)";
  return r.exists ? r.path : `(missing) ${r.path}`;
}

/**
 * `worktrees [--prune]`: the worktrees of isolated tasks under the database's folder, with their
 * branch, task, base, commits not merged and whether the directory is still there. --prune removes
 * those with nothing unmerged whose task is not running, and never one with unmerged commits.
 */
export async function worktreesCommand(dbPath: string, args: CliArgs, io: CliIo): Promise<number> {
  const dataDir = dirname(dbPath);
  const projects = await projectsOf(dataDir, args.project);
  const rows = await listAll(dataDir, projects, tasksByPath(dbPath));
  if (args.prune) {
    const spares = (await Promise.all(projects.map((p) => removeSpares(worktreesRoot(dataDir, p))))).reduce((a, b) => a + b, 0);
    return prune(rows, spares, io);
  }
  if (args.json) {
    io.stdout(JSON.stringify(rows.map(({ task, ...r }) => ({ ...r, taskId: task?.id ?? null, taskStatus: task?.status ?? null })), null, 2) + "\n");
  } else if (rows.length === 0) {
    io.stdout(`No worktrees. (Isolated tasks, isolation "worktree", make them under ${join(dirname(dbPath), "worktrees")}.)\n`);
  } else {
    io.stdout(formatTable(rows, COLUMNS));
  }
  return 0;
}

async function projectsOf(dataDir: string, project: string | undefined): Promise<string[]> {
  if (project) return [project];
  const entries = await readdir(join(dataDir, "worktrees"), { withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isDirectory()).map((e) => e.name);
}

async function listAll(dataDir: string, projects: string[], tasks: Map<string, ProjectTask>): Promise<Row[]> {
  const listed = await Promise.all(projects.map(async (projectId) => {
    const worktrees = await listWorktrees(worktreesRoot(dataDir, projectId));
    return worktrees.map((w) => ({ ...w, projectId, task: tasks.get(w.path) ?? tasks.get(`${w.repo}\0${w.branch}`) }));
  }));
  return listed.flat();
}

/** Tasks with a worktree, by its path and by repository and branch; none when there is no database yet. */
function tasksByPath(dbPath: string): Map<string, ProjectTask> {
  const byKey = new Map<string, ProjectTask>();
  if (!existsSync(dbPath)) return byKey;
  const reader = openReader(dbPath);
  try {
    for (const task of reader.tasks.list({ includeCleared: true })) {
      if (!task.worktree) continue;
      byKey.set(task.worktree.path, task);
      byKey.set(`${task.worktree.repo}\0${task.worktree.branch}`, task);
    }
  } finally {
    reader.close();
  }
  return byKey;
}

async function prune(rows: Row[], spares: number, io: CliIo): Promise<number> {
  const removed: string[] = [];
  const kept: string[] = [];
  for (const row of rows) {
    const why = reasonToKeep(row);
    if (why) {
      kept.push(`${row.branch}: ${why}`);
      continue;
    }
    const { branchDeleted } = await removeWorktree(row, { deleteBranch: "if-merged" });
    if (branchDeleted) removed.push(`${row.branch}${row.exists ? ` (${row.path})` : ""}`);
    else kept.push(`${row.branch}: its directory held uncommitted work, now committed on the branch; the directory is removed, the branch kept`);
  }
  io.stdout(removed.length ? `Removed ${removed.length}:\n${removed.map((r) => `  ${r}`).join("\n")}\n` : "Removed none.\n");
  if (spares) io.stdout(`Removed ${spares} spare checkout${spares === 1 ? "" : "s"} (made ahead so that launches are quick; the next isolated launch makes one again).\n`);
  if (kept.length) io.stdout(`Kept ${kept.length}:\n${kept.map((k) => `  ${k}`).join("\n")}\n`);
  return 0;
}

function reasonToKeep(row: Row): string | undefined {
  if (row.task && UNSETTLED_STATUSES.includes(row.task.status)) return `its task ${row.task.id} is ${row.task.status}`;
  if (!row.unmerged) return undefined;
  const n = `${row.unmergedCommits} commit${row.unmergedCommits === 1 ? "" : "s"}`;
  return `${n} not merged into the current branch of ${row.repo}. Merge it (background_merge, or git merge ${row.branch}), or delete it with git -C ${row.repo} branch -D ${row.branch}`;
}
