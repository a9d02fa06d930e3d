#!/bin/bash
# Starting state: an empty working directory.
set -euo pipefail
mkdir -p "${WORKDIR:-/app}"
