#!/bin/bash
# The project's own virtual environment runs the tests.
cd /app
source .venv/bin/activate
python -m pytest /tests/test_answer.py -rA && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt
