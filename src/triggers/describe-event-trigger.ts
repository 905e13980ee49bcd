import type { EventSpec } from "../automations/automation.ts";

const EVENT_WORDS: Record<string, string> = {
  push: "pushes", pr_opened: "new PRs", pr_merged: "merged PRs", pr_review: "PR reviews", ci_complete: "finished CI",
  ci_failed: "failed CI", issue_opened: "new issues", issue_comment: "issue comments", release: "releases",
};

/** An event trigger in words, for lists: "when src/ or test/**\/*.ts change". */
export function describeEventTrigger(spec: EventSpec): string {
  switch (spec.kind) {
    case "watch":
      return `when ${orList(spec.paths)} change${spec.paths.length === 1 && !/[*?/]$/.test(spec.paths[0]!) ? "s" : ""}`;
    case "command":
      return `when \`${clip(spec.command, 60)}\` ${spec.diff === "exit_code" ? "exit code" : "output"} changes (checked every ${spec.every})`;
    case "webhook":
      return `POST ${spec.url ?? `http://127.0.0.1:4097/hooks/${spec.name}`}`;
    case "github": {
      const words = orList(spec.events.map((e) => EVENT_WORDS[e] ?? e)).replace(/ or /g, " and ");
      return `${words} on ${spec.repo}${spec.ref ? ` (${spec.ref})` : ""}`;
    }
  }
}

function orList(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`;
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
