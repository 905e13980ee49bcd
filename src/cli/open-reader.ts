import { StoreUnavailableError } from "../store/store-unavailable-error.ts";
import { TaskReader } from "../store/task-reader.ts";
import { CliError } from "./cli-error.ts";

/** Opens the database read-only, turning failures into a message that says what to do. */
export function openReader(path: string): TaskReader {
  try {
    return TaskReader.open(path);
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    throw new CliError(`${error.message}\nTo read another file, pass --db <path>.`, 1);
  }
}
