#!/bin/bash
pytest /tests/test_answer.py -rA && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt
