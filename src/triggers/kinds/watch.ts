import type { RunningSource } from "../trigger-source.ts";
import { parseDuration, stringList, TriggerSpecError } from "../trigger-input.ts";
import { defineKind } from "./trigger-kind.ts";
import { orList } from "./words.ts";

export type WatchSpec = { kind: "watch"; paths: string[]; ignore: string[]; debounce: string; debounceMs: number };

/** Files in the project change (after a quiet `debounce`); a run's own writes do not count. */
export const watchKind = defineKind<WatchSpec, "event">({
  key: "watch", kind: "watch", timing: "event", fields: ["ignore", "debounce"],
  shape: '{"watch":["src/","test/**/*.ts"],"ignore":["**/*.log"],"debounce":"2s"}',
  args: (_s, { text, list }) => ({ watch: list, ignore: list, debounce: text }),
  parse: (input) => {
    const paths = stringList("watch", input.watch, 'e.g. ["src/", "test/**/*.ts"]');
    if (paths.length === 0) throw new TriggerSpecError(`"watch" needs at least one path or glob relative to the project, e.g. ["src/"].`);
    for (const path of paths) {
      if (path.startsWith("/") || path.split("/").includes("..")) {
        throw new TriggerSpecError(`"watch": "${path}" must be relative to the project and stay inside it, e.g. "src/".`);
      }
    }
    const ignore = stringList("ignore", input.ignore ?? [], 'e.g. ["**/*.log"]');
    const debounce = String(input.debounce ?? "1s");
    return { kind: "watch", paths, ignore, debounce, debounceMs: parseDuration(debounce, "debounce", 50, 3_600_000) };
  },
  describe: (spec) => `when ${orList(spec.paths)} change${spec.paths.length === 1 && !/[*?/]$/.test(spec.paths[0]!) ? "s" : ""}`,
  inFull: (spec) => ({
    text: `when these paths change (debounce ${spec.debounce})${spec.ignore.length ? `, ignoring ${JSON.stringify(spec.ignore)}` : ""}`,
    exact: spec.paths,
  }),
  start: async (spec, ctx): Promise<RunningSource> => (await import("../watch-source.ts")).startWatchSource(spec, ctx),
});
