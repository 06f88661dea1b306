#!/bin/bash
# Hidden verifier: runs the tests and writes the reward the harbor way.
mkdir -p /logs/verifier
if python3 -m pytest -q -rA -p no:cacheprovider /tests/test_outputs.py; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
