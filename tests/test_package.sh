#!/bin/sh
# test_package.sh - the Debian package: build it with cpack from this build tree,
# check its metadata and contents, install it and run what it installed.
#
# usage: test_package.sh BUILD_DIR SOURCE_DIR CPACK VERSION HAVE_SLURM_REPORT(0|1)
#
# Install: a real `dpkg -i` into this system, then `dpkg --purge`, when that is safe:
# running as root, slurm-archive not installed already, no unpackaged
# /usr/bin/slurm-ingest or /usr/bin/slurm-report that the package would overwrite and
# the purge then delete, no user or group slurm-ingest already (the purge removes
# them), and SA_TEST_NO_DPKG_INSTALL unset. Installed for real, it checks that the
# postinst made the system user slurm-ingest and its directories (owner, mode 0750),
# that the user can run slurm-ingest and write them, that a reinstall keeps the user,
# and that the purge removes user and group (the directories stay, given to root; the
# test removes those it caused to exist). Otherwise (it says why)
# the package is unpacked with dpkg-deb -x into a temporary directory and the
# binaries are run from there. Exit 77 (skipped) when the Debian tools are missing.
#
# lintian (Debian's package checker) must report no error (E:) on the package; the
# warnings that remain are listed in tools/README.md ("The package and the units") and printed.
# The version is the one README.md's "Upgrading" section names as the current one, and
# the newest entry of the packaged changelog.
set -eu

build=$1 src=$2 cpack=$3 version=$4 have_report=$5
tmp=$(mktemp -d /tmp/sa-test-package.XXXXXX)
installed=0
made_dirs=""   # directories that exist only because this test installed the package

cleanup() {
    if [ "$installed" = 1 ]; then
        echo "test_package: dpkg --purge slurm-archive"
        dpkg --purge slurm-archive >"$tmp/purge.log" 2>&1 || cat "$tmp/purge.log"
    fi
    for d in $made_dirs; do
        rm -rf -- "$d"
    done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
    echo "test_package: FAIL: $*"
    exit 1
}

for tool in dpkg-deb dpkg-shlibdeps file readelf lintian; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "test_package: SKIP: $tool is missing (tools/install-deps installs dpkg-dev, file and lintian)"
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
grep -q ' postrm' "$tmp/info" || fail "no postrm script"
# the postinst creates the service user with adduser or useradd
field Depends | grep -q 'adduser | passwd' || fail "Depends ($(field Depends)) lacks 'adduser | passwd'"
dpkg-deb -e "$deb" "$tmp/control"
for script in postinst postrm; do
    sh -n "$tmp/control/$script" || fail "$script: syntax error"
done

# the version README.md tells users to upgrade to ("The first run of 0.2 ...")
readme_version=$(sed -n 's/.*The first run of \([0-9][0-9.]*[0-9]\) .*/\1/p' "$src/README.md" | head -1)
[ -n "$readme_version" ] || fail "README.md names no version in 'The first run of X.Y'"
case "$version" in
"$readme_version" | "$readme_version".*) ;;
*) fail "the package is $version, README.md's Upgrading section is about $readme_version" ;;
esac

