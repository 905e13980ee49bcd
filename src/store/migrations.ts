import type { SqliteDatabase } from "./sqlite-driver.ts";
import { StoreUnavailableError } from "./store-unavailable-error.ts";

export type Migration = { version: number; name: string; sql: string };

/**
 * Append-only. NEVER edit or reorder a migration once it has shipped: databases in the wild
 * have already applied it and will not run it again. Change the schema with a new one at the
 * end, and give any new NOT NULL column a DEFAULT so an older plugin can still insert rows.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "tasks, event log and notification outbox",
    sql: `
      CREATE TABLE tasks (
        project_id        TEXT    NOT NULL,
        id                TEXT    NOT NULL,
        parent_session_id TEXT    NOT NULL,
        batch_id          TEXT    NOT NULL,
        description       TEXT    NOT NULL,
        prompt            TEXT    NOT NULL,
        agent             TEXT    NOT NULL,
        model             TEXT    NOT NULL, -- JSON ModelRef
        parent_agent      TEXT    NOT NULL,
        parent_model      TEXT,             -- JSON ModelRef
        status            TEXT    NOT NULL,
        is_forked         INTEGER NOT NULL,
        resume_count      INTEGER NOT NULL,
        result            TEXT,
        error             TEXT,
        tool_calls        INTEGER NOT NULL,
        last_tools        TEXT    NOT NULL, -- JSON string[]
        last_activity_at  INTEGER NOT NULL,
        created_at        INTEGER NOT NULL,
        prompted_at       INTEGER NOT NULL,
        settled_at        INTEGER,
        retrieved_at      INTEGER,
        cleared_at        INTEGER,
        PRIMARY KEY (project_id, id)
      );
      CREATE INDEX tasks_by_project_created ON tasks (project_id, created_at);
      CREATE INDEX tasks_by_project_parent_created ON tasks (project_id, parent_session_id, created_at);
      CREATE INDEX tasks_by_project_status ON tasks (project_id, status, settled_at);

      CREATE TABLE task_events (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        project_id TEXT    NOT NULL,
        task_id    TEXT    NOT NULL,
        at         INTEGER NOT NULL,
        kind       TEXT    NOT NULL,
        detail     TEXT
      );
      CREATE INDEX task_events_by_task ON task_events (project_id, task_id, id);

      CREATE TABLE notifications (
        project_id        TEXT    NOT NULL,
        id                TEXT    NOT NULL,
        parent_session_id TEXT    NOT NULL,
        task_id           TEXT    NOT NULL,
        text              TEXT    NOT NULL,
        wake              INTEGER NOT NULL,
        created_at        INTEGER NOT NULL,
        delivered_at      INTEGER,
        PRIMARY KEY (project_id, id)
      );
      CREATE INDEX notifications_pending ON notifications (project_id, parent_session_id, created_at)
        WHERE delivered_at IS NULL;
      CREATE INDEX notifications_by_task ON notifications (project_id, task_id);
    `,
  },
  {
    version: 2,
    name: "started time of a task (queued tasks start later than they are created)",
    sql: `ALTER TABLE tasks ADD COLUMN started_at INTEGER;`,
  },
  {
    version: 3,
    name: "outbox claims apart from delivery (a notification survives a crash between claim and send)",
    // delivered_at now means confirmed: set after the host accepted the prompt, no longer at the claim.
    sql: `
      ALTER TABLE notifications ADD COLUMN claimed_at INTEGER;
      ALTER TABLE notifications ADD COLUMN claimed_by TEXT;
      ALTER TABLE notifications ADD COLUMN claims INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 4,
    name: "automations: definitions, their triggers and run history; tasks that do not notify their parent",
    sql: `
      ALTER TABLE tasks ADD COLUMN notify INTEGER NOT NULL DEFAULT 1;

      CREATE TABLE automations (
        project_id           TEXT    NOT NULL,
        id                   TEXT    NOT NULL,
        title                TEXT    NOT NULL,
        prompt               TEXT    NOT NULL,
        agent                TEXT    NOT NULL,
        model                TEXT,             -- JSON ModelRef
        notify               TEXT    NOT NULL, -- always | on_change | on_failure | never
        session_mode         TEXT    NOT NULL, -- fresh | continue
        max_runs             INTEGER,
        overlap              TEXT    NOT NULL, -- skip | queue
        catch_up             TEXT    NOT NULL, -- skip | once
        report_to            TEXT    NOT NULL, -- session id
        report_agent         TEXT    NOT NULL,
        report_model         TEXT,             -- JSON ModelRef
        enabled              INTEGER NOT NULL,
        paused_reason        TEXT,
        done_at              INTEGER,
        report_to_gone_at    INTEGER,
        created_by           TEXT    NOT NULL,
        created_at           INTEGER NOT NULL,
        updated_at           INTEGER NOT NULL,
        run_count            INTEGER NOT NULL DEFAULT 0,
        consecutive_failures INTEGER NOT NULL DEFAULT 0,
        last_result_hash     TEXT,
        continue_task_id     TEXT,             -- session: continue, the child every run resumes
        PRIMARY KEY (project_id, id)
      );

      -- kind: interval | cron | once; later kinds (file, command, webhook) keep their settings in spec.
      CREATE TABLE automation_triggers (
        project_id      TEXT    NOT NULL,
        id              TEXT    NOT NULL,
        automation_id   TEXT    NOT NULL,
        kind            TEXT    NOT NULL,
        spec            TEXT    NOT NULL, -- JSON, e.g. {"every":"30m"} or {"cron":"0 9 * * 1-5","timezone":"Europe/Paris"}
        created_at      INTEGER NOT NULL,
        last_planned_at INTEGER,          -- the latest occurrence handled (fired, skipped or missed)
        next_at         INTEGER,          -- the next occurrence; NULL when spent or never again
        PRIMARY KEY (project_id, id)
      );
      CREATE INDEX automation_triggers_by_automation ON automation_triggers (project_id, automation_id);

      -- One row per occurrence decides which process fires it: (trigger_id, planned_at) is unique.
      CREATE TABLE automation_runs (
        id            INTEGER PRIMARY KEY AUTOINCREMENT,
        project_id    TEXT    NOT NULL,
        automation_id TEXT    NOT NULL,
        run_no        INTEGER,          -- NULL for skipped and missed rows
        trigger_id    TEXT,             -- NULL for task_run
        fired_by      TEXT    NOT NULL, -- schedule | manual | catch_up
        planned_at    INTEGER,
        status        TEXT    NOT NULL, -- waiting | starting | running | completed | error | cancelled | skipped | missed
        skip_reason   TEXT,             -- overlap | paused | missed | ...
        missed_count  INTEGER,
        missed_until  INTEGER,
        task_id       TEXT,
        created_at    INTEGER NOT NULL,
        started_at    INTEGER,
        ended_at      INTEGER,
        result_hash   TEXT,
        summary       TEXT,             -- the result's first line, or the error
        notified      INTEGER,          -- 1 told, 0 not told (see notify_note)
        notify_note   TEXT
      );
      CREATE UNIQUE INDEX automation_runs_occurrence ON automation_runs (project_id, trigger_id, planned_at);
      CREATE INDEX automation_runs_by_automation ON automation_runs (project_id, automation_id, id);
      CREATE INDEX automation_runs_by_task ON automation_runs (project_id, task_id);
    `,
  },
  {
    version: 5,
    name: "a change counter on tasks, so that another process's writes are read back without reloading every task",
    // Triggers rather than the plugin's own statements: a writer of any version keeps the counter.
    sql: `
      ALTER TABLE tasks ADD COLUMN changed_seq INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX tasks_by_project_changed ON tasks (project_id, changed_seq);

      -- One row. seq grows with every insert, update and delete of a task; deleted_seq is the seq
      -- of the latest delete. A task row's changed_seq is the seq of its latest write.
      CREATE TABLE task_changes (
        id          INTEGER PRIMARY KEY CHECK (id = 1),
        seq         INTEGER NOT NULL,
        deleted_seq INTEGER NOT NULL
      );
      INSERT INTO task_changes (id, seq, deleted_seq) VALUES (1, 0, 0);

      CREATE TRIGGER tasks_changed_on_insert AFTER INSERT ON tasks BEGIN
        UPDATE task_changes SET seq = seq + 1;
        UPDATE tasks SET changed_seq = (SELECT seq FROM task_changes) WHERE rowid = NEW.rowid;
      END;
      -- The WHEN skips the trigger's own stamping update.
      CREATE TRIGGER tasks_changed_on_update AFTER UPDATE ON tasks WHEN NEW.changed_seq = OLD.changed_seq BEGIN
        UPDATE task_changes SET seq = seq + 1;
        UPDATE tasks SET changed_seq = (SELECT seq FROM task_changes) WHERE rowid = NEW.rowid;
      END;
      CREATE TRIGGER tasks_changed_on_delete AFTER DELETE ON tasks BEGIN
        UPDATE task_changes SET seq = seq + 1, deleted_seq = seq + 1;
      END;
    `,
  },
  {
    version: 6,
    name: "evidence of what each task run did, and what a task expects before it counts as done",
    sql: `
      CREATE TABLE task_evidence (
        project_id TEXT    NOT NULL,
        task_id    TEXT    NOT NULL,
        run        INTEGER NOT NULL, -- 0 the first run, n resume #n
        kind       TEXT    NOT NULL, -- file | command | failure | contradiction
        key        TEXT    NOT NULL, -- the path, or the tool call id
        data       TEXT    NOT NULL, -- JSON, secrets masked
        PRIMARY KEY (project_id, task_id, run, kind, key)
      );
      CREATE TABLE task_evidence_specs (
        project_id TEXT NOT NULL,
        task_id    TEXT NOT NULL,
        spec       TEXT NOT NULL, -- JSON TaskEvidenceSpec
        PRIMARY KEY (project_id, task_id)
      );
    `,
  },
  {
    version: 7,
    name: "dashboard command inbox: cancel a task, pause, resume, run or delete an automation from the page",
    sql: `
      CREATE TABLE dashboard_commands (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        project_id TEXT    NOT NULL,
        kind       TEXT    NOT NULL, -- cancel_task | pause | resume | run_now | delete
        target_id  TEXT    NOT NULL, -- task id or automation id
        status     TEXT    NOT NULL, -- pending | claimed | done | failed
        created_at INTEGER NOT NULL,
        claimed_by TEXT,
        claimed_at INTEGER,
        ended_at   INTEGER,
        outcome    TEXT
      );
      CREATE INDEX dashboard_commands_pending ON dashboard_commands (project_id, id) WHERE status = 'pending';
    `,
  },
  {
    version: 8,
    name: "what every run of an automation must leave as evidence (expect)",
    sql: `
      ALTER TABLE automations ADD COLUMN expect TEXT; -- JSON { files?, command? }, NULL: nothing
    `,
  },
  {
    version: 9,
    name: "where each project lives, so the dashboard can name it instead of showing its id",
    sql: `
      CREATE TABLE projects (
        project_id   TEXT    PRIMARY KEY,
        directory    TEXT    NOT NULL, -- the worktree (or directory) the plugin was last loaded for
        last_seen_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 10,
    name: "event triggers: source state, leases (one process runs each source), webhooks and their deliveries, the event of a run",
    sql: `
      ALTER TABLE automation_triggers ADD COLUMN state TEXT; -- JSON, the source's own (baseline, ETags, seen ids)
      ALTER TABLE automation_triggers ADD COLUMN note TEXT;  -- shown in task_read, e.g. "unauthenticated"

      ALTER TABLE automation_runs ADD COLUMN event_summary TEXT;
      ALTER TABLE automation_runs ADD COLUMN event_data TEXT;    -- capped, secrets masked
      ALTER TABLE automation_runs ADD COLUMN event_folded INTEGER; -- events folded into this one while a run ran

      -- The process that runs a trigger's source (watcher, poller) holds its lease until expires_at.
      CREATE TABLE trigger_leases (
        project_id TEXT    NOT NULL,
        trigger_id TEXT    NOT NULL,
        holder     TEXT    NOT NULL,
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (project_id, trigger_id)
      );

      -- Names are unique in the database: one listener on the machine serves every project.
      CREATE TABLE webhooks (
        name       TEXT    PRIMARY KEY,
        project_id TEXT    NOT NULL,
        trigger_id TEXT    NOT NULL,
        secret     TEXT    NOT NULL,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX webhooks_by_trigger ON webhooks (project_id, trigger_id);

      -- Stored before the delivery is answered; fired by a process of the project.
      CREATE TABLE webhook_deliveries (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        project_id  TEXT    NOT NULL,
        trigger_id  TEXT    NOT NULL,
        delivery_id TEXT    NOT NULL,
        received_at INTEGER NOT NULL,
        status      TEXT    NOT NULL, -- pending | claimed (firing: its run launches) | fired | expired
        claimed_by  TEXT,
        summary     TEXT    NOT NULL,
        data        TEXT,             -- capped, secrets masked
        run_id      INTEGER
      );
      CREATE UNIQUE INDEX webhook_deliveries_once ON webhook_deliveries (trigger_id, delivery_id);
      CREATE INDEX webhook_deliveries_unfired ON webhook_deliveries (project_id, id) WHERE status IN ('pending', 'claimed');
    `,
  },
  {
    version: 11,
    name: "channel outbox: each finished run's notification to each channel outside OpenCode, claimed, retried, confirmed",
    sql: `
      -- Columns up to last_error are the leased outbox's (src/channels/leased-outbox.ts).
      CREATE TABLE channel_deliveries (
        project_id      TEXT    NOT NULL,
        id              TEXT    NOT NULL, -- sent as Idempotency-Key (and webhook-id) on every attempt
        status          TEXT    NOT NULL, -- pending | delivered | failed
        attempts        INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        claimed_by      TEXT,
        claimed_at      INTEGER,
        created_at      INTEGER NOT NULL,
        ended_at        INTEGER,
        last_error      TEXT,             -- why the last attempt failed; never a URL
        run_id          INTEGER NOT NULL, -- automation_runs.id
        automation_id   TEXT    NOT NULL,
        channel         TEXT    NOT NULL, -- the channel's name in the options; never its URL or secret
        host            TEXT    NOT NULL, -- the URL's host: all that is shown of it
        notice          TEXT    NOT NULL, -- JSON ChannelNotice, result capped and secrets masked
        PRIMARY KEY (project_id, id)
      );
      CREATE UNIQUE INDEX channel_deliveries_once ON channel_deliveries (project_id, run_id, channel);
      CREATE INDEX channel_deliveries_pending ON channel_deliveries (project_id, next_attempt_at) WHERE status = 'pending';
      CREATE INDEX channel_deliveries_ended ON channel_deliveries (project_id, status, ended_at) WHERE status != 'pending';

      ALTER TABLE automations ADD COLUMN channels TEXT; -- JSON names of configured channels; NULL: none
      ALTER TABLE automations ADD COLUMN report TEXT;   -- NULL: the session (and channels); 'channels': channels only
    `,
  },
  {
    version: 12,
    name: "automation steps: shell commands run before (or instead of) the prompt, and each run's step results",
    sql: `
      ALTER TABLE automations ADD COLUMN steps TEXT;         -- JSON Step[], NULL: none
      ALTER TABLE automation_runs ADD COLUMN steps TEXT;     -- JSON StepResult[] (output tails capped, masked)
      ALTER TABLE automation_runs ADD COLUMN steps_by TEXT;  -- host:pid:nonce of the process running the steps
      -- A notification without a task (a steps-only run) carries the report-to session's agent and model.
      ALTER TABLE notifications ADD COLUMN agent TEXT;
      ALTER TABLE notifications ADD COLUMN model TEXT;       -- JSON ModelRef
    `,
  },
  {
    version: 13,
    name: "proposals: automations the agent proposed, and the user's decisions on them",
    sql: `
      ALTER TABLE automations ADD COLUMN proposal TEXT; -- JSON { reason, proposedAt, by }; NULL: not a proposal
      CREATE TABLE proposal_decisions (
        project_id  TEXT    NOT NULL,
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        proposal_id TEXT    NOT NULL,
        title       TEXT    NOT NULL,
        work        TEXT    NOT NULL, -- the prompt and the steps' commands, as compared for a repeat
        triggers    TEXT    NOT NULL, -- JSON string[]: each trigger described, sorted
        reason      TEXT    NOT NULL,
        outcome     TEXT    NOT NULL, -- approved | rejected | expired
        via         TEXT    NOT NULL, -- conversation | dashboard | cli | expiry
        decided_at  INTEGER NOT NULL
      );
      CREATE INDEX proposal_decisions_by_time ON proposal_decisions (project_id, decided_at);
    `,
  },
  {
    version: 14,
    name: "command inbox: approve and reject proposals, and where a command came from (the dashboard or the command line)",
    sql: `
      -- New kinds (approve | reject, target_id: the proposal's automation id) need no schema change.
      ALTER TABLE dashboard_commands ADD COLUMN source TEXT; -- dashboard | cli; NULL: the dashboard (before 14)
    `,
  },
  {
    version: 15,
    name: "workers: the other OpenCode server a task's child runs on, and where an automation's runs go",
    sql: `
      ALTER TABLE tasks ADD COLUMN worker TEXT; -- a worker's name from the workers option; NULL: the local OpenCode
      ALTER TABLE automations ADD COLUMN worker TEXT; -- where its runs' children go: a worker's name or auto; NULL: local
      -- Each configured worker as its project's OpenCode last saw it (the dashboard shows it).
      CREATE TABLE worker_health (
        project_id TEXT    NOT NULL,
        name       TEXT    NOT NULL,
        host       TEXT    NOT NULL, -- the URL's host only: a URL may carry a user name
        capacity   INTEGER NOT NULL,
        state      TEXT    NOT NULL, -- unknown | healthy | unreachable | unauthorized | misconfigured
        since      INTEGER NOT NULL,
        error      TEXT,
        checked_at INTEGER NOT NULL,
        PRIMARY KEY (project_id, name)
      );
    `,
  },
  {
    version: 16,
    name: "command inbox: an approval names the version of the proposal the user looked at",
    sql: `
      ALTER TABLE dashboard_commands ADD COLUMN version TEXT; -- approve: proposalVersion() of what was shown; NULL for other kinds
    `,
  },
  {
    version: 17,
    name: "webhook deliveries: also deduplicated by their signed content, whatever their delivery id",
    sql: `
      ALTER TABLE webhook_deliveries ADD COLUMN content_key TEXT; -- sha256 of (hook, signature, body); NULL before this version
      CREATE UNIQUE INDEX webhook_deliveries_content_once ON webhook_deliveries (trigger_id, content_key) WHERE content_key IS NOT NULL;
    `,
  },
  {
    version: 18,
    name: "notices a person can read: each outbox notification carries the plain line shown next to its payload",
    sql: `
      ALTER TABLE notifications ADD COLUMN visible TEXT; -- NULL: queued before this version (a line is made from the text)
    `,
  },
  {
    version: 19,
    name: "a run row links to its task by task_id alone: unfinished runs whose task was named only by its batch id (auto_<automation>_<run>) get the link",
    sql: `
      -- Since this version the link is written with the task itself; before, a crash between the two left it to the batch id.
      -- Ended runs already carry their task (or had none: steps only), so only unfinished ones are filled.
      UPDATE automation_runs SET task_id = (
        SELECT t.id FROM tasks t WHERE t.project_id = automation_runs.project_id
          AND t.batch_id = 'auto_' || automation_runs.automation_id || '_' || automation_runs.run_no
        ORDER BY t.created_at DESC LIMIT 1
      )
      WHERE task_id IS NULL AND run_no IS NOT NULL AND status IN ('starting', 'running');
    `,
  },  {
    version: 20,
    name: "one claim rule: a webhook delivery's claim records when it was taken, so a claim whose holder cannot be asked expires",
    sql: `
      ALTER TABLE webhook_deliveries ADD COLUMN claimed_at INTEGER; -- NULL: claimed before this version (treated as expired)
    `,
  },
  {
    version: 21,
    name: "what background work costs: one row per model request (assistant message) of a task's child, with its tokens by kind and cost",
    sql: `
      -- Keyed by message id: the host repeats a message's update, and two processes may both see it; the latest value wins.
      CREATE TABLE task_spend (
        project_id  TEXT    NOT NULL,
        task_id     TEXT    NOT NULL,
        message_id  TEXT    NOT NULL,
        input       INTEGER NOT NULL DEFAULT 0,
        output      INTEGER NOT NULL DEFAULT 0,
        reasoning   INTEGER NOT NULL DEFAULT 0,
        cache_read  INTEGER NOT NULL DEFAULT 0,
        cache_write INTEGER NOT NULL DEFAULT 0,
        cost_usd    REAL    NOT NULL DEFAULT 0,
        PRIMARY KEY (project_id, task_id, message_id)
      );
    `,
  },
  {
    version: 22,
    name: "an event that names itself (e.g. after:<upstream run id>) fires its trigger once, whichever process reports it again",
    sql: `
      ALTER TABLE automation_runs ADD COLUMN event_key TEXT; -- NULL: the event has no key (most kinds), or before this version
      CREATE UNIQUE INDEX automation_runs_event_once ON automation_runs (project_id, trigger_id, event_key) WHERE event_key IS NOT NULL;
    `,
  },
  {
    version: 23,
    name: "a task's budget: the most its tree (the task with its descendants) may spend",
    sql: `
      ALTER TABLE tasks ADD COLUMN budget_usd REAL;       -- NULL: no USD limit
      ALTER TABLE tasks ADD COLUMN budget_tokens INTEGER; -- input + output + reasoning; NULL: no token limit
    `,
  },
  {
    version: 24,
    name: "isolation: the git worktree a task's child works in",
    sql: `
      -- JSON {path, branch, base, changes?}; NULL: the child works in the project's own checkout
      ALTER TABLE tasks ADD COLUMN worktree TEXT;
    `,
  },
  {
    version: 25,
    name: "automation budgets: per run and per day, the day its owner was told the daily budget was reached (once, whichever process skips), and what a continued run's task had spent before the run",
    sql: `
      ALTER TABLE automations ADD COLUMN budget TEXT;          -- JSON {usdPerRun?, usdPerDay?, tokensPerRun?, tokensPerDay?}; NULL: none
      ALTER TABLE automations ADD COLUMN budget_told_on TEXT;  -- YYYY-MM-DD in the automation's zone; set by the one process that tells
      ALTER TABLE automation_runs ADD COLUMN spent_before TEXT; -- JSON Spend of its task tree when the run resumed it (session: continue); NULL: a new task
    `,
  },
  {
    version: 26,
    name: "isolated automation runs: an automation's isolation, and the branch a run left",
    sql: `
      ALTER TABLE automations ADD COLUMN isolation TEXT;  -- "worktree": each run in a fresh git worktree of the default branch; NULL: none
      ALTER TABLE automation_runs ADD COLUMN branch TEXT; -- the branch an isolated run left its changes on; NULL: none (or it changed nothing)
    `,
  },
  {
    version: 27,
    name: "a run of consecutive skipped firings for one reason is one history row that counts them",
    sql: `
      -- A skipped row's firings: created_at the first, ended_at the latest (NULL: one firing, or before this version).
      ALTER TABLE automation_runs ADD COLUMN skip_count INTEGER; -- NULL: one firing
    `,
  },
  {
    version: 28,
    name: "run history is bounded per automation: older quiet runs are folded into one row per automation and UTC day",
    sql: `
      -- Written only by store/run-history-fold.ts, inside the transaction that deletes the runs it counts.
      CREATE TABLE automation_run_days (
        project_id    TEXT    NOT NULL,
        automation_id TEXT    NOT NULL,
        day           TEXT    NOT NULL, -- YYYY-MM-DD (UTC) of the runs' created_at
        completed     INTEGER NOT NULL DEFAULT 0,
        skipped       INTEGER NOT NULL DEFAULT 0, -- firings (a streak row counts its skip_count)
        missed        INTEGER NOT NULL DEFAULT 0, -- occurrences (a row counts its missed_count)
        cost_usd      REAL    NOT NULL DEFAULT 0,
        requests      INTEGER NOT NULL DEFAULT 0,
        first_at      INTEGER NOT NULL,
        last_at       INTEGER NOT NULL,
        PRIMARY KEY (project_id, automation_id, day)
      ) WITHOUT ROWID;
      -- Steps-only runs have no task: the index need not hold a NULL entry for each of them.
      DROP INDEX automation_runs_by_task;
      CREATE INDEX automation_runs_by_task ON automation_runs (project_id, task_id) WHERE task_id IS NOT NULL;
    `,
  },
  {
    version: 29,
    name: "an automation remembers the definition the user last approved, and its version: an \"always\" covers that version only, and enabling asks with what changed since",
    sql: `
      ALTER TABLE automations ADD COLUMN approved TEXT; -- JSON {version, definition}; NULL: never approved (or approved before this version)
    `,
  },  {
    version: 30,
    name: "every running thing has an owner with a lease: a running task and an active run name the process that drives them",
    sql: `
      -- host:pid:nonce of the process driving the child, and when it took or last renewed that (store/claim-table.ts).
      ALTER TABLE tasks ADD COLUMN claimed_by TEXT;     -- NULL: nobody (settled, queued, or written before this version)
      ALTER TABLE tasks ADD COLUMN claimed_at INTEGER;
      ALTER TABLE automation_runs ADD COLUMN claimed_by TEXT; -- the process that started the run, from starting until it ends
      ALTER TABLE automation_runs ADD COLUMN claimed_at INTEGER;
      CREATE INDEX tasks_claimed ON tasks (project_id, claimed_by) WHERE claimed_by IS NOT NULL;
      CREATE INDEX automation_runs_claimed ON automation_runs (project_id, claimed_by) WHERE claimed_by IS NOT NULL;
    `,
  },
  {
    version: 31,
    name: "an automation with steps runs its prompt only when a step fails (prompt_when), unless \"always\"; those stored with both keep running it after the steps",
    sql: `
      ALTER TABLE automations ADD COLUMN prompt_when TEXT; -- 'always', or NULL: 'failure' (the default)
      UPDATE automations SET prompt_when = 'always' WHERE steps IS NOT NULL AND trim(prompt) <> '';
      -- The approved definition says the same, so enabling one asks about no change it did not make.
      UPDATE automations SET approved = json_set(approved, '$.definition.promptWhen', 'always')
        WHERE approved IS NOT NULL AND json_extract(approved, '$.definition.steps') IS NOT NULL
          AND trim(json_extract(approved, '$.definition.prompt')) <> '';
    `,
  },
  {
    version: 32,
    name: "the run claims index holds active runs only (an ended run keeps its last holder, and the index cost every run ~77 bytes)",
    sql: `
      DROP INDEX automation_runs_claimed;
      CREATE INDEX automation_runs_claimed ON automation_runs (project_id, claimed_by) WHERE status IN ('starting', 'running');
    `,
  },
];

const LEDGER = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT    NOT NULL,
  applied_at INTEGER NOT NULL
)`;

/** Applies every migration not yet in the ledger, each in its own transaction. Returns their versions. */
export function migrate(db: SqliteDatabase, now: () => number = Date.now): number[] {
  db.exec(LEDGER);
  const applied: number[] = [];
  for (const migration of MIGRATIONS) {
    // Checked again inside the write lock: another process may be migrating the same file.
    const ran = db.transaction(() => {
      if (isApplied(db, migration.version)) return false;
      db.exec(migration.sql);
      db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
        migration.version,
        migration.name,
        now(),
      );
      return true;
    });
    if (ran) applied.push(migration.version);
  }
  return applied;
}

export function appliedVersions(db: SqliteDatabase): number[] {
  return db
    .prepare("SELECT version FROM schema_migrations ORDER BY version")
    .all()
    .map((row) => Number(row.version));
}

function isApplied(db: SqliteDatabase, version: number): boolean {
  return db.prepare("SELECT 1 FROM schema_migrations WHERE version = ?").get(version) !== undefined;
}

/**
 * Refuses a file that already holds other tables but no ledger of ours: dbPath pointed at
 * someone else's database, which must not be touched.
 */
export function assertOwnDatabase(db: SqliteDatabase): void {
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    .all()
    .map((row) => String(row.name));
  if (tables.length === 0 || tables.includes("schema_migrations")) return;
  throw new StoreUnavailableError(db.path, "foreign", `it holds other tables (${tables.slice(0, 3).join(", ")})`);
}
