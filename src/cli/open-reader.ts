import { StoreUnavailableError } from "../store/store-unavailable-error.ts";
import { ReadModel } from "../store/reads/read-model.ts";
import { CliError } from "./cli-error.ts";

/** Opens the database read-only, turning failures into a message that says what to do. */
export function openReader(path: string): ReadModel {
  try {
    return ReadModel.open(path);
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    throw new CliError(`${error.message}\nTo read another file, pass --db <path>.`, 1);
  }
}
