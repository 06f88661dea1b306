#!/bin/bash
# Three most frequent words of /app/text.txt.
cat /app/text.txt | tr ' ' '\n' | uniq -c | head -3
