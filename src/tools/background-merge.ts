import type { Clock } from "../core/clock.ts";
import type { TaskManager } from "../core/task-manager.ts";
import { TaskError, errorMessage } from "../core/errors.ts";
import type { Task, TaskWorktree } from "../core/task.ts";
import type { MergePreview } from "../worktrees/worktrees.ts";
import { loadWorktrees } from "../worktrees/load-worktrees.ts";
import { defineTool, type CallContext } from "./tool-kit.ts";
import { isolatedTask, refuseOutsideCaller, refuseWhileWorking } from "./isolated-task.ts";

/** How much of a diff the answer shows; the rest is one git command away. */
export const DIFF_CAP_CHARS = 16_000;

/** How much of a merge's diff its `edit` prompt carries (the TUI scrolls it; every file is named either way). */
export const PREVIEW_CAP_CHARS = 200_000;

export const MERGE_PERMISSION = "background_merge";

type Deps = { manager: TaskManager; clock: Clock; onCrash: (message: string, error: unknown) => void };
type Owned = Task & { worktree: TaskWorktree };

export function backgroundMergeTool({ manager, clock, onCrash }: Deps) {
  return defineTool({
    name: "background_merge",
    description: "Diff, merge or discard an isolated task's branch.",
    args: (s) => ({ task_id: s.string(), action: s.enum(["merge", "diff", "discard"]) }),
    onCrash,
    async run(args, call) {
      const task = await isolatedTask(manager, args.task_id, call.sessionID);
      refuseOutsideCaller(manager, task, call.sessionID);
      refuseWhileWorking(manager, task, args.action);
      if (args.action === "diff") return diff(task);
      // A merge that would be refused is refused before the user is asked to approve it.
      const refusal = args.action === "merge" ? await (await loadWorktrees()).checkMerge(task.worktree) : undefined;
      if (refusal) return notMerged(task, refusal);
      const preview = args.action === "merge" ? await (await loadWorktrees()).mergePreview(task.worktree, PREVIEW_CAP_CHARS) : undefined;
      await approve(call, task, args.action, preview);
      const done = args.action === "merge" ? await merge(task) : await discard(task);
      if (done.removed) manager.recordWorktreeRemoval(task.id, { at: clock.now(), by: args.action, branchKept: false });
      return done.answer;
    },
  });
}

async function diff(task: Owned): Promise<string> {
  const { branch, base } = task.worktree;
  const { text, truncated, seeRest } = await (await loadWorktrees()).worktreeDiff(task.worktree, DIFF_CAP_CHARS);
  if (!text.trim()) return `Task ${task.id}'s branch ${branch} has no changes against its base ${base.slice(0, 7)}.`;
  const tail = truncated ? [`(cut at ${DIFF_CAP_CHARS} characters; all of it: ${seeRest})`] : [];
  return [`Diff of task ${task.id}'s branch ${branch} against its base ${base.slice(0, 7)}:`, text, ...tail].join("\n");
}

/** Checked again as it merges: the checkout may have changed while the user decided. */
async function merge(task: Owned): Promise<{ removed: boolean; answer: string }> {
  const { mergeWorktree, removeWorktree } = await loadWorktrees();
  const result = await mergeWorktree(task.worktree);
  if (!result.merged) return { removed: false, answer: notMerged(task, result) };
  try {
    const { branchDeleted } = await removeWorktree(task.worktree, { deleteBranch: "if-merged" });
    return { removed: true, answer: `${result.summary} Removed its worktree${branchDeleted ? " and branch" : ""}.` };
  } catch (error) {
    // The merge is done: say so, and how to remove what is left.
    return { removed: false, answer: `${result.summary} Its worktree could not be removed (${errorMessage(error)}); \`opencode-errands worktrees --prune\` removes it.` };
  }
}

function notMerged(task: Owned, refusal: { conflicts: string[]; reason: string }): string {
  const files = refusal.conflicts.length ? ["Conflicting files:", ...refusal.conflicts.map((f) => `- ${f}`)] : [];
  return [`Not merged: ${said(refusal.reason)}`, ...files, `The branch ${task.worktree.branch} and its worktree stay (action "diff" shows it, "discard" drops it).`].join("\n");
}

/** A refusal always says that nothing changed. */
const said = (reason: string) => (/Nothing was changed/.test(reason) ? reason : `${reason} Nothing was changed.`);

async function discard(task: Owned): Promise<{ removed: boolean; answer: string }> {
  const { branch } = task.worktree;
  const { removeWorktree, unmergedCommitCount } = await loadWorktrees();
  const commits = await unmergedCommitCount(task.worktree);
  await removeWorktree(task.worktree, { deleteBranch: true });
  const lost = commits ? ` (${commits} commit${commits === 1 ? "" : "s"} not merged, now gone)` : "";
  return { removed: true, answer: `Discarded task ${task.id}'s branch ${branch}${lost} and removed its worktree.` };
}

/**
 * OpenCode's permission prompts, asked before anything changes (a merge only once it is known to
 * land): merge and discard change the user's repository. Branch names hold no `*` or `?` (git
 * refuses them), so the pattern is no wildcard; "always" allows that action for every branch for
 * the rest of the process. A merge then asks `edit` for the files it writes, with their diff, as
 * OpenCode's own apply_patch does (one prompt: the paths as patterns, "always" any file): the
 * user's edit rules decide too, and the TUI draws that diff where the person answers.
 */
async function approve(call: CallContext, task: Owned, action: "merge" | "discard", preview?: MergePreview): Promise<void> {
  if (!call.ask) return;
  const { branch, repo } = task.worktree;
  const title = action === "merge"
    ? `Merge branch ${branch} of task ${task.id} "${task.description}" into the current branch of ${repo}`
    : `Discard branch ${branch} of task ${task.id} "${task.description}" and its worktree`;
  const files = preview?.files.map((f) => `${f.path} (+${f.additions} -${f.deletions})`);
  try {
    await call.ask({ permission: MERGE_PERMISSION, patterns: [`${action} ${branch}`], always: [`${action} *`], metadata: { title, task: task.id, branch, action, ...(files ? { files } : {}) } });
    if (preview?.files.length) {
      const paths = preview.files.map((f) => f.path);
      await call.ask({ permission: "edit", patterns: paths, always: ["*"], metadata: { filepath: paths.join(", "), diff: preview.diff, ...(preview.truncated ? { truncated: true } : {}) } });
    }
  } catch (error) {
    throw new TaskError(`The user rejected the ${action} of ${branch}; nothing was changed. (${errorMessage(error)})`);
  }
}
