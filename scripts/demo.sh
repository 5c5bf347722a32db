#!/usr/bin/env bash
# The main demo: generates a small local table with the library's writer and walks through the
# read path with the CLI, then creates and fills a second table with the CLI itself.
set -euo pipefail
BUILD="${1:-build}"
TABLE="${2:-$BUILD/demo-table}"
CLI="$BUILD/deltacpp"
export TZ=UTC
step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

# Reading: a table with five commits (create, appends, a replaceWhere overwrite) a day apart.
"$BUILD/make_demo_table" "$TABLE"
step "$CLI" --version
step "$CLI" describe "$TABLE"
step "$CLI" history "$TABLE"
step "$CLI" read "$TABLE"
step "$CLI" read "$TABLE" --version 2 --where "temperature > 0 AND country = 'NO'" --columns id,city,temperature
step "$CLI" read "$TABLE" --timestamp 2024-01-16T12:00:00Z --format csv
step "$CLI" read "$TABLE" --format json --limit 2
step "$CLI" files "$TABLE" --format csv

# Writing: a second table, created with the CLI and filled from CSV files.
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
STATIONS="$WORK/stations"
cat > "$WORK/stations.csv" <<'CSV'
id,station,country,elevation_m
1,Jakarta Kemayoran,ID,4
2,Surabaya Juanda,ID,3
3,Oslo Blindern,NO,94
4,Bergen Florida,NO,12
5,Lima Callao,PE,13
CSV
cat > "$WORK/norway.csv" <<'CSV'
id,station,country,elevation_m
3,Oslo Blindern,NO,94
4,Bergen Florida,NO,12
6,Tromsø Langnes,NO,8
CSV
cat > "$WORK/bad.csv" <<'CSV'
id,station,country,elevation_m
7,Nowhere,XX,-20000
CSV
step "$CLI" create "$STATIONS" --schema 'id long NOT NULL, station string, country string, elevation_m int' \
  --partition-by country --constraint 'valid_elevation=elevation_m > -500' --comment 'Weather stations'
step "$CLI" write "$STATIONS" "$WORK/stations.csv"
step "$CLI" write "$STATIONS" "$WORK/norway.csv" --mode overwrite --replace-where "country = 'NO'"
step "$CLI" write "$STATIONS" "$WORK/bad.csv" || echo "(refused: the table is unchanged)"
step "$CLI" history "$STATIONS" --format csv
step "$CLI" read "$STATIONS"
