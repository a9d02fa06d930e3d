#!/bin/bash
# Runs sum.sh on a few inputs; passes when every output is the right sum.
LOGS_DIR="${LOGS_DIR:-/logs}"
mkdir -p "$LOGS_DIR/verifier"
cd "${WORKDIR:-/app}" || exit 1
failed=0
check() {
  local expected="$1"; shift
  local got
  got="$(timeout 10 bash sum.sh "$@" 2>&1 | tr -d '[:space:]')"
  if [ "$got" = "$expected" ]; then echo "PASSED sum.sh::args[$(IFS=,; echo "$*")]"; else echo "FAILED sum.sh::args[$(IFS=,; echo "$*")] - expected $expected, got '$got'"; failed=1; fi
}
check 5 2 3
check 15 2 3 10
check 0
check 42 42
check -1 4 -5
check 1000 999 1
if [ "$failed" -eq 0 ]; then echo 1 > "$LOGS_DIR/verifier/reward.txt"; exit 0; fi
echo 0 > "$LOGS_DIR/verifier/reward.txt"
exit 1
