#!/usr/bin/env bash
# The main demo: generates a small local table and walks through the read path with the CLI.
set -euo pipefail
BUILD="${1:-build}"
TABLE="${2:-$BUILD/demo-table}"
CLI="$BUILD/deltacpp"
export TZ=UTC
step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

"$BUILD/make_demo_table" "$TABLE"
step "$CLI" --version
step "$CLI" describe "$TABLE"
step "$CLI" history "$TABLE"
step "$CLI" read "$TABLE"
step "$CLI" read "$TABLE" --version 2 --where "temperature > 16 AND country = 'NO'" --columns id,city,temperature
step "$CLI" read "$TABLE" --timestamp 2024-01-16T12:00:00Z --format csv
step "$CLI" read "$TABLE" --format json --limit 2
step "$CLI" files "$TABLE" --format csv
