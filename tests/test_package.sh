#!/bin/sh
# test_package.sh - the Debian package: build it with cpack from this build tree,
# check its metadata and contents, install it and run what it installed.
#
# usage: test_package.sh BUILD_DIR SOURCE_DIR CPACK VERSION HAVE_SLURM_REPORT(0|1)
#
# Install: a real `dpkg -i` into this system, then `dpkg --purge`, when that is safe:
# running as root, slurm-archive not installed already, no unpackaged
# /usr/bin/slurm-ingest or /usr/bin/slurm-report that the package would overwrite and
# the purge then delete, and SA_TEST_NO_DPKG_INSTALL unset. Otherwise (it says why)
# the package is unpacked with dpkg-deb -x into a temporary directory and the
# binaries are run from there. Exit 77 (skipped) when the Debian tools are missing.
set -eu

build=$1 src=$2 cpack=$3 version=$4 have_report=$5
tmp=$(mktemp -d /tmp/sa-test-package.XXXXXX)
installed=0

cleanup() {
    if [ "$installed" = 1 ]; then
        echo "test_package: dpkg --purge slurm-archive"
        dpkg --purge slurm-archive >"$tmp/purge.log" 2>&1 || cat "$tmp/purge.log"
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
    echo "test_package: FAIL: $*"
    exit 1
}

for tool in dpkg-deb dpkg-shlibdeps file readelf; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "test_package: SKIP: $tool is missing (tools/install-deps installs dpkg-dev and file)"
        exit 77
    fi
done

# 1. Build the package (cpack installs this build tree into a staging directory).
echo "test_package: $cpack -G DEB --config $build/CPackConfig.cmake -B $tmp/out"
if ! "$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/out" >"$tmp/cpack.log" 2>&1; then
    cat "$tmp/cpack.log"
    fail "cpack failed"
