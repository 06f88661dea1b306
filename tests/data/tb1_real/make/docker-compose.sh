#!/bin/sh
# `docker compose` (the Compose v2 CLI plugin interface) answered by Docker Compose v1 (`docker-compose`,
# Debian bookworm's package, 1.29.2), for a machine without the Compose v2 plugin. Installed as a Docker CLI
# plugin named docker-compose (make_runs.sh does this in a private DOCKER_CONFIG):
#
#   mkdir -p "$DOCKER_CONFIG/cli-plugins"
#   ln -s "$PWD/docker-compose.sh" "$DOCKER_CONFIG/cli-plugins/docker-compose"
#
# The Docker CLI first asks a plugin for its metadata (`docker-cli-plugin-metadata`), then runs it as
# `docker-compose compose ARGS...`. Terminal-Bench 0.2.18 runs only `compose -p NAME -f FILE` followed by
# `build`, `up -d`, `down` or `down --rmi all --volumes`, which Compose v1 takes as they are: the only
# change is dropping the leading `compose`.
set -eu
COMPOSE_V1="${COMPOSE_V1:-/usr/bin/docker-compose}"
if [ "${1:-}" = "docker-cli-plugin-metadata" ]; then
    version=$("$COMPOSE_V1" version --short)
    printf '{"SchemaVersion":"0.1.0","Vendor":"Docker Compose v1 (docker-compose)","Version":"%s",%s}\n' \
        "$version" '"ShortDescription":"Docker Compose v1 behind the v2 plugin interface"'
    exit 0
fi
if [ "${1:-}" = "compose" ]; then
    shift
fi
exec "$COMPOSE_V1" "$@"
