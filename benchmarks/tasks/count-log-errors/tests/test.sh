#!/bin/bash
# Compares errors.txt with the expected report for the fixture logs (3 + 1 ERROR lines).
LOGS_DIR="${LOGS_DIR:-/logs}"
mkdir -p "$LOGS_DIR/verifier"
cd "${WORKDIR:-/app}" || exit 1
expected=$'4\napi.log 3\nworker.log 1'
if [ ! -f errors.txt ]; then
  echo "FAILED errors.txt::exists - no errors.txt"
  echo 0 > "$LOGS_DIR/verifier/reward.txt"; exit 1
fi
echo "PASSED errors.txt::exists"
got="$(sed -e 's/[[:space:]]*$//' errors.txt | sed -e '/^$/d')"
if [ "$got" = "$expected" ]; then
  echo "PASSED errors.txt::report"
  echo 1 > "$LOGS_DIR/verifier/reward.txt"; exit 0
fi
echo "FAILED errors.txt::report - expected:"; echo "$expected"; echo "got:"; echo "$got"
echo 0 > "$LOGS_DIR/verifier/reward.txt"
exit 1
