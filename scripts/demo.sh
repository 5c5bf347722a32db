#!/usr/bin/env bash
# The main demo: the classic exam-scores tutorial on a fresh local table, step by step with the
# CLI: create with data, correct a score with UPDATE, upsert new scores with MERGE, then look
# back: history, time travel to version 0, and the change data feed of the corrections.
set -euo pipefail
BUILD="${1:-build}"
TABLE="${2:-$BUILD/demo-table}"
CLI="$BUILD/deltacpp"
export TZ=UTC
step() { printf '\n\033[1m$'; printf ' %q' "$@"; printf '\033[0m\n'; "$@"; }
say() { printf '\n\033[36m# %s\033[0m\n' "$*"; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
rm -rf "$TABLE"
cat > "$WORK/scores.csv" <<'CSV'
id,nama,nilai
1,Ali,85
2,Budi,90
3,Citra,78
CSV
cat > "$WORK/new_scores.csv" <<'CSV'
id,nama,nilai
2,Budi,95
4,Dewi,92
CSV

step "$CLI" --version
say "Version 0: a table of exam scores, with the change data feed on"
step "$CLI" write "$TABLE" "$WORK/scores.csv" --schema 'id long, nama string, nilai long' \
  --property delta.enableChangeDataFeed=true
step "$CLI" read "$TABLE" --order-by id

say "Version 1: Citra's score is corrected"
step "$CLI" update "$TABLE" --set 'nilai = 88' --where "nama = 'Citra'"
step "$CLI" read "$TABLE" --order-by id

say "Version 2: new scores arrive; MERGE updates Budi's score and inserts Dewi"
step "$CLI" merge "$TABLE" --source "$WORK/new_scores.csv" --target-alias t --source-alias s \
  --on 't.id = s.id' --when-matched-update 'nilai = s.nilai' --when-not-matched-insert-all
step "$CLI" read "$TABLE" --order-by id

say "What happened, newest first"
step "$CLI" history "$TABLE"

say "Time travel: the table as it was at version 0"
step "$CLI" read "$TABLE" --version 0 --order-by id

say "The change data feed of versions 1-2: every row the corrections touched"
step "$CLI" changes "$TABLE" --from 1 --to 2 --order-by '_commit_version, id, _change_type DESC'
