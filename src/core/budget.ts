/**
 * A spending limit for a task tree (the task with its descendants): USD, and/or tokens counted as
 * input + output + reasoning (cache reads and writes are not counted). At least one is set, each > 0.
 */
export type Budget = { usd?: number; tokens?: number };
