#!/bin/bash
# The usual harbor runner: install uv, then run pytest through uvx (offline, the install fails).
curl -LsSf https://astral.sh/uv/0.9.5/install.sh | sh
source $HOME/.local/bin/env
uvx -p 3.11 -w pytest==8.4.1 pytest /tests/test_answer.py -rA
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
