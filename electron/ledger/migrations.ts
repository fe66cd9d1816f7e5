import { sha256Hex } from '../crypto';
import { ProofloopError } from '../../shared/result';

/**
 * The ledger's one list of forward-only migrations, for both engines: one numbering, and each
 * migration with the SQL each engine runs (where the dialects differ, or where one engine has
 * nothing to do at that number: null). Important: never edit an entry once it has shipped; add a
 * new one. The hash rule is one: an engine records sha256 of the text it ran (of '' for null), and
 * opening a ledger whose recorded hash differs from this list's is refused
 * (test/unit/migrations.unit.spec.ts pins them). Both engines apply pending migrations under a lock
 * (SQLite: BEGIN IMMEDIATE, open.ts; PostgreSQL: pg_advisory_xact_lock, postgres/migrate.ts) and
 * re-read what is applied once they hold it, so two processes never race one migration.
 *
 * History: until migration 5 the engines kept two lists, SQLite's 1-4 and PostgreSQL's 1-3, each
 * numbered from 1. They were merged by number, keeping every text byte for byte, so ledgers made
 * before still open: migrations 2 and 3 do different things on each engine (their names say both),
 * and 4 is SQLite's only (PostgreSQL's first migration already had its columns).
 *
 * Why PostgreSQL's schema is as it is:
 * - `payload bytea`: the payload's canonical JSON as UTF-8, exactly the bytes the digest covers.
 *   jsonb would reorder keys, drop duplicates and refuse \u0000, and the chain would no longer verify.
 * - `tx xid8`: the transaction that inserted the row (pg_current_xact_id()). The cross-run feed
 *   reads below the oldest transaction still running (pg_snapshot_xmin), in (tx, run_no, seq)
 *   order, so an event whose transaction commits late is never skipped (postgres/engine.ts, feed).
 * - The head row (`runs.head_seq`, `head_hash`) is moved by the append itself, under the
 *   conditions that it is still where the writer saw it and that the writer's lease (`lease_fence`)
 *   still holds; a deferred trigger checks at commit that it names the run's last stored event.
 */
export interface Migration {
  version: number;
  name: string;
  /** The name an engine records when it differs (the two lists' migrations merged at one number). */
  names?: { sqlite: string; postgres: string };
  /** What SQLite runs at this number; null: nothing. */
  sqlite: string | null;
  /** What PostgreSQL runs at this number; null: nothing. */
  postgres: string | null;
}

export type EngineName = 'sqlite' | 'postgres';

/** The text `engine` runs for `m` ('' when it has nothing to do there). */
export function migrationSql(m: Migration, engine: EngineName): string {
  return m[engine] ?? '';
}

/** The name `engine` records for `m`. */
export function migrationName(m: Migration, engine: EngineName): string {
  return m.names?.[engine] ?? m.name;
}

/** The one hash rule: sha256 of the text the engine ran. */
export function migrationHash(m: Migration, engine: EngineName): string {
  return sha256Hex(migrationSql(m, engine));
}

/** A migration as an engine recorded it (schema_migrations). */
export interface AppliedMigration {
  version: number;
  name: string;
  sha256: string;
}

/**
 * What is left to apply of `list` on `engine`, given what the ledger recorded: refuses (by name of
 * `where`) a ledger with a migration newer than this ProofLoop knows, or one whose applied migration
 * was edited since. Both engines call it twice: once to see whether to take the lock, once under it.
 */
export function pendingMigrations(
  applied: readonly AppliedMigration[],
  engine: EngineName,
  where: string,
  list: readonly Migration[] = migrations,
): Migration[] {
  const latest = list.at(-1)?.version ?? 0;
  const done = new Set<number>();
  for (const a of applied) {
    if (a.version > latest) {
      throw new ProofloopError(
        'invalid_input',
        `${where} has schema version ${a.version}, newer than this ProofLoop knows (${latest}); upgrade ProofLoop`,
      );
    }
    const m = list.find((x) => x.version === a.version);
    if (m && migrationHash(m, engine) !== a.sha256) {
      throw new ProofloopError(
        'invalid_input',
        `${where}: migration ${a.version} (${a.name}) was edited after it was applied`,
      );
    }
    done.add(a.version);
  }
  return list.filter((m) => !done.has(m.version));
}

