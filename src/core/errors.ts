/**
 * A refusal the model (or a person) can act on: the message says what was wrong and names the
 * fix (the argument to change, the tool or command to use instead). Nothing was changed. A tool
 * answers with the message; any other error is a crash, logged.
 */
export class RefusalError extends Error {
  override name = "RefusalError";
}

/** Refused by the task core: a background task's launch, resume, output or cancel. */
export class TaskError extends RefusalError {
  override name = "TaskError";
}

/** Refused by the automation layer: a definition, a trigger, a step, a run. */
export class AutomationRefusal extends RefusalError {
  override name = "AutomationRefusal";
}

/** Refused by proposals: a repeat within the cooldown, too many waiting, an expired or decided one. */
export class ProposalRefusal extends RefusalError {
  override name = "ProposalRefusal";
}

/** Refused by worker placement: no such worker, or it is unhealthy. */
export class WorkerRefusal extends RefusalError {
  override name = "WorkerRefusal";
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
