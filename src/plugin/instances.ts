import type { Hooks } from "@opencode-ai/plugin";

/**
 * The active plugin instances of this process, by project id. OpenCode starts the plugin again,
 * in the same process, for every worktree directory a task's child works in; that passive
 * instance finds the project's active one here. On globalThis (under a registered symbol) so that
 * a second copy of the module, loaded from another path, sees the same instances.
 */
const KEY = Symbol.for("opencode-errands.active-instances");

type Registry = Map<string, Hooks[]>;

function registry(): Registry {
  const holder = globalThis as { [KEY]?: Registry };
  return (holder[KEY] ??= new Map());
}

/** Adds an active instance of the project; the returned function removes it (at dispose). */
export function registerActive(projectId: string, hooks: Hooks): () => void {
  const all = registry();
  all.set(projectId, [...(all.get(projectId) ?? []), hooks]);
  return () => {
    const left = (all.get(projectId) ?? []).filter((h) => h !== hooks);
    if (left.length > 0) all.set(projectId, left);
    else all.delete(projectId);
  };
}

/** The project's active instance in this process (the first registered), if any. */
export function activeInstance(projectId: string): Hooks | undefined {
  return registry().get(projectId)?.[0];
}
