"""Versioned DuckDB schema. Append a migration; never edit one that has shipped."""

from __future__ import annotations

MIGRATIONS: list[tuple[int, str, str]] = [
    (
        1,
        "core: tasks, trajectories, steps, actions, commands, search terms",
        """
        CREATE TABLE tasks (
            task_id VARCHAR PRIMARY KEY,
            name VARCHAR,
            instruction VARCHAR,
            category VARCHAR,
            difficulty VARCHAR,
            tags VARCHAR[],
            source_format VARCHAR NOT NULL,
            path VARCHAR,
            docker_image VARCHAR,
            cpus DOUBLE,
            memory_mb INTEGER,
            allow_internet BOOLEAN,
            agent_timeout_sec DOUBLE,
            verifier_timeout_sec DOUBLE,
            content_hash VARCHAR,
            schema_version INTEGER NOT NULL,
            ingested_at TIMESTAMP DEFAULT current_timestamp
        );
        CREATE TABLE task_files (
            task_id VARCHAR NOT NULL,
            role VARCHAR NOT NULL,
            path VARCHAR NOT NULL,
            content VARCHAR
        );
        CREATE TABLE trajectories (
            trajectory_id VARCHAR PRIMARY KEY,
            session_id VARCHAR,
            task_id VARCHAR,
            kind VARCHAR NOT NULL,
            harness VARCHAR NOT NULL,
            agent_name VARCHAR,
            agent_version VARCHAR,
            model VARCHAR,
            reward DOUBLE,
            source_trajectory_id VARCHAR,
            runbook_id VARCHAR,
            job_id VARCHAR,
            instruction VARCHAR,
            started_at VARCHAR,
            finished_at VARCHAR,
            exception VARCHAR,
            verifier_output VARCHAR,
            scripted BOOLEAN NOT NULL,
            origin VARCHAR,
            content_hash VARCHAR NOT NULL,
            n_steps INTEGER NOT NULL,
            n_commands INTEGER NOT NULL,
            extra JSON,
            schema_version INTEGER NOT NULL,
            ingested_at TIMESTAMP DEFAULT current_timestamp
        );
        CREATE INDEX trajectories_task ON trajectories(task_id);
        CREATE INDEX trajectories_harness ON trajectories(harness);
        CREATE INDEX trajectories_kind ON trajectories(kind);
        CREATE INDEX trajectories_reward ON trajectories(reward);
        CREATE INDEX trajectories_source ON trajectories(source_trajectory_id);
        CREATE TABLE steps (
            trajectory_id VARCHAR NOT NULL,
            step_index INTEGER NOT NULL,
            source VARCHAR NOT NULL,
            message VARCHAR,
            analysis VARCHAR,
            plan VARCHAR,
            reasoning VARCHAR,
            observation VARCHAR,
            task_complete BOOLEAN NOT NULL,
            harness_control BOOLEAN NOT NULL,
            private_guidance BOOLEAN NOT NULL,
            model_name VARCHAR,
            timestamp VARCHAR,
            prompt_tokens BIGINT,
            completion_tokens BIGINT,
            cost_usd DOUBLE,
            extra JSON
        );
        CREATE TABLE actions (
            trajectory_id VARCHAR NOT NULL,
            step_index INTEGER NOT NULL,
            action_index INTEGER NOT NULL,
            function_name VARCHAR,
            keystrokes VARCHAR NOT NULL,
            duration DOUBLE
        );
        CREATE TABLE commands (
            trajectory_id VARCHAR NOT NULL,
            seq INTEGER NOT NULL,
            step_index INTEGER NOT NULL,
            action_index INTEGER NOT NULL,
            command VARCHAR NOT NULL
        );
        CREATE TABLE search_terms (
            term VARCHAR NOT NULL,
            trajectory_id VARCHAR NOT NULL
        );
        """,
    ),
    (
        2,
        "rewrite pipeline: jobs, work units, runbooks, critic rounds and flags, reviews, transfer checks",
        """
        CREATE TABLE jobs (
            job_id VARCHAR PRIMARY KEY,
            status VARCHAR NOT NULL,
            params JSON NOT NULL,
            scripted BOOLEAN NOT NULL DEFAULT FALSE,
            owner_pid INTEGER,
            error VARCHAR,
            created_at TIMESTAMP DEFAULT current_timestamp,
            updated_at TIMESTAMP DEFAULT current_timestamp
        );
        CREATE TABLE work_units (
            unit_id VARCHAR PRIMARY KEY,
            job_id VARCHAR NOT NULL,
            kind VARCHAR NOT NULL,
            status VARCHAR NOT NULL,
            payload JSON NOT NULL,
            result JSON,
            attempts INTEGER NOT NULL DEFAULT 0,
            error VARCHAR,
            created_at TIMESTAMP DEFAULT current_timestamp,
            started_at TIMESTAMP,
            finished_at TIMESTAMP
        );
        CREATE INDEX work_units_job ON work_units(job_id);
        CREATE TABLE runbooks (
            runbook_id VARCHAR PRIMARY KEY,
            lineage_id VARCHAR NOT NULL,
            source_trajectory_id VARCHAR NOT NULL,
            task_id VARCHAR NOT NULL,
            job_id VARCHAR,
            variant INTEGER NOT NULL,
            round INTEGER NOT NULL,
            parent_runbook_id VARCHAR,
            target_end_state VARCHAR NOT NULL,
            key_milestones VARCHAR[] NOT NULL,
            useful_checks VARCHAR[] NOT NULL,
            recovery_strategies VARCHAR[] NOT NULL,
            pitfalls VARCHAR[] NOT NULL,
            prompt_version VARCHAR NOT NULL,
            model VARCHAR,
            critic_verdict VARCHAR NOT NULL,
            schema_version INTEGER NOT NULL,
            created_at TIMESTAMP DEFAULT current_timestamp
        );
        CREATE INDEX runbooks_source ON runbooks(source_trajectory_id);
        CREATE INDEX runbooks_lineage ON runbooks(lineage_id);
        CREATE TABLE critic_flags (
            runbook_id VARCHAR NOT NULL,
            stage VARCHAR NOT NULL,
            kind VARCHAR NOT NULL,
            severity VARCHAR NOT NULL,
            score DOUBLE NOT NULL,
            span_start INTEGER,
            span_end INTEGER,
            evidence VARCHAR NOT NULL,
            matched_text VARCHAR,
            matched_path VARCHAR,
            reason VARCHAR,
            schema_version INTEGER NOT NULL
        );
        CREATE INDEX critic_flags_runbook ON critic_flags(runbook_id);
        CREATE TABLE reviews (
            runbook_id VARCHAR NOT NULL,
            decision VARCHAR NOT NULL,
            reviewer VARCHAR NOT NULL,
            reason VARCHAR,
            seq BIGINT NOT NULL,
            schema_version INTEGER NOT NULL,
            created_at TIMESTAMP DEFAULT current_timestamp
        );
        CREATE SEQUENCE review_seq;
        CREATE TABLE transfer_checks (
            trajectory_id VARCHAR PRIMARY KEY,
            answer_transfer BOOLEAN NOT NULL,
            deterministic_evidence VARCHAR[],
            llm_verdict BOOLEAN,
            llm_evidence VARCHAR[],
            schema_version INTEGER NOT NULL,
            created_at TIMESTAMP DEFAULT current_timestamp
        );
        """,
    ),
]

MIGRATIONS.append(
    (
        3,
        "verifier integrity, one definition of solved, runbook and rewrite status views",
        """
        ALTER TABLE trajectories ADD COLUMN verifier_tampered BOOLEAN DEFAULT FALSE;
        ALTER TABLE trajectories ADD COLUMN changed_paths JSON;
        ALTER TABLE tasks ADD COLUMN verifier_allow_changes VARCHAR[];
        ALTER TABLE tasks ADD COLUMN storage_mb INTEGER;
        ALTER TABLE tasks ADD COLUMN pids_limit INTEGER;
        ALTER TABLE tasks ADD COLUMN cap_add VARCHAR[];
        ALTER TABLE steps ADD COLUMN copied_context BOOLEAN DEFAULT FALSE;
        ALTER TABLE trajectories ADD COLUMN prompt_tokens BIGINT;
        ALTER TABLE trajectories ADD COLUMN completion_tokens BIGINT;
        ALTER TABLE trajectories ADD COLUMN cost_usd DOUBLE;
        ALTER TABLE trajectories ADD COLUMN duration_s DOUBLE;
        UPDATE trajectories SET prompt_tokens = u.p, completion_tokens = u.c, cost_usd = u.cost
        FROM (SELECT trajectory_id, sum(prompt_tokens) AS p, sum(completion_tokens) AS c, sum(cost_usd) AS cost
              FROM steps GROUP BY trajectory_id) u
        WHERE u.trajectory_id = trajectories.trajectory_id;
        UPDATE trajectories SET duration_s = epoch(try_cast(finished_at AS TIMESTAMPTZ))
                                           - epoch(try_cast(started_at AS TIMESTAMPTZ))
        WHERE try_cast(finished_at AS TIMESTAMPTZ) >= try_cast(started_at AS TIMESTAMPTZ);
        ALTER TABLE jobs ADD COLUMN cancel_requested BOOLEAN DEFAULT FALSE;
        ALTER TABLE jobs ADD COLUMN owner_host VARCHAR;
        ALTER TABLE work_units ADD COLUMN worker VARCHAR;
        ALTER TABLE work_units ADD COLUMN model VARCHAR;
        ALTER TABLE work_units ADD COLUMN prompt_tokens BIGINT;
        ALTER TABLE work_units ADD COLUMN completion_tokens BIGINT;
        ALTER TABLE work_units ADD COLUMN cost_usd DOUBLE;
        CREATE TABLE app_settings (
            key VARCHAR PRIMARY KEY,
            value JSON NOT NULL,
            updated_at TIMESTAMP DEFAULT current_timestamp
        );
        -- A run solved (verified) its task iff its reward is >= 1.0 and it did not tamper with the verifier.
        CREATE MACRO rsr_solved(reward, tampered) AS coalesce(reward, 0) >= 1.0 AND NOT coalesce(tampered, FALSE);
        -- The one definition of a runbook round's status. The critic's verdict comes first: a critic-rejected
        -- round stays critic_rejected whatever a human says of it (it is replanned, never executed). A passed
        -- round is decided by its latest human review; unreviewed, it waits for review under the human gate
        -- and is approved under the critic gate.
        CREATE VIEW runbook_status AS
        WITH latest AS (
            SELECT runbook_id, arg_max(decision, seq) AS decision, arg_max(reviewer, seq) AS reviewer,
                   count(*) AS reviews
            FROM reviews GROUP BY runbook_id
        )
        SELECT r.runbook_id, r.lineage_id, r.source_trajectory_id, r.task_id, r.job_id, r.variant, r.round,
               r.critic_verdict, l.decision AS review, l.reviewer AS last_reviewer,
               coalesce(l.reviews, 0) AS reviews, coalesce(j.params->>'gate', 'critic') AS gate,
               CASE WHEN r.critic_verdict = 'reject' THEN 'critic_rejected'
                    WHEN r.critic_verdict <> 'pass' THEN 'critic_pending'
                    WHEN l.decision = 'reject' THEN 'human_rejected'
                    WHEN l.decision = 'approve' THEN 'approved'
                    WHEN coalesce(j.params->>'gate', 'critic') = 'human' THEN 'pending_review'
                    ELSE 'approved' END AS status
        FROM runbooks r LEFT JOIN latest l USING (runbook_id) LEFT JOIN jobs j USING (job_id);
        -- A rewrite is kept iff it is verified (rsr_solved), shows no answer transfer (a rewrite without a
        -- check counts as showing none) and its runbook is not human_rejected. A rewrite whose runbook round is
        -- not in this database (ingested from an archive, which carries the review history only) is
        -- human-rejected when its runbook's latest review is a rejection.
        CREATE VIEW rewrite_status AS
        WITH latest AS (SELECT runbook_id, arg_max(decision, seq) AS decision FROM reviews GROUP BY runbook_id)
        SELECT t.trajectory_id, t.task_id, t.source_trajectory_id, t.runbook_id, t.job_id, t.reward,
               coalesce(t.verifier_tampered, FALSE) AS verifier_tampered,
               rsr_solved(t.reward, t.verifier_tampered) AS verified,
               coalesce(tc.answer_transfer, FALSE) AS answer_transfer,
               CASE WHEN rs.runbook_id IS NOT NULL THEN rs.status = 'human_rejected'
                    ELSE coalesce(l.decision = 'reject', FALSE) END AS human_rejected,
               rsr_solved(t.reward, t.verifier_tampered) AND NOT coalesce(tc.answer_transfer, FALSE)
                   AND NOT CASE WHEN rs.runbook_id IS NOT NULL THEN rs.status = 'human_rejected'
                                ELSE coalesce(l.decision = 'reject', FALSE) END AS kept
        FROM trajectories t
        LEFT JOIN transfer_checks tc USING (trajectory_id)
        LEFT JOIN runbook_status rs ON rs.runbook_id = t.runbook_id
        LEFT JOIN latest l ON l.runbook_id = t.runbook_id
        WHERE t.kind = 'rewrite';
        """,
    )
)

