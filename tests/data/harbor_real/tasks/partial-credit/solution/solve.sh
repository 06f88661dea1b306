#!/bin/bash
# The reference solution writes only the first file, so the verifier's reward is partial.
echo alpha > /app/a.txt
