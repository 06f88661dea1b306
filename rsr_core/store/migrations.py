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

LATEST_VERSION = MIGRATIONS[-1][0]