# 3. Contents.
dpkg-deb -c "$deb" >"$tmp/contents"
echo "test_package: contents:"
sed 's/^/  /' "$tmp/contents"
expect() {
    grep -q " \./$1\$" "$tmp/contents" || fail "the package lacks /$1"
}
expect usr/bin/slurm-ingest
expect usr/share/man/man8/slurm-ingest.8.gz
expect usr/share/man/man1/slurm-report.1.gz
expect usr/share/doc/slurm-archive/copyright
expect usr/share/doc/slurm-archive/changelog.gz
expect usr/lib/systemd/system/slurm-ingest@.service
expect usr/lib/systemd/system/slurm-ingest@.timer
expect usr/lib/systemd/system/slurm-report-site.service
expect usr/lib/systemd/system/slurm-report-site.timer
expect usr/lib/systemd/system/slurm-report-cloudwatch.service
expect usr/lib/systemd/system/slurm-report-cloudwatch.timer
expect usr/share/doc/slurm-archive/examples/slurm-ingest.conf
for f in "$src"/schema/*.json "$src"/schema/*/*.json "$src"/schema/*/*.sql; do
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

dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ./usr/share/doc/slurm-archive/changelog.gz | gzip -dc >"$tmp/changelog" ||
    fail "cannot read the packaged changelog"
head -1 "$tmp/changelog" | grep -q "^slurm-archive ($version) " ||
    fail "the changelog's newest entry is not $version: $(head -1 "$tmp/changelog")"
dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ./usr/share/man/man8/slurm-ingest.8.gz | gzip -dc |
    grep -q "^\.TH .*\"slurm-archive $version\"" || fail "slurm-ingest.8's footer does not say slurm-archive $version"

# 4. lintian: no error; the warnings and notes are printed (README.md says which remain and why).
rc=0
lintian --tag-display-limit 0 "$deb" >"$tmp/lintian" 2>&1 || rc=$?
sed 's/^/  lintian: /' "$tmp/lintian"
if grep -q '^E: ' "$tmp/lintian"; then
    fail "lintian reports errors (E:) on $(basename "$deb")"
fi
[ "$rc" = 0 ] || fail "lintian exited $rc"
echo "test_package: lintian: no error ($(grep -c '^W: ' "$tmp/lintian") warning(s))"

# 5. Install it (for real when safe), then run the binaries.
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
    if getent passwd slurm-ingest >/dev/null || getent group slurm-ingest >/dev/null; then
        why="a user or group slurm-ingest exists already (the purge would delete it)"
    fi
fi

# dpkg -i the package, waiting for another dpkg/apt that holds the lock (a minute at most).
dpkg_install() {
    tries=0
    until dpkg -i "$deb" >"$tmp/dpkg.log" 2>&1; do
        if grep -q 'lock' "$tmp/dpkg.log" && [ $tries -lt 30 ]; then
            tries=$((tries + 1))
            sleep 2
            continue
        fi
        cat "$tmp/dpkg.log"
        fail "dpkg -i failed"
    done
    sed 's/^/  /' "$tmp/dpkg.log"
}

# Fails unless path $1 has owner:group $2 and octal mode $3.
expect_stat() {
    got=$(stat -c '%U:%G %a' "$1") || fail "$1 does not exist"
    [ "$got" = "$2 $3" ] || fail "$1 is $got, expected $2 $3"
    echo "test_package: $1: $got"
}

# The postinst's service user and directories (installed for real only): a system
# user and group slurm-ingest, no login, home /var/lib/slurm-ingest; its directories
# slurm-ingest:slurm-ingest 0750; /etc/slurm-ingest root:slurm-ingest 0750 (when the
# package created it). The user runs slurm-ingest from captures with MongoDB
# unreachable, which takes the lock and writes the time series in /var/lib and the
# spool in /var/spool (exit 8). A reinstall (postinst again) keeps the same user.
check_service_user() {
    pw=$(getent passwd slurm-ingest) || fail "the package did not create the user slurm-ingest"
    getent group slurm-ingest >/dev/null || fail "the package did not create the group slurm-ingest"
    echo "test_package: passwd: $pw"
    uid=$(id -u slurm-ingest)
    sys_max=$(sed -n 's/^SYS_UID_MAX[[:space:]]*//p' /etc/login.defs 2>/dev/null)
    [ "$uid" -le "${sys_max:-999}" ] && [ "$uid" -gt 0 ] || fail "slurm-ingest has uid $uid, not a system uid"
    [ "$(id -gn slurm-ingest)" = slurm-ingest ] || fail "slurm-ingest's group is $(id -gn slurm-ingest)"
    case $pw in *:/var/lib/slurm-ingest:/usr/sbin/nologin) ;; *) fail "home or shell of slurm-ingest: $pw" ;; esac
    expect_stat /var/lib/slurm-ingest slurm-ingest:slurm-ingest 750
    expect_stat /var/spool/slurm-ingest slurm-ingest:slurm-ingest 750
    case $made_dirs in *" /etc/slurm-ingest"*) expect_stat /etc/slurm-ingest root:slurm-ingest 750 ;; esac

    mkdir -p "$tmp/in"
    chmod 755 "$tmp" "$tmp/in"
    cp "$src/fixtures/demo/sinfo-end.json" "$src/fixtures/demo/squeue-end.json" "$tmp/in/"
    chmod 644 "$tmp/in/"*
    rc=0
    (cd / && umask 027 && setpriv --reuid=slurm-ingest --regid=slurm-ingest --init-groups --reset-env \
        env SLURM_INGEST_MONGO_URI='mongodb://127.0.0.1:9/?serverSelectionTimeoutMS=300' \
        /usr/bin/slurm-ingest --cluster=pkgtest -q --at=2026-10-31T23:55:00Z \
        --sinfo="$tmp/in/sinfo-end.json" --squeue="$tmp/in/squeue-end.json") >"$tmp/run.log" 2>&1 || rc=$?
    [ "$rc" = 8 ] || { cat "$tmp/run.log"; fail "slurm-ingest as slurm-ingest exited $rc, expected 8 (spooled)"; }
    expect_stat /var/lib/slurm-ingest/pkgtest.sqlite slurm-ingest:slurm-ingest 640
    [ -n "$(find /var/spool/slurm-ingest/pkgtest -type f -user slurm-ingest)" ] ||
        fail "nothing spooled by slurm-ingest in /var/spool/slurm-ingest/pkgtest"
    echo "test_package: slurm-ingest ran as slurm-ingest: time series and spool written (exit 8)"

    echo "test_package: dpkg -i again (the postinst runs twice)"
    dpkg_install
    [ "$(id -u slurm-ingest)" = "$uid" ] || fail "the reinstall changed slurm-ingest's uid"
    [ "$(getent passwd slurm-ingest)" = "$pw" ] || fail "the reinstall changed slurm-ingest: $(getent passwd slurm-ingest)"
    expect_stat /var/spool/slurm-ingest slurm-ingest:slurm-ingest 750
}

