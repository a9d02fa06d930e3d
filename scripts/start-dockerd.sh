#!/usr/bin/env bash
# Start a Docker engine when none answers, and wait until it does (CI and fresh machines).
set -euo pipefail
if docker info >/dev/null 2>&1; then exit 0; fi
command -v dockerd >/dev/null || { echo "start-dockerd: dockerd is not installed (apt-get install docker.io)" >&2; exit 2; }
log="${DOCKERD_LOG:-/tmp/dockerd.log}"
nohup dockerd >"$log" 2>&1 &
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then echo "start-dockerd: engine is up"; exit 0; fi
  sleep 1
done
echo "start-dockerd: the engine did not answer within 60 s; see $log" >&2
tail -20 "$log" >&2
exit 1
