#!/bin/bash
# Writes tests/data/tb1_real/runs anew with Terminal-Bench's own `tb run` (see ../README.md): the oracle agent
# on the three tasks, then Terminus 1 and Terminus 2 on write-greeting, their model answers replayed offline
# by the project's scripted OpenAI-compatible server.
#
#   bash tests/data/tb1_real/make/make_runs.sh
#
# TB (default: the side venv ~/.cache/rsr/tb1-venv/bin/tb) and RSR (default: .venv/bin/rsr) name the tools.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=$(dirname "$HERE")
REPO=$(cd "$DATA/../../.." && pwd)
TB=${TB:-$HOME/.cache/rsr/tb1-venv/bin/tb}
RSR=${RSR:-$REPO/.venv/bin/rsr}
PORT=${PORT:-18441}
TASKS=(write-greeting two-files sleepy-solution)

WORK=$(mktemp -d)
server=
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; fi
    for task in "${TASKS[@]}"; do docker rmi "tb__${task}__client" >/dev/null 2>&1 || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT

# `docker compose` through Compose v1, in a private Docker CLI configuration.
export DOCKER_CONFIG="$WORK/docker-config"
mkdir -p "$DOCKER_CONFIG/cli-plugins"
ln -s "$HERE/docker-compose.sh" "$DOCKER_CONFIG/cli-plugins/docker-compose"
docker compose version

# No telemetry, no uploads (`--no-upload-results`), no model cost map fetched from the network.
export HARBOR_TELEMETRY=0 LITELLM_LOCAL_MODEL_COST_MAP=True OPENAI_API_KEY=sk-scripted

rm -rf "$DATA/runs"
cd "$WORK" # not a git checkout: run_metadata.json's commit_hash is "unknown"
# --no-cleanup: TB's cleanup also prunes the machine's whole Docker build cache; the images are removed above.
common=(-p "$DATA/tasks" --output-path "$DATA/runs" --no-upload-results --no-cleanup --n-concurrent 1
    --log-level debug)

"$TB" run "${common[@]}" -a oracle --run-id oracle-run

cat >script.json <<'EOF'
{
  "rules": [
    {
      "model": "scripted-terminus-1",
      "turns": [
        {"state_analysis": "A shell prompt in /app; nothing has been written yet.", "explanation": "Write the greeting to /app/greeting.txt and show it.", "commands": [{"keystrokes": "echo 'Hello, world!' > /app/greeting.txt\n", "is_blocking": true, "timeout_sec": 5}, {"keystrokes": "cat /app/greeting.txt\n", "is_blocking": true, "timeout_sec": 5}], "is_task_complete": false},
        {"state_analysis": "cat printed Hello, world! from /app/greeting.txt.", "explanation": "The file is written; nothing is left to do.", "commands": [], "is_task_complete": true}
      ]
    },
    {
      "model": "scripted-terminus-2",
      "turns": [
        {"analysis": "The terminal is at /app and nothing has been written yet.", "plan": "Write the greeting to /app/greeting.txt and show it.", "commands": [{"keystrokes": "echo 'Hello, world!' > /app/greeting.txt\n", "duration": 0.5}, {"keystrokes": "cat /app/greeting.txt\n", "duration": 0.5}], "task_complete": false},
        {"analysis": "The file holds the greeting.", "plan": "The task is done.", "commands": [], "task_complete": true},
        {"analysis": "Confirmed: /app/greeting.txt holds the greeting.", "plan": "Finish.", "commands": [], "task_complete": true}
      ]
    }
  ]
}
EOF
"$RSR" llm serve-scripted --script script.json --port "$PORT" &
server=$!
for _ in $(seq 50); do
    if curl -sf "http://127.0.0.1:$PORT/v1/models" >/dev/null; then break; fi
    sleep 0.2
done

for agent in terminus-1 terminus-2; do
    "$TB" run "${common[@]}" -t write-greeting -a "$agent" -m "openai/scripted-$agent" \
        -k "api_base=http://127.0.0.1:$PORT/v1" --run-id "$agent-run"
done
