#!/bin/bash
# Starting state: three log files under logs/.
set -euo pipefail
FILES="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/files"
mkdir -p "${WORKDIR:-/app}/logs"
cp "$FILES"/*.log "${WORKDIR:-/app}/logs/"
