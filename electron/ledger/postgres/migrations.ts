import type { Migration } from '../migrations';

/**
 * The PostgreSQL ledger's forward-only migrations: numbered and hashed as the SQLite list is
 * (migrations.ts; never edit one that has shipped, add a new one), applied by migrate.ts under an
 * advisory lock. A separate list because the dialect differs; the tables mean the same.
 *
 * Why the schema is as it is:
 * - `payload bytea`: the payload's canonical JSON as UTF-8, exactly the bytes the digest covers.
 *   jsonb would reorder keys, drop duplicates and refuse \u0000, and the chain would no longer verify.
 * - `tx xid8`: the transaction that inserted the row (pg_current_xact_id()). The cross-run feed
 *   reads below the oldest transaction still running (pg_snapshot_xmin), in (tx, run_no, seq)
 *   order, so an event whose transaction commits late is never skipped (engine.ts, feed).
 * - The head row (`runs.head_seq`, `head_hash`) is moved by the append itself, under the
 *   conditions that it is still where the writer saw it and that the writer's lease (`lease_fence`)
 *   still holds; a deferred trigger checks at commit that it names the run's last stored event.
 */
export const pgMigrations: readonly Migration[] = [
  {
    version: 1,
    name: 'initial',
    sql: `
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
    name: 'writer and reader roles',
    // Group roles (NOLOGIN): a team grants them to its login roles (README, "A team ledger"). Made
    // here when the migrating role may create roles; otherwise made beforehand by an administrator,
    // and only granted here. The writer may read, insert events and move heads (the runs columns an
    // append or a lease changes), never update or delete an event; the reader may only read.
    sql: `
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
    name: 'no event past its run head',
    // The deferred head check (migration 1) runs when a head moves; an event inserted without
    // moving its head would slip past it. One check per INSERT statement over the rows it added
    // (a transition table: per row it would cost a lookup an event), after the statement, which
    // sees the head that the append's own statement moved.
    sql: `
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
];