MIGRATIONS.append(
    (
        4,
        "stored similarity: pair scores of passed rewrites per task, with what they were computed from",
        """
        -- One row per task that has passed rewrites: the fingerprint of what its pair scores were computed from
        -- (its passed rewrites' ids, content hashes and runbook ids); scores are current while it matches.
        CREATE TABLE similarity_tasks (
            task_id VARCHAR PRIMARY KEY,
            fingerprint VARCHAR NOT NULL,
            rewrites INTEGER NOT NULL,
            pairs INTEGER NOT NULL,
            scored_at TIMESTAMP DEFAULT current_timestamp,
            schema_version INTEGER NOT NULL
        );
        -- Every unordered pair of passed rewrites of one task (trajectory_a < trajectory_b) with the five metrics.
        CREATE TABLE similarity_pairs (
            task_id VARCHAR NOT NULL,
            trajectory_a VARCHAR NOT NULL,
            trajectory_b VARCHAR NOT NULL,
            same_runbook BOOLEAN NOT NULL,
            exact DOUBLE NOT NULL,
            multiset DOUBLE NOT NULL,
            "order" DOUBLE NOT NULL,
            fuzzy DOUBLE NOT NULL,
            transition DOUBLE NOT NULL
        );
        CREATE INDEX similarity_pairs_task ON similarity_pairs(task_id);
        -- The `rsr similarity --json` report of every metric over all tasks, for the fingerprint of all tasks.
        CREATE TABLE similarity_reports (
            metric VARCHAR PRIMARY KEY,
            fingerprint VARCHAR NOT NULL,
            report VARCHAR NOT NULL,
            schema_version INTEGER NOT NULL
        );
        """,
    )
)

