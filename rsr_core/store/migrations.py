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
]

LATEST_VERSION = MIGRATIONS[-1][0]
