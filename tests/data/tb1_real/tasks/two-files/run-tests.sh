#!/bin/bash
# pytest comes with the base image (Debian's python3-pytest), so nothing is installed here.
cd /app
python3 -m pytest "$TEST_DIR/test_outputs.py" -rA
