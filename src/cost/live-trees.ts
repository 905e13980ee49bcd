import { addSpend, NO_SPEND, type Spend } from "./spend.ts";

type Node = { parent: Node | undefined; total: Spend; since: number };

/**
 * The spend of each task tree this process launched, kept from the requests it records, so that
 * a settle reads its tree's total without a query. Only while it is the whole truth: a tree
 * counts from memory when no other connection has written to the database since the task was
 * launched (SQLite's data_version, `since`); otherwise its rows are read, as for any other task.
 */
export class LiveTrees {
  private readonly nodes = new Map<string, Node>();

  /** `since`: the database's data_version as read before the task's first prompt. */
  launched(taskId: string, parentId: string, since: number): void {
    this.nodes.set(taskId, { parent: this.nodes.get(parentId), total: NO_SPEND, since });
  }

  /** What a recorded request adds: to its task and to every tree it is part of. */
  add(taskId: string, added: Spend): void {
    for (let node = this.nodes.get(taskId); node; node = node.parent) node.total = addSpend(node.total, added);
  }

  /** The tree's total, or undefined when memory does not hold all of it (not launched here, or another connection wrote since). */
  total(taskId: string, version: number): Spend | undefined {
    const node = this.nodes.get(taskId);
    return node && node.since === version ? node.total : undefined;
  }

  /** Each task whose tree holds it. A parent gone keeps its node for its children to add to, unread. */
  forget(taskId: string): void {
    this.nodes.delete(taskId);
  }
}
