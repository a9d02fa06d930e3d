#!/bin/bash
set -euo pipefail
total=0
report=""
for file in $(ls logs/*.log | sort); do
  count=$(awk '$3 == "ERROR"' "$file" | wc -l | tr -d ' ')
  total=$((total + count))
  if [ "$count" -gt 0 ]; then report="${report}$(basename "$file") ${count}"$'\n'; fi
done
{ echo "$total"; printf '%s' "$report"; } > errors.txt
