#!/bin/bash
# Passes when greeting.txt holds exactly "Hello from traj!" (one line, trailing newline optional).
LOGS_DIR="${LOGS_DIR:-/logs}"
mkdir -p "$LOGS_DIR/verifier"
cd "${WORKDIR:-/app}" || exit 1
verdict() { echo "$1" > "$LOGS_DIR/verifier/reward.txt"; exit "$2"; }
if [ ! -f greeting.txt ]; then echo "FAILED greeting.txt::exists - no greeting.txt in $(pwd)"; verdict 0 1; fi
echo "PASSED greeting.txt::exists"
content="$(cat greeting.txt)"
if [ "$content" != "Hello from traj!" ] || [ "$(wc -l < greeting.txt | tr -d ' ')" -gt 1 ]; then
  echo "FAILED greeting.txt::content - got: $(head -c 200 greeting.txt | od -c | head -3)"
  verdict 0 1
fi
echo "PASSED greeting.txt::content"
verdict 1 0
