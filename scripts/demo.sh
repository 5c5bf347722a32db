#!/usr/bin/env bash
# The main demo: shows the CLI on a local default table.
set -euo pipefail
BUILD="${1:-build}"
"$BUILD/deltacpp" --version