fi
set -- "$tmp"/out/*.deb
[ $# = 1 ] && [ -f "$1" ] || fail "expected one .deb in $tmp/out, got: $*"
deb=$1
echo "test_package: built $(basename "$deb")"

# 2. Metadata.
dpkg-deb -I "$deb" >"$tmp/info"
sed 's/^/  /' "$tmp/info"
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = slurm-archive ] || fail "Package is '$(field Package)'"
[ "$(field Version)" = "$version" ] || fail "Version is '$(field Version)', not $version"
[ "$(field Section)" = admin ] || fail "Section is '$(field Section)'"
[ -n "$(field Maintainer)" ] || fail "no Maintainer"
# every library the binaries need is a dependency (dpkg-shlibdeps): libjansson.so.4 ->
# libjansson4, libmongoc-1.0.so.0 -> libmongoc-1.0-0, libm.so.6 -> libc6, ...
bins="$build/slurm-ingest"
[ "$have_report" != 1 ] || bins="$bins $build/slurm-report"
for bin in $bins; do
    [ -f "$bin" ] || continue
    for soname in $(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
        name=${soname%%.so*}
        case $name in libc | libm | libpthread | libdl | librt | ld-linux*) name=libc6 ;; esac
        field Depends | grep -q -- "$name" ||
            fail "Depends ($(field Depends)) lacks $name, needed by $(basename "$bin") ($soname)"
    done
done
grep -q ' postinst' "$tmp/info" || fail "no postinst script"

# 3. Contents.
dpkg-deb -c "$deb" >"$tmp/contents"
echo "test_package: contents:"
sed 's/^/  /' "$tmp/contents"
expect() {
    grep -q " \./$1\$" "$tmp/contents" || fail "the package lacks /$1"
}
expect usr/bin/slurm-ingest
expect usr/share/man/man8/slurm-ingest.8
expect usr/share/man/man1/slurm-report.1
expect usr/lib/systemd/system/slurm-ingest@.service
expect usr/lib/systemd/system/slurm-ingest@.timer
expect usr/share/doc/slurm-archive/examples/slurm-ingest.conf
for f in "$src"/schema/*.json "$src"/schema/*.sql; do
    [ -e "$f" ] || continue
    expect "usr/share/slurm-archive/schema/$(basename "$f")"
done
if [ "$have_report" = 1 ]; then
    expect usr/bin/slurm-report
elif grep -q ' \./usr/bin/slurm-report$' "$tmp/contents"; then
    fail "slurm-report is packaged but the build has no such target"
else
    echo "test_package: note: no slurm-report target in this build; not packaged, not run"
fi
# nothing of the build or test tree, nothing outside the FHS places above
if grep -E ' \./(usr/local|home|tmp|work|root)/|/test_[a-z_]*$|bench-tsdb' "$tmp/contents"; then
    fail "unexpected files in the package"
fi

# 4. Install it (for real when safe), then run the binaries.
why=""
if [ -n "${SA_TEST_NO_DPKG_INSTALL:-}" ]; then
    why="SA_TEST_NO_DPKG_INSTALL is set"
elif [ "$(id -u)" != 0 ]; then
    why="not root"
elif dpkg-query -W -f='${Status}' slurm-archive 2>/dev/null | grep -q 'ok installed'; then
    why="slurm-archive is already installed here (not touched)"
else
    for b in /usr/bin/slurm-ingest /usr/bin/slurm-report; do
        if [ -e "$b" ] && ! dpkg -S "$b" >/dev/null 2>&1; then
            why="$b exists and belongs to no package (a manual install would be overwritten)"
        fi
    done
fi

if [ -z "$why" ]; then
    echo "test_package: dpkg -i $(basename "$deb")"
    installed=1
    tries=0
    until dpkg -i "$deb" >"$tmp/dpkg.log" 2>&1; do
        # another dpkg/apt holds the lock: wait for it (a minute at most)
        if grep -q 'lock' "$tmp/dpkg.log" && [ $tries -lt 30 ]; then
            tries=$((tries + 1))
            sleep 2
            continue
        fi
        cat "$tmp/dpkg.log"
        fail "dpkg -i failed"
    done
    sed 's/^/  /' "$tmp/dpkg.log"
    dpkg-query -W -f='${Status}\n' slurm-archive | grep -q 'install ok installed' || fail "not installed"
    root=""
else
    echo "test_package: no real dpkg -i: $why; unpacking with dpkg-deb -x instead"
    dpkg-deb -x "$deb" "$tmp/root"
    root="$tmp/root"
fi

ingest="$root/usr/bin/slurm-ingest"
[ -x "$ingest" ] || fail "$ingest is not executable"
out=$("$ingest" --version) || fail "slurm-ingest --version exited $?"
echo "test_package: slurm-ingest --version: $out"
case "$out" in *"$version"*) ;; *) fail "--version does not say $version" ;; esac
"$ingest" --help >"$tmp/help" || fail "slurm-ingest --help exited $?"
grep -q -- '--' "$tmp/help" || fail "slurm-ingest --help prints no options"
if [ "$have_report" = 1 ]; then
    report="$root/usr/bin/slurm-report"
    out=$("$report" --version) || fail "slurm-report --version exited $?"
    echo "test_package: slurm-report --version: $out"
    case "$out" in *"$version"*) ;; *) fail "slurm-report --version does not say $version" ;; esac
    "$report" --help >"$tmp/help" || fail "slurm-report --help exited $?"
fi

# The installed unit names the installed binary.
grep -q '^ExecStart=/usr/bin/slurm-ingest --config /etc/slurm-ingest/%i.conf --cluster %i$' \
    "$root/usr/lib/systemd/system/slurm-ingest@.service" || fail "the installed unit's ExecStart is wrong"

if [ -z "$root" ]; then
    # installed for real: the man page is found, and the unit verifies as installed
    man -w slurm-ingest >/dev/null 2>&1 || fail "man -w slurm-ingest finds no page"
    man -w 1 slurm-report >/dev/null 2>&1 || fail "man -w 1 slurm-report finds no page"
    if command -v systemd-analyze >/dev/null 2>&1; then
        (cd "$tmp" && systemd-analyze verify --recursive-errors=no \
            /usr/lib/systemd/system/slurm-ingest@.service /usr/lib/systemd/system/slurm-ingest@.timer) \
            >"$tmp/verify" 2>&1 || true
        if [ -s "$tmp/verify" ]; then
            cat "$tmp/verify"
            fail "systemd-analyze verify complains about the installed units"
        fi
        echo "test_package: systemd-analyze verify of the installed units: clean"
    fi
    dpkg --purge slurm-archive >"$tmp/purge.log" 2>&1 || { cat "$tmp/purge.log"; fail "dpkg --purge failed"; }
    installed=0
    [ ! -e /usr/bin/slurm-ingest ] || fail "/usr/bin/slurm-ingest is still there after the purge"
    [ ! -e /usr/lib/systemd/system/slurm-ingest@.service ] || fail "the unit is still there after the purge"
    echo "test_package: installed, ran and purged"
fi
echo "test_package: OK"
