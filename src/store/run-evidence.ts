import type { CommandEvidence, EvidenceStore, FailedTool, FileEvidence, RunEvidence } from "../evidence/evidence-types.ts";

/** A run's evidence as stored (rows of the evidence table), each list in the order first seen. */
export function readRun(store: Pick<EvidenceStore, "rows">, taskId: string, run: number): RunEvidence {
  const evidence: RunEvidence = { taskId, run, files: [], commands: [], failures: [], contradictions: [] };
  for (const row of store.rows(taskId, run)) {
    if (row.kind === "file") evidence.files.push(row.data as FileEvidence);
    if (row.kind === "command") evidence.commands.push(row.data as CommandEvidence);
    if (row.kind === "failure") evidence.failures.push(row.data as FailedTool);
    if (row.kind === "contradiction") evidence.contradictions = row.data as RunEvidence["contradictions"];
  }
  const bySeq = (a: { seq: number }, b: { seq: number }) => a.seq - b.seq;
  evidence.files.sort(bySeq);
  evidence.commands.sort(bySeq);
  evidence.failures.sort(bySeq);
  return evidence;
}
