#!/bin/bash
# Takes longer than the task's 5 s agent timeout.
sleep 20
echo finished > /app/finished.txt
