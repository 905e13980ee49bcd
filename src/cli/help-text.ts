export const HELP_TEXT = `opencode-errands: inspect the tasks of the OpenCode background tasks plugin

Usage:
  opencode-errands list [--project <id>] [--status <s>[,<s>...]] [--parent <session>] [--all] [--json]
  opencode-errands show <task id or unique prefix> [--json]
  opencode-errands export [--json]
  opencode-errands dashboard [--port 4098] [--host 127.0.0.1] [--open]
  opencode-errands automations [--project <id>] [--json]
  opencode-errands runs <automation id or unique prefix> [--json]
  opencode-errands webhooks [--project <id>] [--show-secret] [--json]
  opencode-errands webhooks set-secret <name>   (the secret on stdin: typed, piped or < file)
  opencode-errands proposals [--project <id>] [--json]
  opencode-errands proposals approve <proposal id or unique prefix> [--yes] [--json]
  opencode-errands proposals reject <proposal id or unique prefix> [--json]
  opencode-errands workers [--project <id>] [--json]
  opencode-errands costs [--since 7d] [--by automation|model|day] [--project <id>] [--json]
  opencode-errands worktrees [--prune] [--project <id>] [--json]
  opencode-errands --help

Commands:
  list     Tasks of every project, oldest first, with where each runs (local, or the worker's
           name) and what it spent with the tasks it launched ($0.081 · 15.0k tok: tokens are
           input + output + reasoning, cache reads not counted; a model without a price shows
           tokens only). Tasks hidden with background_clear are left out unless --all is given.
  show     One task with all its fields (where it runs, and that worker's health) and its
           timeline from the event log.
  export   Everything in the database (tasks, events, notifications) as JSON.
  dashboard  A live web page of tasks and automations, with cancel, pause, resume, run now,
           delete, and approve or reject for proposals. Prints its URL (with a one-time token);
           Ctrl-C stops it. Without --db it may start before the plugin has created the
           database, and shows it once it exists. When OpenCode already serves the dashboard
           on that port (plugin option dashboardPort), it prints (and with --open opens) a
           signed-in URL for that one instead: the token is only ever printed here, never in
           OpenCode's log.
  automations  Automations (scheduled background tasks) with state (paused and why), triggers,
           next run and last run.
  runs     One automation's run history, newest first: runs, skips and missed occurrences,
           with each run's spend (its task's, with the tasks it launched).
  webhooks Webhook triggers: name, URL, automation, deliveries waiting; --show-secret prints
           the signing secrets (refused inside an OpenCode tool call: AGENT=1 or OPENCODE=1).
           The plugin generates each secret; it is never shown to the model (tool answers say
           to read it here), and a tool call cannot choose one.
           set-secret <name> sets your own (at least 16 characters): typed twice without echo
           on a terminal, or read from stdin (a pipe or < file, the final newline dropped).
           Never from the command line, where it would land in your shell history. It refuses
           to run inside an OpenCode tool call (AGENT=1 or OPENCODE=1 set). Deliveries signed
           with the old secret are refused (401) from then on.
  proposals  Automations the agent proposed (task_propose), waiting for your decision, each
           with its full definition: why, every trigger in full (a command trigger's command
           whole), prompt, agent, model, where it runs, each step's command, expect command and
           files, channels, report, notify; who proposed it, when it expires, and its version
           (a hash of all of it). Commands are quoted, with control and invisible characters
           escaped and long runs of spaces pointed out.
           approve prints the full definition again and asks "y/N" (stdin must be a terminal;
           --yes approves without asking, for scripts). It refuses to run inside an OpenCode
           tool call (AGENT=1 or OPENCODE=1 set, as OpenCode's bash tool does). It approves exactly the version
           printed: if the proposal changed since (say the agent called task_update), OpenCode
           refuses it ("it changed since you looked; look again") and nothing is enabled.
           Once approved it runs with no further prompt: this is your approval. reject deletes
           it, and the same proposal is refused for the cooldown. The decision is written to
           the command inbox (as the dashboard's buttons do) for the OpenCode of that project
           to apply; the CLI waits up to 5 s for the outcome, else says it is queued until
           OpenCode next runs in that project.
  workers  Other OpenCode servers that run children (plugin option "workers"), as each
           project's OpenCode last saw them: host, health and since when, why it is not
           healthy, tasks running against its capacity, tasks queued for it.
  costs    What background work cost since --since (default 7d), the most first, and the
           total. --by automation (default): a spend belongs to the automation whose run
           launched it, children included; tasks no automation launched are "(direct tasks)".
           --by model: the task's model (the database keeps no model per request, so a task's
           requests all count under the model it was launched with). --by day: the day the
           run or direct task was created, which is also what --since compares.
  worktrees  The git worktrees of isolated tasks (isolation "worktree"), kept next to the
           database: branch, task, base commit, commits not merged into the repository's
           current branch, and a directory that is gone. --prune removes those with nothing
           unmerged whose task is not running (and forgets those whose directory is gone);
           it never removes a branch with unmerged commits, and says which it kept and why.

Options:
  --db <path>         The database file. Default: $XDG_DATA_HOME/opencode-errands/errands.db
                      (~/.local/share/... when XDG_DATA_HOME is unset). Use the plugin's dbPath
                      option here if you set one.
  --project <id>      Only tasks (automations, workers...) of this project.
  --status <status>   Only tasks in these statuses: queued, running, resumed, completed, error, cancelled.
                      Repeat the option or separate with commas.
  --parent <session>  Only tasks launched from this parent session.
  --all               Include cleared tasks.
  --json              Machine-readable output.
  --port <n>          dashboard: the port (default 4098; 0 picks a free one).
  --host <name>       dashboard: the address to listen on (default 127.0.0.1, this machine only).
  --open              dashboard: open the page in the default browser.
  --since <n>h|<n>d   costs: how far back, e.g. 24h, 7d (default), 30d.
  --by <grouping>     costs: automation (default), model or day.
  --prune             worktrees: remove those with nothing unmerged.
  -y, --yes           proposals approve: approve the version printed without asking (for scripts).
  -h, --help          This help.

Exit codes: 0 success, 1 failure (no such task or proposal, database missing or unreadable, a
decision the plugin refused, an approval you did not confirm), 2 wrong usage. A decision still
queued for OpenCode exits 0.
`;
