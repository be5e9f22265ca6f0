#!/bin/sh
# test_testmap.sh SOURCE_DIR - tests/README.md is true of the tree (issue 33, item 4):
# - every source file of schema/, ingest/ and report/ (but main.c) has a row in its module
#   map, every row names a file that exists and tests that exist; a pure module ("unit") is
#   covered first by a program of its own name, test_<module>.c (the file's name without
#   .c and without a leading sa_ or parse_);
# - every test program (tests/test_*.c, .sh, .py) has a row in its test map;
# - every test program runs its cases through tu_run_group_tests (testutil.h), which exits
#   77 when none ran, never cmocka_run_group_tests itself.
set -u
src=$1
readme=$src/tests/README.md
fail=0

# the module map's rows: "| `path` | `test_a`, `test_b` | kind |"
rows=$(grep -E '^\| `(schema|ingest|report)/' "$readme")
for f in $(cd "$src" && ls schema/*/*.c ingest/*.c ingest/rollup/*.c report/*.c | grep -v '/main\.c$'); do
    row=$(printf '%s\n' "$rows" | grep -F "| \`$f\` |")
    if [ -z "$row" ]; then
        echo "tests/README.md: $f has no row in the module map"
        fail=1
        continue
    fi
    tests=$(printf '%s\n' "$row" | awk -F'|' '{print $3}' | tr -d '`,' )
    kind=$(printf '%s\n' "$row" | awk -F'|' '{print $4}')
    first=$(printf '%s\n' "$tests" | awk '{print $1}')
    for t in $tests; do
        if [ ! -f "$src/tests/$t.c" ] && [ ! -f "$src/tests/$t.sh" ] && [ ! -f "$src/tests/$t.py" ]; then
            echo "tests/README.md: $f: $t is not a test program of tests/"
            fail=1
        fi
    done
    case $kind in
    *unit*)
        stem=$(basename "$f" .c)
        stem=${stem#sa_}
        stem=${stem#parse_}
        if [ "$first" != "test_$stem" ]; then
            echo "tests/README.md: $f is a pure module: its own test_$stem comes first (not $first)"
            fail=1
        fi
        ;;
    esac
done
for p in $(printf '%s\n' "$rows" | awk -F'`' '{print $2}'); do
    if [ ! -f "$src/$p" ]; then
        echo "tests/README.md: the module map names $p, which is not in the tree"
        fail=1
    fi
done

# the test map: "| `test_x` | ... |"
for t in "$src"/tests/test_*.c "$src"/tests/test_*.sh "$src"/tests/test_*.py; do
    [ -f "$t" ] || continue
    name=$(basename "$t")
    name=${name%.*}
    if ! grep -qE "^\| \`$name\` \|" "$readme"; then
        echo "tests/README.md: $name has no row in the test map"
        fail=1
    fi
done

# one runner of the cases
hits=$(grep -ln 'cmocka_run_group_tests' "$src"/tests/test_*.c)
if [ -n "$hits" ]; then
    echo "call tu_run_group_tests (testutil.h), not cmocka_run_group_tests: a program that ran nothing must exit 77:"
    echo "$hits"
    fail=1
fi
for t in "$src"/tests/test_*.c; do
    if ! grep -q 'tu_run_group_tests(' "$t"; then
        echo "$t runs no case through tu_run_group_tests"
        fail=1
    fi
done
[ $fail -eq 0 ] && echo "test map: ok"
exit $fail
