#!/bin/bash
# Half a point per correct file, written as a rewards object.
score=0
grep -qx alpha /app/a.txt 2>/dev/null && score=$((score + 1))
grep -qx beta /app/b.txt 2>/dev/null && score=$((score + 1))
python3 -c "import json,sys; s=int(sys.argv[1]); print(json.dumps({'reward': s / 2, 'files_ok': s}))" "$score" > /logs/verifier/reward.json
echo "files correct: $score of 2"
