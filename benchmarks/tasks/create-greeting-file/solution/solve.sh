#!/bin/bash
set -euo pipefail
printf 'Hello from traj!\n' > greeting.txt
