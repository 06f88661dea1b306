#!/bin/bash
# Deliberately incomplete: only alpha.txt is written, so one of the two tests fails.
echo alpha > /app/alpha.txt
