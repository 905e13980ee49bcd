import type { EvidenceRow, EvidenceStore, TaskEvidenceSpec } from "./evidence-types.ts";

/** The EvidenceStore for unit tests and for a plugin without a database. */
export class MemoryEvidenceStore implements EvidenceStore {
  private data = new Map<string, EvidenceRow>();
  private specs = new Map<string, TaskEvidenceSpec>();

  put(row: EvidenceRow): void {
    this.data.set(`${row.taskId}\u0000${row.run}\u0000${row.kind}\u0000${row.key}`, structuredClone(row));
  }

  rows(taskId: string, run?: number): EvidenceRow[] {
    return [...this.data.values()].filter((r) => r.taskId === taskId && (run === undefined || r.run === run)).map((r) => structuredClone(r));
  }

  putSpec(taskId: string, spec: TaskEvidenceSpec): void {
    this.specs.set(taskId, structuredClone(spec));
  }

  spec(taskId: string): TaskEvidenceSpec | undefined {
    const spec = this.specs.get(taskId);
    return spec && structuredClone(spec);
  }
}