if [ -z "$why" ]; then
    for d in /var/lib/slurm-ingest /var/spool/slurm-ingest /etc/slurm-ingest; do
        [ -e "$d" ] || made_dirs="$made_dirs $d"
    done
    echo "test_package: dpkg -i $(basename "$deb")"
    installed=1
    dpkg_install
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
    check_service_user
    dpkg --purge slurm-archive >"$tmp/purge.log" 2>&1 || { cat "$tmp/purge.log"; fail "dpkg --purge failed"; }
    installed=0
    [ ! -e /usr/bin/slurm-ingest ] || fail "/usr/bin/slurm-ingest is still there after the purge"
    [ ! -e /usr/lib/systemd/system/slurm-ingest@.service ] || fail "the unit is still there after the purge"
    ! getent passwd slurm-ingest >/dev/null || fail "the user slurm-ingest is still there after the purge"
    ! getent group slurm-ingest >/dev/null || fail "the group slurm-ingest is still there after the purge"
    # the data stays, given to root (no file of a deleted user id); cleanup removes it
    expect_stat /var/lib/slurm-ingest root:root 750
    [ -z "$(find /var/lib/slurm-ingest /var/spool/slurm-ingest -nouser -o -nogroup)" ] ||
        fail "files of the deleted user are left: $(find /var/lib/slurm-ingest /var/spool/slurm-ingest -nouser -o -nogroup)"
    echo "test_package: installed, ran and purged"
fi
echo "test_package: OK"