MIGRATIONS.append(
    (
        5,
        "stored training rows: each trajectory's training-conversation key, so an export is counted in SQL",
        """
        -- From the training rules (rsr_core/formats/training.py) of version training_rule, when the trajectory
        -- is written: the key of its training conversation (exact duplicates share it), or why it makes none
        -- (training_why); both NULL where the conversation depends on its task's instruction, which is then
        -- worked out when an export is counted, as it is for rows written before this migration (rule NULL).
        ALTER TABLE trajectories ADD COLUMN training_rule INTEGER;
        ALTER TABLE trajectories ADD COLUMN training_key BLOB;
        ALTER TABLE trajectories ADD COLUMN training_why VARCHAR;
        -- Steps of the agent: an archive (`rsr export --all`) leaves out a trajectory without one.
        ALTER TABLE trajectories ADD COLUMN agent_steps INTEGER;
        UPDATE trajectories SET agent_steps = coalesce(a.n, 0)
        FROM (SELECT t.trajectory_id, count(s.trajectory_id) AS n FROM trajectories t
              LEFT JOIN steps s ON s.trajectory_id = t.trajectory_id AND s.source = 'agent' GROUP BY ALL) a
        WHERE a.trajectory_id = trajectories.trajectory_id;
        """,
    )
)

MIGRATIONS.append(
    (
        6,
        "the task's file budget",
        """
        -- `[environment] max_files` of task.toml: files and directories the sandbox may write (NULL: default).
        ALTER TABLE tasks ADD COLUMN max_files INTEGER;
        """,
    )
)

MIGRATIONS.append(
    (
        7,
        "ingest signatures",
        """
        -- What `rsr ingest` read (rsr_core/store/ingest_signatures.py): per unit, by resolved path, the signature
        -- of its files when read and the trajectory they became; an unchanged unit is not read again.
        CREATE TABLE ingest_signatures (
            unit_path VARCHAR PRIMARY KEY,
            signature VARCHAR NOT NULL,
            trajectory_id VARCHAR NOT NULL,
            content_hash VARCHAR NOT NULL
        );
        """,
    )
)

MIGRATIONS.append(
    (
        8,
        "kept tool calls under other ids stored as their ids",
        """
        -- Nothing to rewrite: a step's kept ATIF tool calls that are its canonical calls under other ids (harbor's
        -- Terminus 2 numbers its calls by episode) are now stored as {"ids": [...]}, rebuilt from the step's
        -- actions when read (rsr_core/formats/tool_calls.py, `stored_extra`); rows stored whole before read as
        -- they are. The version keeps a release that would take that form for the calls from opening the file.
        COMMENT ON COLUMN steps.extra IS 'step extra as JSON; _atif.tool_calls may be {"ids": [...]}';
        """,
    )
)

LATEST_VERSION = MIGRATIONS[-1][0]
