#!/bin/sh
# test_layering.sh SOURCE_DIR - the rules that keep the layers apart (issue 11):
# - report/ reads the time series only through the read API of schema/tsdb/sa_tsdb.h: no
#   SQLite calls, no SQL text, no raw handle (sa_tsdb_handle is for tests);
# - report/ reads job documents through the typed view of schema/jobdoc/sa_jobview.h: no
#   bson_iter outside report/sa_rdb.c (which reads the clusters and ingest_runs documents);
# - dates and durations are parsed by schema/core/sa_time.c only (no strptime elsewhere in
#   ingest/, report/ or schema/);
# - no function of the product (ingest/, schema/, report/: every .c file) is over 120
#   lines (a definition's opening brace and closing brace stand at column 0);
# - schema/ is three layers: core/ (errors, exit codes, dates, vectors, maps, hostlists, the
#   records, the MongoDB client) includes neither of the others; jobdoc/ (the job document, its
#   BSON, view, rollups) and tsdb/ (the SQLite time series) include core/ and not each other.
# The rules on SQL and BSON are report/'s: ingest/ writes both stores, schema/ is them.
set -u
src=$1
fail=0

hits=$(grep -nE 'sqlite3[_.]|<sqlite3\.h>|sa_tsdb_handle|"(SELECT|INSERT|UPDATE|DELETE|PRAGMA) ' "$src"/report/*.c "$src"/report/*.h)
if [ -n "$hits" ]; then
    echo "report/ must use the read API of schema/tsdb/sa_tsdb.h, not SQL or the raw handle:"
    echo "$hits"
    fail=1
fi
hits=$(grep -n 'sa_tsdb_handle(' "$src"/report/*.c "$src"/ingest/*.c "$src"/tools/*.c 2>/dev/null)
if [ -n "$hits" ]; then
    echo "sa_tsdb_handle() is for tests only:"
    echo "$hits"
    fail=1
fi
hits=$(grep -n 'bson_iter_' "$src"/report/*.c | grep -v '/sa_rdb\.c:')
if [ -n "$hits" ]; then
    echo "report/ reads job documents through schema/jobdoc/sa_jobview.h (only sa_rdb.c walks BSON: clusters, ingest_runs):"
    echo "$hits"
    fail=1
fi
hits=$(grep -n 'strptime(' "$src"/ingest/*.c "$src"/report/*.c "$src"/schema/*/*.c | grep -v '/sa_time\.c:')
if [ -n "$hits" ]; then
    echo "dates are parsed by schema/core/sa_time.c:"
    echo "$hits"
    fail=1
fi
long=$(awk '
    /^[A-Za-z_].*\(/ && !/;[ \t]*$/ { sig = $0; sigline = FNR }
    /^\{/ { start = sigline; name = sig; sub(/\(.*/, "", name); n = split(name, w, /[ *]+/); name = w[n]; inside = 1 }
    /^\}/ && inside { len = FNR - start + 1; if (len > 120) printf "%s:%d %s: %d lines\n", FILENAME, start, name, len; inside = 0 }
' "$src"/ingest/*.c "$src"/schema/*/*.c "$src"/report/*.c)
if [ -n "$long" ]; then
    echo "functions over 120 lines:"
    echo "$long"
    fail=1
fi
hdrs() { for h in "$src"/schema/"$1"/*.h; do printf '%s\n' "${h##*/}"; done; }
for pair in "core jobdoc" "core tsdb" "jobdoc tsdb" "tsdb jobdoc"; do
    set -- $pair
    for h in $(hdrs "$2"); do
        hits=$(grep -n "#include \"$h\"" "$src"/schema/"$1"/*.[ch])
        if [ -n "$hits" ]; then
            echo "schema/$1/ must not include schema/$2/ ($h):"
            echo "$hits"
            fail=1
        fi
    done
done
[ $fail -eq 0 ] && echo "layering: ok"
exit $fail
