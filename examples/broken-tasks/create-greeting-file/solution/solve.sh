#!/bin/bash
# Deliberately wrong (docs/bench.md: a broken task): the greeting lacks its "!".
set -euo pipefail
printf 'Hello from traj\n' > greeting.txt
