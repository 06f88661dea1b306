#!/bin/bash
cat > /app/top_words.sh <<'SH'
#!/bin/bash
# Three most frequent words of /app/text.txt.
tr -s ' \n' '\n' < /app/text.txt | grep -v '^$' | sort | uniq -c | sort -k1,1nr -k2,2 | head -3 | awk '{print $1" "$2}'
SH
