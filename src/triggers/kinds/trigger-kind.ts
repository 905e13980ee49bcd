import type { tool } from "@opencode-ai/plugin";
import type { RunningSource, SourceContext } from "../trigger-source.ts";

type S = typeof tool.schema;

/** A trigger object as the model writes it: one kind key, plus that kind's own fields. */
export type TriggerInput = Readonly<Record<string, unknown>>;

/** What parsing may know besides the input: the time (an `at` in the past) and the user's zone. */
export type ParseContext = { now: number; defaultZone: string };

/**
 * What a kind may look up or claim before anything is stored (task_create, task_trigger_add,
 * task_propose). `automationId` is the automation the trigger belongs to (new or existing).
 */
export type PrepareContext = {
  automationId: string;
  /** The project directory ("." resolves against it). */
  directory: string;
  /** An automation of this project, by id. */
  automationExists(id: string): boolean;
  /** An automation's stored triggers (e.g. to follow chains between automations). */
  specsOf(automationId: string): readonly { kind: string }[];
  /** Webhooks: whether a name is stored already, and the URL a name is served at (undefined: this process serves none). */
  webhookTaken(name: string): boolean;
  webhookUrl(name: string): string | undefined;
};

/** A command the user's bash permission must allow before the trigger is stored. */
export type CommandNeed = { command: string; refusal: (refused: string) => string };

/** What a prepared trigger adds: a new webhook's name (its secret is made by the caller). */
export type Prepared = { webhook?: string } | void;

/** Where a source reaches outside the project (the GitHub API). */
export type KindEnv = { githubApiUrl: string };

/** Shared argument pieces (zod schemas are immutable: one instance each serves every field). */
export type ArgPieces = { text: unknown; list: unknown };

/**
 * One trigger kind: everything about it in one object, so a new kind is one file and one line
 * in registry.ts. `key` is the input's kind key, `kind` the stored spec's tag (they differ for
 * schedules: every -> interval, at -> once). Schedules are fired by the clock; events by `start`
 * (or, for webhooks, by the one listener).
 */
export type TriggerKind<Spec extends { kind: string } = { kind: string }, Timing extends "schedule" | "event" = "schedule" | "event"> = {
  key: string;
  kind: Spec["kind"];
  timing: Timing;
  /** The other input keys it takes (one key may serve several kinds, e.g. every). */
  fields: readonly string[];
  /** Its shape as the model writes it; every refusal of a trigger's kind shows all shapes. */
  shape: string;
  /** A few words for task_create's description of triggers, when its key and fields do not say enough. */
  brief?: string;
  /** Its tool-argument fields (only those no earlier kind declared). */
  args(s: S, pieces: ArgPieces): Record<string, unknown>;
  /** Checks the input and returns the stored form, defaults filled in; throws TriggerSpecError naming the fix. */
  parse(input: TriggerInput, ctx: ParseContext): Spec;
  /** In words, for lists: "when src/ changes". */
  describe(spec: Spec): string;
  /** Every field that decides what runs and when (proposals are shown in full); default: describe. */
  inFull?(spec: Spec): { text: string; exact?: string[] };
  /** Lookups and claims before storing (a webhook's name, a repository, a cycle); may change the spec; throws TriggerSpecError. */
  prepare?(spec: Spec, ctx: PrepareContext): Promise<Prepared> | Prepared;
  /**
   * The checks of `prepare` that read other stored triggers, again inside the transaction that
   * stores this one (synchronous): two calls that each passed `prepare` may not both be stored
   * when together they break the rule (two `after` triggers closing a cycle). Throws TriggerSpecError.
   */
  recheck?(spec: Spec, ctx: Pick<PrepareContext, "automationId" | "specsOf">): void;
  /** Commands it will run that the user's bash permission must allow first. */
  commands?(spec: Spec): CommandNeed[];
  /** Starts its source (importing its module now, not at plugin start). */
  start?(spec: Spec, ctx: SourceContext, env: KindEnv): Promise<RunningSource>;
};

/** Keeps a kind's literal types (its spec and timing) for the registry's unions. */
export function defineKind<Spec extends { kind: string }, Timing extends "schedule" | "event">(kind: TriggerKind<Spec, Timing>): TriggerKind<Spec, Timing> {
  return kind;
}
