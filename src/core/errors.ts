/** A refusal the model can act on: the message says what was wrong and how to fix the call. */
export class TaskError extends Error {
  override name = "TaskError";
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