export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'initial',
    sqlite: `
CREATE TABLE runs (
  run_no     INTEGER PRIMARY KEY,
  run_id     TEXT NOT NULL UNIQUE,
  source     TEXT NOT NULL CHECK (source IN ('executed', 'imported', 'bundle')),
  format     TEXT NOT NULL DEFAULT 'proofloop',
  chained    INTEGER NOT NULL DEFAULT 1,
  origin     TEXT,
  created_at TEXT NOT NULL,
  head_seq   INTEGER NOT NULL DEFAULT 0,
  head_hash  TEXT NOT NULL,
  first_at   TEXT,
  last_at    TEXT,
  status     TEXT NOT NULL DEFAULT 'empty',
  task_id    TEXT,
  variant    TEXT,
  event_count INTEGER NOT NULL DEFAULT 0,
  meta       TEXT NOT NULL DEFAULT '{}'
) STRICT;

-- Events are keyed by the run's integer number and keep their hash as 32 raw bytes; prev is not
-- stored (it is the hash of the event before). Measured: 2x the insert rate of text keys and hex
-- hashes, and 40% less space. digest is stored only when the payload was redacted after hashing.
CREATE TABLE events (
  run_no  INTEGER NOT NULL,
  seq     INTEGER NOT NULL,
  kind    TEXT NOT NULL,
  v       INTEGER NOT NULL,
  at      TEXT NOT NULL,
  payload TEXT NOT NULL,
  hash    BLOB NOT NULL,
  digest  BLOB,
  PRIMARY KEY (run_no, seq)
) STRICT, WITHOUT ROWID;
CREATE INDEX events_by_kind ON events (run_no, kind, seq);

CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only: UPDATE refused'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only: DELETE refused'); END;

-- For people with a sqlite3 shell: events with their run id and hex hashes.
CREATE VIEW events_v AS
  SELECT r.run_id, e.seq, e.kind, e.v, e.at, e.payload, lower(hex(e.hash)) AS hash,
         lower(hex(e.digest)) AS digest
  FROM events e JOIN runs r USING (run_no);

CREATE TABLE findings (
  id      INTEGER PRIMARY KEY,
  run_id  TEXT,
  file    TEXT,
  line    INTEGER,
  seq     INTEGER,
  code    TEXT NOT NULL,
  message TEXT NOT NULL
) STRICT;
CREATE INDEX findings_by_run ON findings (run_id);
CREATE INDEX findings_by_file ON findings (file);

CREATE TABLE writers (
  run_id   TEXT PRIMARY KEY,
  pid      INTEGER NOT NULL,
  hostname TEXT NOT NULL,
  token    TEXT NOT NULL,
  since    TEXT NOT NULL,
  label    TEXT
) STRICT;

CREATE TABLE imports (
  file     TEXT PRIMARY KEY,
  size     INTEGER NOT NULL DEFAULT 0,
  offset   INTEGER NOT NULL DEFAULT 0,
  line     INTEGER NOT NULL DEFAULT 0,
  head_sha TEXT,
  state    TEXT NOT NULL DEFAULT '{}'
) STRICT;

CREATE TABLE snapshots (
  run_id  TEXT NOT NULL,
  seq     INTEGER NOT NULL,
  version TEXT NOT NULL,
  state   TEXT NOT NULL,
  PRIMARY KEY (run_id, seq, version)
) STRICT, WITHOUT ROWID;
`,
    postgres: `
CREATE TABLE runs (
  run_no      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id      text NOT NULL UNIQUE,
  source      text NOT NULL CHECK (source IN ('executed', 'imported', 'bundle')),
  format      text NOT NULL DEFAULT 'proofloop',
  chained     boolean NOT NULL DEFAULT true,
  origin      text,
  created_at  text NOT NULL,
  head_seq    bigint NOT NULL DEFAULT 0 CHECK (head_seq >= 0),
  head_hash   bytea NOT NULL DEFAULT '\\x0000000000000000000000000000000000000000000000000000000000000000'::bytea,
  first_at    text,
  last_at     text,
  status      text NOT NULL DEFAULT 'empty',
  task_id     text,
  variant     text,
  event_count bigint NOT NULL DEFAULT 0,
  meta        text NOT NULL DEFAULT '{}',
  lease_fence bigint,
  lease_until timestamptz,
  lease_ms    integer,
  lease_pid   integer,
  lease_host  text,
  lease_label text
);
-- Fencing tokens: each lease taken gets the next, so a writer that lost its lease is told apart.
CREATE SEQUENCE lease_fences;

CREATE TABLE events (
  run_no  bigint NOT NULL REFERENCES runs (run_no),
  seq     bigint NOT NULL CHECK (seq >= 1),
  kind    text NOT NULL,
  v       integer NOT NULL,
  at      text NOT NULL,
  payload bytea NOT NULL,
  hash    bytea NOT NULL CHECK (octet_length(hash) = 32),
  digest  bytea CHECK (digest IS NULL OR octet_length(digest) = 32),
  line    bigint,
  source  text,
  tx      xid8 NOT NULL DEFAULT pg_current_xact_id(),
  PRIMARY KEY (run_no, seq)
);
CREATE INDEX events_feed ON events (tx, run_no, seq);

CREATE TABLE findings (
  id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id  text,
  file    text,
  line    bigint,
  seq     bigint,
  code    text NOT NULL,
  message text NOT NULL,
  excerpt text
);
CREATE INDEX findings_by_run ON findings (run_id);

CREATE TABLE snapshots (
  run_no  bigint NOT NULL REFERENCES runs (run_no),
  seq     bigint NOT NULL,
  version text NOT NULL,
  state   text NOT NULL,
  PRIMARY KEY (run_no, version, seq)
);

CREATE FUNCTION proofloop_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'proofloop: % of % refused: the ledger is append-only', TG_OP, TG_TABLE_NAME
    USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER events_no_update BEFORE UPDATE OR DELETE ON events
  FOR EACH ROW EXECUTE FUNCTION proofloop_refuse();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
  FOR EACH STATEMENT EXECUTE FUNCTION proofloop_refuse();
CREATE TRIGGER runs_no_delete BEFORE DELETE ON runs
  FOR EACH ROW EXECUTE FUNCTION proofloop_refuse();
CREATE TRIGGER runs_no_truncate BEFORE TRUNCATE ON runs
  FOR EACH STATEMENT EXECUTE FUNCTION proofloop_refuse();

-- A head moves forward only, and at commit names the run's last stored event.
CREATE FUNCTION proofloop_head_back() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'proofloop: run % head cannot move from seq % back to seq %', OLD.run_id, OLD.head_seq, NEW.head_seq
    USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER runs_head_forward BEFORE UPDATE ON runs FOR EACH ROW
  WHEN (NEW.head_seq < OLD.head_seq OR (NEW.head_seq = OLD.head_seq AND NEW.head_hash <> OLD.head_hash))
  EXECUTE FUNCTION proofloop_head_back();
CREATE FUNCTION proofloop_head_check() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.head_seq > 0 AND NOT EXISTS (
       SELECT 1 FROM events WHERE run_no = NEW.run_no AND seq = NEW.head_seq AND hash = NEW.head_hash) THEN
    RAISE EXCEPTION 'proofloop: run % head seq % names no stored event with its hash', NEW.run_id, NEW.head_seq
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  IF EXISTS (SELECT 1 FROM events WHERE run_no = NEW.run_no AND seq = NEW.head_seq + 1) THEN
    RAISE EXCEPTION 'proofloop: run % has events past its head seq %', NEW.run_id, NEW.head_seq
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER runs_head_names_last_event AFTER UPDATE OF head_seq, head_hash ON runs
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION proofloop_head_check();
`,
  },
  {
    version: 2,
    name: 'kind index without the bulk kinds (SQLite); writer and reader roles (PostgreSQL)',
    names: { sqlite: 'kind index without the bulk kinds', postgres: 'writer and reader roles' },
    // SQLite: the full (run_no, kind, seq) index cost ~2.5 µs of the ~5 µs a row took to insert (measured
    // on bare SQLite, 200,000 rows). The bulk kinds of every step are dense, so a kind filter finds
    // them by scanning seq order; only the rarer kinds (denials, timeouts, judge, run lifecycle,
    // file changes, unknown kinds) need the index. Reads name the WHERE term verbatim (RARE_TERM
    // in kinds-index.ts; a unit test holds the two together): SQLite uses a partial index only then.

    sqlite: `
DROP INDEX events_by_kind;
CREATE INDEX events_by_rare_kind ON events (run_no, kind, seq)
  WHERE kind <> 'model_proposed' AND kind <> 'action_allowed' AND kind <> 'tool_invoked' AND kind <> 'tool_returned' AND kind <> 'model_responded' AND kind <> 'context_updated';
`,
    // PostgreSQL: group roles (NOLOGIN): a team grants them to its login roles (README, "A team ledger"). Made
    // here when the migrating role may create roles; otherwise made beforehand by an administrator,
    // and only granted here. The writer may read, insert events and move heads (the runs columns an
    // append or a lease changes), never update or delete an event; the reader may only read.
    postgres: `
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'proofloop_reader') THEN
    BEGIN CREATE ROLE proofloop_reader NOLOGIN; EXCEPTION WHEN insufficient_privilege THEN NULL; END;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'proofloop_writer') THEN
    BEGIN CREATE ROLE proofloop_writer NOLOGIN; EXCEPTION WHEN insufficient_privilege THEN NULL; END;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'proofloop_reader') THEN
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO proofloop_reader', current_schema());
    GRANT SELECT ON runs, events, findings, snapshots, schema_migrations TO proofloop_reader;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'proofloop_writer') THEN
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO proofloop_writer', current_schema());
    GRANT SELECT ON runs, events, findings, snapshots, schema_migrations TO proofloop_writer;
    GRANT INSERT ON runs, events, findings, snapshots TO proofloop_writer;
    GRANT UPDATE (head_seq, head_hash, first_at, last_at, status, task_id, variant, event_count,
                  lease_fence, lease_until, lease_ms, lease_pid, lease_host, lease_label) ON runs TO proofloop_writer;
    GRANT USAGE ON SEQUENCE lease_fences, runs_run_no_seq, findings_id_seq TO proofloop_writer;
  END IF;
END $$;
`,
  },
  {
    version: 3,
    name: 'events keyed by one rowid (SQLite); no event past its run head (PostgreSQL)',
    names: { sqlite: 'events keyed by one rowid', postgres: 'no event past its run head' },
    // SQLite: a rowid table measured ~30% cheaper per inserted row than the WITHOUT ROWID table keyed by
    // (run_no, seq) (1.9 against 2.8 µs a row on bare SQLite, 300,000 rows of the bench's events):
    // event rows are larger than the ~200 bytes below which SQLite advises WITHOUT ROWID. The id is
    // (run_no << 32) + seq (event-ids.ts), so (run_no, seq) stays unique and a run's seqs are one
    // range of ids; run_no and seq are derived from it, not stored twice. events_v joins on that
    // range, so a sqlite3 shell's `WHERE run_id = …` reads one run, not the whole table.

    sqlite: `
DROP VIEW events_v;
DROP TRIGGER events_no_update;
DROP TRIGGER events_no_delete;
DROP INDEX events_by_rare_kind;
ALTER TABLE events RENAME TO events_keyed_by_pair;
CREATE TABLE events (
  id      INTEGER PRIMARY KEY,
  run_no  INTEGER NOT NULL AS (id >> 32) VIRTUAL,
  seq     INTEGER NOT NULL AS (id & 4294967295) VIRTUAL,
  kind    TEXT NOT NULL,
  v       INTEGER NOT NULL,
  at      TEXT NOT NULL,
  payload TEXT NOT NULL,
  hash    BLOB NOT NULL,
  digest  BLOB
) STRICT;
INSERT INTO events (id, kind, v, at, payload, hash, digest)
  SELECT (run_no << 32) + seq, kind, v, at, payload, hash, digest FROM events_keyed_by_pair ORDER BY run_no, seq;
DROP TABLE events_keyed_by_pair;
CREATE INDEX events_by_rare_kind ON events (run_no, kind, seq)
  WHERE kind <> 'model_proposed' AND kind <> 'action_allowed' AND kind <> 'tool_invoked' AND kind <> 'tool_returned' AND kind <> 'model_responded' AND kind <> 'context_updated';
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only: UPDATE refused'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only: DELETE refused'); END;
CREATE VIEW events_v AS
  SELECT r.run_id, e.seq, e.kind, e.v, e.at, e.payload, lower(hex(e.hash)) AS hash,
         lower(hex(e.digest)) AS digest
  FROM runs r JOIN events e ON e.id BETWEEN r.run_no << 32 AND (r.run_no << 32) + 4294967295;
`,
    // PostgreSQL: the deferred head check (migration 1) runs when a head moves; an event inserted without
    // moving its head would slip past it. One check per INSERT statement over the rows it added
    // (a transition table: per row it would cost a lookup an event), after the statement, which
    // sees the head that the append's own statement moved.
    postgres: `
CREATE FUNCTION proofloop_no_event_past_head() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE bad record;
BEGIN
  SELECT r.run_id, a.seq, r.head_seq INTO bad
    FROM added a JOIN runs r USING (run_no) WHERE a.seq > r.head_seq LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'proofloop: run % event seq % is past its head seq %: events are added by moving the head', bad.run_id, bad.seq, bad.head_seq
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER events_within_head AFTER INSERT ON events REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION proofloop_no_event_past_head();
`,
  },
  {
    version: 4,
    name: 'where imported events came from; what bad lines said',
    // SQLite: an imported event keeps the line it came from and the source's own ids (uuid, call_id, …), so
    // the payload view and \`events --json\` can say where it came from; NULL for appended events. A
    // finding about a line that is no event keeps its (bounded, redacted) text, so the user sees it.

    sqlite: `
ALTER TABLE events ADD COLUMN line INTEGER;
ALTER TABLE events ADD COLUMN source TEXT;
ALTER TABLE findings ADD COLUMN excerpt TEXT;
`,
    // PostgreSQL: nothing (its migration 1 made these columns).
    postgres: null,
  },
  {
    version: 5,
    name: "an event's run checked per statement; a run's meta moves with it",
    // PostgreSQL: the foreign key from events to runs checked each inserted event by its own lookup
    // and row lock of the run: measured 11-14 µs of an event's ~35 µs in a 10,000-event append
    // (EXPLAIN ANALYZE, "Trigger for constraint events_run_no_fkey"). The statement trigger of
    // migration 3 already joins the rows a statement added to their runs, once per INSERT or COPY;
    // it now also refuses rows of no run, so the key is dropped (runs are never deleted: a trigger
    // refuses it). The writer may update a run's meta: push and pull carry it (the id its digests
    // cover, the source lines that are no event), as verify reads it.
    sqlite: null,
    postgres: `
ALTER TABLE events DROP CONSTRAINT events_run_no_fkey;
CREATE OR REPLACE FUNCTION proofloop_no_event_past_head() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE bad record;
BEGIN
  SELECT a.run_no, r.run_id, a.top, r.head_seq INTO bad
    FROM (SELECT run_no, max(seq) AS top FROM added GROUP BY run_no) a LEFT JOIN runs r USING (run_no)
   WHERE r.run_no IS NULL OR a.top > r.head_seq LIMIT 1;
  IF FOUND AND bad.run_id IS NULL THEN
    RAISE EXCEPTION 'proofloop: events of run_no % name no run', bad.run_no
      USING ERRCODE = 'foreign_key_violation';
  END IF;
  IF FOUND THEN
    RAISE EXCEPTION 'proofloop: run % event seq % is past its head seq %: events are added by moving the head', bad.run_id, bad.top, bad.head_seq
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NULL;
END $$;
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'proofloop_writer') THEN
    GRANT UPDATE (meta) ON runs TO proofloop_writer;
  END IF;
END $$;
`,
  },
  {
    version: 6,
    name: "a run's artifacts move with it",
    // SQLite: a runs folder keeps artifacts as files (ledger/artifact-store.ts). PostgreSQL: a team's
    // ledger keeps them itself, so a run pushed there is read whole by everyone (its values an
    // import moved out of its events, its runner's tool outputs), not only on the machine that
    // pushed it. Content-addressed, stored once whichever runs share one; each run names its own,
    // and is read only through them. Never updated or deleted, as events are not.
    sqlite: null,
    postgres: `
CREATE TABLE artifacts (
  digest  text PRIMARY KEY CHECK (digest ~ '^[0-9a-f]{64}$'),
  content bytea NOT NULL
);
CREATE TABLE run_artifacts (
  run_id text NOT NULL REFERENCES runs (run_id),
  digest text NOT NULL REFERENCES artifacts (digest),
  PRIMARY KEY (run_id, digest)
);
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'proofloop_reader') THEN
    GRANT SELECT ON artifacts, run_artifacts TO proofloop_reader;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'proofloop_writer') THEN
    GRANT SELECT, INSERT ON artifacts, run_artifacts TO proofloop_writer;
  END IF;
END $$;
`,
  },
];
