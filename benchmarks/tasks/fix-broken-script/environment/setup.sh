#!/bin/bash
# Starting state: the broken sum.sh in the working directory.
set -euo pipefail
FILES="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/files"
mkdir -p "${WORKDIR:-/app}"
cp "$FILES/sum.sh" "${WORKDIR:-/app}/sum.sh"
