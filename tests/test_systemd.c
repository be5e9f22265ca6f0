/*
 * test_systemd.c - tools/systemd/slurm-ingest@.service and slurm-ingest@.timer,
 * slurm-report-site.service and .timer, and slurm-report-cloudwatch.service and .timer pass
 * `systemd-analyze verify` (offline: PID 1 need not be systemd).
 *
 * The units name /usr/bin/slurm-ingest, which a build tree does not have, so a copy
 * whose ExecStart points at the built binary (SA_INGEST_BIN) is verified: the
 * check that the command exists and is executable is real. Documentation= is
 * checked too, against tools/man/slurm-ingest.8 (MANPATH points at a copy).
 * systemd-analyze prints warnings (an unknown key, a bad value) yet exits 0, so
 * any output is a failure; a deliberately broken copy shows the check can fail.
 * Without a usable systemd-analyze the test says why and exits 77 (skipped).
 */
#define _GNU_SOURCE

#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "sa_config.h"
#include "sa_exit.h"

#ifndef SA_SOURCE_DIR
#error "SA_SOURCE_DIR (the source tree) must be defined by tests/CMakeLists.txt"
#endif

#define UNIT_DIR SA_SOURCE_DIR "/tools/systemd"
#define MAN_PAGE SA_SOURCE_DIR "/tools/man/slurm-ingest.8"
#define MAN_REPORT SA_SOURCE_DIR "/tools/man/slurm-report.1"
#define EXAMPLE_CONF UNIT_DIR "/example.conf"
#define SERVICE_USER "slurm-ingest"

/*
 * The highest overall exposure `systemd-analyze security` may give the service (its
 * scale is 0-10, "OK" below 5; the service scored 6.8 as root, it scores 1.2 with
 * systemd 252). What remains exposed is what the job needs (RESIDUAL below). Dropping
 * User=, CapabilityBoundingSet=, SystemCallFilter=, RestrictNamespaces= or
 * RestrictAddressFamilies= alone takes it past 1.5; the score moves by 0.1 or less
 * when one of the other options is dropped, so each of those is checked by name
 * instead: no exposed item outside RESIDUAL.
 */
#define EXPOSURE_MAX "1.5"
#define EXPOSURE_MAX_TENTHS "15"

/*
 * The items of `systemd-analyze security` the service is allowed to leave exposed, and
 * why: slurm-ingest must reach slurmctld, slurmdbd and MongoDB over TCP and munged
 * over AF_UNIX (network, address families, no IP allow list: the addresses are the
 * site's, a drop-in can add IPAddressAllow=); PrivateUsers= would hide the real
 * identities (and supplementary groups) munge, NSS and Slurm's files rely on;
 * group-readable files let group slurm-ingest run slurm-report; ProtectClock= allows
 * reading the RTC; a RootDirectory= would need the Slurm client inside it.
 */
static const char *const RESIDUAL[] = {
    "PrivateNetwork",     "RestrictAddressFamilies_AF_INET_INET6", "RestrictAddressFamilies_AF_UNIX",
    "IPAddressDeny",      "PrivateUsers",                          "UMask",
    "DeviceAllow",        "RootDirectoryOrRootImage",
};

static char work[64];   /* temporary directory of this run */

/* Output of a command and its exit status. */
typedef struct {
    char *out; /* stdout and stderr together, caller frees */
    int status;
} run_t;

/* Runs a shell command line built by the test (fixed paths only), capturing its output. */
static run_t run(const char *cmd)
{
    run_t r = {NULL, -1};
    char *full = NULL;
    size_t cap = 0, len = 0;
    FILE *p;
    int st;

    assert_true(asprintf(&full, "%s 2>&1", cmd) > 0);
    p = popen(full, "r");
    assert_non_null(p);
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            r.out = realloc(r.out, cap);
            assert_non_null(r.out);
        }
        size_t n = fread(r.out + len, 1, 4096, p);
        len += n;
        if (n == 0)
            break;
    }
    r.out[len] = '\0';
    st = pclose(p);
    r.status = (st >= 0 && WIFEXITED(st)) ? WEXITSTATUS(st) : -1;
    free(full);
    return r;
}

/* Writes text to work/name. */
static void put(const char *name, const char *text)
{
    char path[256];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", work, name);
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* text with every occurrence of from replaced by to (caller frees). */
static char *replace_all(const char *text, const char *from, const char *to)
{
    size_t fl = strlen(from), tl = strlen(to), n = 0;
    const char *p;
    char *out, *o;

    for (p = text; (p = strstr(p, from)); p += fl)
        n++;
    out = malloc(strlen(text) + n * (tl > fl ? tl - fl : 0) + 1);
    assert_non_null(out);
    for (o = out, p = text;;) {
        const char *q = strstr(p, from);
        if (!q) {
            strcpy(o, p);
            break;
        }
        memcpy(o, p, (size_t)(q - p));
        o += q - p;
        memcpy(o, to, tl);
        o += tl;
        p = q + fl;
    }
    return out;
}

/* Verifies units (file names inside work, space-separated) and returns the result. */
static run_t verify(const char *units)
{
    char cmd[1024], list[512] = "";
    char *save = NULL, *copy = strdup(units), *tok;

    assert_non_null(copy);
    for (tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        strcat(list, " ");
        strcat(list, work);
        strcat(list, "/");
        strcat(list, tok);
    }
    free(copy);
    /* --recursive-errors=no: this host's own units are not ours to judge; both of
       ours are named explicitly */
    snprintf(cmd, sizeof cmd, "cd '%s' && MANPATH='%s/man' systemd-analyze verify --recursive-errors=no%s", work,
             work, list);
    return run(cmd);
}

/*
 * Copies the units NAME.service and NAME.timer into the work directory, the service's
 * "ExecStart=/usr/bin/<bin> " pointed at built; false (said on stderr) when it has no such line.
 */
static bool put_units(const char *name, const char *bin, const char *built)
{
    char svcname[128], timername[128], from[64], to[PATH_MAX + 16], path[PATH_MAX], *svc, *timer, *svc2;
    bool ok;

    snprintf(svcname, sizeof svcname, "%s.service", name);
    snprintf(timername, sizeof timername, "%s.timer", name);
    snprintf(from, sizeof from, "ExecStart=/usr/bin/%s ", bin);
    snprintf(to, sizeof to, "ExecStart=%s ", built);
    snprintf(path, sizeof path, "%s/%s", UNIT_DIR, svcname);
    svc = tu_read_file(path, NULL);
    snprintf(path, sizeof path, "%s/%s", UNIT_DIR, timername);
    timer = tu_read_file(path, NULL);
    if (!svc || !timer) {
        fprintf(stderr, "%s: the unit or its timer is not there\n", svcname);
        free(svc);
        free(timer);
        return false;
    }
    svc2 = replace_all(svc, from, to);
    if (!(ok = strcmp(svc, svc2) != 0))
        fprintf(stderr, "%s has no '%s' line to redirect\n", svcname, from);
    else {
        put(svcname, svc2);
        put(timername, timer);
    }
    free(svc);
    free(timer);
    free(svc2);
    return ok;
}

/* The real units (the ingest's, the site's, CloudWatch's, the audit's), ExecStart at the built binaries; the man pages. */
static int setup(void **state)
{
    char path[128], cmd[1024];
    run_t r;
    (void)state;

    if (!put_units("slurm-ingest@", "slurm-ingest", SA_INGEST_BIN) ||
        !put_units("slurm-report-site", "slurm-report", SA_REPORT_BIN) ||
        !put_units("slurm-report-cloudwatch", "slurm-report", SA_REPORT_BIN) ||
        !put_units("slurm-ingest-audit@", "slurm-ingest", SA_INGEST_BIN))
        return -1;
    snprintf(path, sizeof path, "%s/man/man8", work);
    if (snprintf(cmd, sizeof cmd, "mkdir -p '%s' '%s/man/man1' && cp '%s' '%s/' && cp '%s' '%s/man/man1/'", path,
                 work, MAN_PAGE, path, MAN_REPORT, work) >= (int)sizeof cmd)
        return -1;
    r = run(cmd);
    free(r.out);
    return r.status == 0 ? 0 : -1;
}

static void test_verify_units(void **state)
{
    run_t r;
    (void)state;

    r = verify("slurm-ingest@.service slurm-ingest@.timer");
    printf("systemd-analyze verify: exit %d, output: %s\n", r.status, r.out[0] ? r.out : "(none)");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "");
    free(r.out);
    r = verify("slurm-report-site.service slurm-report-site.timer");
    printf("systemd-analyze verify (site): exit %d, output: %s\n", r.status, r.out[0] ? r.out : "(none)");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "");
    free(r.out);
    r = verify("slurm-report-cloudwatch.service slurm-report-cloudwatch.timer");
    printf("systemd-analyze verify (cloudwatch): exit %d, output: %s\n", r.status, r.out[0] ? r.out : "(none)");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "");
    free(r.out);
    r = verify("slurm-ingest-audit@.service slurm-ingest-audit@.timer");
    printf("systemd-analyze verify (audit): exit %d, output: %s\n", r.status, r.out[0] ? r.out : "(none)");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "");
    free(r.out);
}

static run_t security(const char *unit, bool json);

/* systemd-analyze security of unit (a report's or the audit's): at most EXPOSURE_MAX, like the ingester's. */
static void check_exposure(const char *unit, const char *label)
{
    run_t r = security(unit, false);
    if (r.out) {
        const char *level = strstr(r.out, "Overall exposure level");
        printf("systemd-analyze security (%s): %s", label, level ? level : r.out);
        assert_int_equal(r.status, 0);
        free(r.out);
    }
}

/* The site's units: what they run, as whom, every 15 minutes, the URI as a credential, a readable site. */
static void test_site_units(void **state)
{
    char *svc = tu_read_file(UNIT_DIR "/slurm-report-site.service", NULL);
    char *timer = tu_read_file(UNIT_DIR "/slurm-report-site.timer", NULL);
    (void)state;

    assert_non_null(strstr(svc, "\nType=oneshot\n"));
    assert_non_null(strstr(svc, "\nExecStart=/usr/bin/slurm-report site /var/lib/slurm-report/site --textfile "
                                "/var/lib/slurm-report/metrics/slurm_archive.prom $SLURM_REPORT_SITE_ARGS\n"));
    assert_non_null(strstr(svc, "\nLoadCredential=mongo-uri:/etc/slurm-ingest/report.mongo-uri\n"));
    assert_null(strstr(svc, "--mongo-uri"));
    assert_non_null(strstr(svc, "\nUser=" SERVICE_USER "\n"));
    assert_non_null(strstr(svc, "\nUMask=0022\n"));
    assert_non_null(strstr(svc, "\nProtectSystem=strict\n"));
    assert_non_null(strstr(svc, "\nStateDirectory=slurm-report slurm-report/metrics\n"));
    assert_non_null(strstr(timer, "\nOnCalendar=*:0/15\n"));
    assert_non_null(strstr(timer, "\nPersistent=true\n"));
    assert_non_null(strstr(timer, "\nWantedBy=timers.target\n"));
    check_exposure("slurm-report-site.service", "site");
    free(svc);
    free(timer);
}

/*
 * CloudWatch's units, beside the site's: current --cloudwatch every 5 minutes, as the ingester's
 * user, the URI as a credential, no key on a command line or in the unit, as exposed as the site.
 */
static void test_cloudwatch_units(void **state)
{
    char *svc = tu_read_file(UNIT_DIR "/slurm-report-cloudwatch.service", NULL);
    char *timer = tu_read_file(UNIT_DIR "/slurm-report-cloudwatch.timer", NULL);
    (void)state;

    assert_non_null(strstr(svc, "\nType=oneshot\n"));
    assert_non_null(strstr(svc, "\nExecStart=/usr/bin/slurm-report current --cloudwatch "
                                "$SLURM_REPORT_CLOUDWATCH_ARGS\n"));
    assert_non_null(strstr(svc, "\nLoadCredential=mongo-uri:/etc/slurm-ingest/report.mongo-uri\n"));
    assert_null(strstr(svc, "--mongo-uri"));
    assert_null(strstr(svc, "\nEnvironment=AWS_SECRET_ACCESS_KEY")); /* a key never in the unit */
    assert_non_null(strstr(svc, "\nUser=" SERVICE_USER "\n"));
    assert_non_null(strstr(svc, "\nProtectSystem=strict\n"));
    assert_non_null(strstr(timer, "\nOnCalendar=*:0/5\n"));
    assert_non_null(strstr(timer, "\nPersistent=true\n"));
    assert_non_null(strstr(timer, "\nWantedBy=timers.target\n"));
    check_exposure("slurm-report-cloudwatch.service", "cloudwatch");
    free(svc);
    free(timer);
}

/* The monthly audit: last month's, on the 1st, as the ingest's user, exit 9 a failure. */
static void test_audit_units(void **state)
{
    char *svc = tu_read_file(UNIT_DIR "/slurm-ingest-audit@.service", NULL);
    char *timer = tu_read_file(UNIT_DIR "/slurm-ingest-audit@.timer", NULL);
    (void)state;

    assert_non_null(strstr(svc, "\nExecStart=/usr/bin/slurm-ingest --config /etc/slurm-ingest/%i.conf --cluster %i "
                                "audit --month last\n"));
    assert_non_null(strstr(svc, "\nLoadCredential=mongo-uri:/etc/slurm-ingest/%i.mongo-uri\n"));
    assert_null(strstr(svc, "SuccessExitStatus")); /* a differing archive fails the unit */
    assert_non_null(strstr(svc, "\nUser=" SERVICE_USER "\n"));
    assert_non_null(strstr(svc, "\nProtectSystem=strict\n"));
    assert_non_null(strstr(timer, "\nOnCalendar=*-*-01 01:00:00 UTC\n"));
    assert_non_null(strstr(timer, "\nPersistent=true\n"));
    check_exposure("slurm-ingest-audit@.service", "audit");
    free(svc);
    free(timer);
}

/* The check is not vacuous: what is wrong in a copy is reported. */
static void test_verify_catches_mistakes(void **state)
{
    char *svc, *bad;
    run_t r;
    (void)state;

    svc = tu_read_file(UNIT_DIR "/slurm-ingest@.service", NULL);
    /* an unknown key, a bad value, and a missing binary */
    bad = replace_all(svc, "ProtectSystem=strict", "ProtectSystem=stricter\nPrivateTempDir=yes");
    free(svc);
    svc = replace_all(bad, "ExecStart=/usr/bin/slurm-ingest ", "ExecStart=/nonexistent/slurm-ingest ");
    put("broken-ingest@.service", svc);
    r = verify("broken-ingest@.service");
    assert_non_null(strstr(r.out, "PrivateTempDir"));
    assert_non_null(strstr(r.out, "stricter"));
    assert_non_null(strstr(r.out, "/nonexistent/slurm-ingest"));
    assert_int_not_equal(r.status, 0);
    free(r.out);
    free(svc);
    free(bad);
}

/* `systemd-analyze security --offline` of a unit file in work (NULL when this systemd has no --offline). */
static run_t security(const char *unit, bool json)
{
    char cmd[512];
    run_t r;

    snprintf(cmd, sizeof cmd, "cd '%s' && (systemd-analyze security --offline=yes --no-pager --threshold=%s%s '%s' 2>%s)",
             work, EXPOSURE_MAX_TENTHS, json ? " --json=short" : "", unit, json ? "/dev/null" : "&1");
    r = run(cmd);
    if (strstr(r.out, "unrecognized option") || strstr(r.out, "Unknown option")) {
        free(r.out);
        r.out = NULL;
    }
    return r;
}

/*
 * systemd-analyze security: the service runs as the service user (not root), its
 * overall exposure is at most EXPOSURE_MAX, and nothing but RESIDUAL is exposed.
 */
static void test_security(void **state)
{
    run_t r = security("slurm-ingest@.service", false);
    const char *level;
    json_t *items, *item;
    json_error_t jerr;
    size_t i;
    bool user_checked = false;
    (void)state;

    if (!r.out) {
        printf("systemd-analyze has no 'security --offline' (systemd < 250): not checked\n");
        skip();
    }
    level = strstr(r.out, "Overall exposure level");
    printf("systemd-analyze security: %s", level ? level : r.out);
    if (r.status != 0)
        fail_msg("exposure above %s (exit %d):\n%s", EXPOSURE_MAX, r.status, r.out);
    assert_non_null(level);
    assert_true(strtod(strchr(level, ':') + 1, NULL) <= strtod(EXPOSURE_MAX, NULL));
    free(r.out);

    r = security("slurm-ingest@.service", true);
    assert_non_null(r.out);
    items = json_loads(r.out, 0, &jerr);
    if (!json_is_array(items))
        fail_msg("systemd-analyze security --json: %s: %s", jerr.text, r.out);
    json_array_foreach(items, i, item) {
        const char *field = json_string_value(json_object_get(item, "json_field"));
        const char *exposure = json_string_value(json_object_get(item, "exposure"));
        const char *descr = json_string_value(json_object_get(item, "description"));
        bool allowed = false;

        assert_non_null(field);
        if (strcmp(field, "UserOrDynamicUser") == 0) {
            /* a static user that is not root: the one the package creates */
            printf("  User=: %s\n", descr ? descr : "?");
            assert_true(json_is_true(json_object_get(item, "set")));
            assert_non_null(descr);
            assert_non_null(strstr(descr, "non-root"));
            user_checked = true;
        }
        if (!exposure || strtod(exposure, NULL) <= 0)
            continue;
        for (size_t k = 0; k < sizeof RESIDUAL / sizeof RESIDUAL[0]; k++)
            allowed = allowed || strcmp(field, RESIDUAL[k]) == 0;
        printf("  %s %s: %s\n", allowed ? "accepted" : "EXPOSED ", exposure, descr ? descr : field);
        if (!allowed)
            fail_msg("the service leaves %s exposed (%s): tighten it, or justify it in RESIDUAL", field, descr);
    }
    assert_true(user_checked);
    json_decref(items);
    free(r.out);
}

/* The security check can fail: a copy running as root without the capability and syscall limits. */
static void test_security_catches_root(void **state)
{
    char *svc = tu_read_file(UNIT_DIR "/slurm-ingest@.service", NULL), *a, *b, *c;
    run_t r;
    (void)state;

    a = replace_all(svc, "\nUser=" SERVICE_USER "\n", "\n");
    b = replace_all(a, "\nCapabilityBoundingSet=\n", "\n");
    c = replace_all(b, "\nSystemCallFilter=", "\n#SystemCallFilter=");
    assert_string_not_equal(svc, c);
    put("loose-ingest@.service", c);
    r = security("loose-ingest@.service", false);
    if (!r.out)
        skip();
    printf("a loose copy: %s", strstr(r.out, "Overall exposure level") ? strstr(r.out, "Overall exposure level")
                                                                       : r.out);
    assert_int_not_equal(r.status, 0);
    assert_non_null(strstr(r.out, "Service runs as root user"));
    free(r.out);
    free(svc);
    free(a);
    free(b);
    free(c);
}

/* What the issue asks of the units, read from the files as installed. */
static void test_unit_contents(void **state)
{
    char *svc = tu_read_file(UNIT_DIR "/slurm-ingest@.service", NULL);
    char *timer = tu_read_file(UNIT_DIR "/slurm-ingest@.timer", NULL);
    char want[64];
    (void)state;

    assert_non_null(strstr(svc, "\nType=oneshot\n"));
    assert_non_null(
        strstr(svc, "\nExecStart=/usr/bin/slurm-ingest --config /etc/slurm-ingest/%i.conf --cluster %i\n"));
    assert_non_null(strstr(svc, "\nLoadCredential=mongo-uri:/etc/slurm-ingest/%i.mongo-uri\n"));
    /* never a URI on a command line */
    assert_null(strstr(svc, "--mongo-uri"));
    assert_null(strstr(svc, "Environment=SLURM_INGEST_MONGO_URI"));
    assert_non_null(strstr(svc, "\nEnvironment=PATH=/usr/local/bin:/usr/bin:/bin\n"));
    /* "spooled, nothing lost" is success, with the code of sa_exit.h */
    snprintf(want, sizeof want, "\nSuccessExitStatus=%d\n", SA_EXIT_SPOOLED);
    assert_non_null(strstr(svc, want));
    assert_non_null(strstr(svc, "\nProtectSystem=strict\n"));
    assert_non_null(strstr(svc, "\nReadWritePaths=/var/lib/slurm-ingest /var/spool/slurm-ingest\n"));
    assert_non_null(strstr(svc, "\nStateDirectory=slurm-ingest\n"));
    assert_non_null(strstr(svc, "\nNoNewPrivileges=yes\n"));
    assert_non_null(strstr(svc, "\nPrivateTmp=yes\n"));
    assert_non_null(strstr(svc, "\nProtectHome=yes\n"));
    assert_non_null(strstr(svc, "\nProtectKernelTunables=yes\n"));
    assert_non_null(strstr(svc, "\nRestrictAddressFamilies=AF_UNIX AF_INET AF_INET6\n"));
    assert_non_null(strstr(svc, "\nTimeoutStartSec="));
    /* the service user, once; the spool directory made for it */
    assert_non_null(strstr(svc, "\nUser=" SERVICE_USER "\n"));
    assert_null(strstr(strstr(svc, "\nUser=") + 1, "\nUser="));
    assert_non_null(strstr(svc, "\nGroup=" SERVICE_USER "\n"));
    assert_null(strstr(svc, "\nDynamicUser="));
    assert_non_null(strstr(svc, "\nExecStartPre=+/usr/bin/install -d -m 0750 -o " SERVICE_USER " -g " SERVICE_USER
                                " /var/spool/slurm-ingest\n"));

    assert_non_null(strstr(timer, "\nOnCalendar=*:0/5\n"));
    assert_non_null(strstr(timer, "\nPersistent=true\n"));
    assert_non_null(strstr(timer, "\nRandomizedDelaySec=30\n"));
    assert_non_null(strstr(timer, "\nAccuracySec=1s\n"));
    assert_non_null(strstr(timer, "\nWantedBy=timers.target\n"));
    free(svc);
    free(timer);
}

/*
 * example.conf shows every option of sa_ingest_options as "# name = default", and
 * with those lines uncommented it is a configuration sa_config_load accepts.
 */
static void test_example_conf(void **state)
{
    char *text = tu_read_file(EXAMPLE_CONF, NULL), *out, *o, path[256];
    sa_config_t cfg;
    sa_error_t error;
    (void)state;

    for (const sa_option_t *opt = sa_ingest_options; opt->name; opt++) {
        char want[128];
        snprintf(want, sizeof want, "\n# %s = ", opt->name);
        if (!strstr(text, want))
            fail_msg("example.conf lacks a line '# %s = ...'", opt->name);
        if (opt->def) {
            snprintf(want, sizeof want, "\n# %s = %s\n", opt->name, opt->def);
            if (!strstr(text, want))
                fail_msg("example.conf does not show %s's default %s", opt->name, opt->def);
        }
    }
    /* uncomment "# key = value" lines (a key is lower case, digits and '-') */
    out = malloc(strlen(text) + 1);
    assert_non_null(out);
    o = out;
    for (const char *line = text; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) + 1 : strlen(line);
        size_t k = 2;
        if (strncmp(line, "# ", 2) == 0) {
            while (k < len && ((line[k] >= 'a' && line[k] <= 'z') || line[k] == '-'))
                k++;
            char *key = strndup(line + 2, k - 2);
            bool known = key && sa_option_find(key);
            free(key);
            if (k > 2 && strncmp(line + k, " = ", 3) == 0 && known) {
                memcpy(o, line + 2, len - 2);
                o += len - 2;
                line += len;
                continue;
            }
        }
        memcpy(o, line, len);
        o += len;
        line += len;
    }
    *o = '\0';
    put("example-uncommented.conf", out);
    snprintf(path, sizeof path, "%s/example-uncommented.conf", work);
    sa_config_init(&cfg);
    if (!sa_config_load(path, &cfg, &error))
        fail_msg("%s", error.message);
    assert_int_equal(cfg.n, sa_ingest_noptions);
    sa_config_clear(&cfg);
    free(out);
    free(text);
}

/* The man pages name every option and every exit code of sa_exit.h. */
static void test_man_pages(void **state)
{
    char *ingest = tu_read_file(MAN_PAGE, NULL), *report = tu_read_file(MAN_REPORT, NULL);
    static const int codes[] = {SA_EXIT_OK,    SA_EXIT_FAILURE, SA_EXIT_USAGE,  SA_EXIT_INPUT,  SA_EXIT_SLURM,
                                SA_EXIT_MONGO, SA_EXIT_SQLITE,  SA_EXIT_LOCKED, SA_EXIT_SPOOLED};
    (void)state;

    for (const sa_option_t *opt = sa_ingest_options; opt->name; opt++) {
        char esc[128], want[160];
        size_t n = 0;
        for (const char *p = opt->name; *p && n < sizeof esc - 3; p++) {
            if (*p == '-')
                esc[n++] = '\\';
            esc[n++] = *p;
        }
        esc[n] = '\0';
        /* documented as  .BI name " = ARG"  under CONFIGURATION */
        snprintf(want, sizeof want, "%s \" = ", esc);
        if (!strstr(ingest, want))
            fail_msg("slurm-ingest.8 does not document the option %s (no '%s')", opt->name, want);
    }
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        char want[32];
        snprintf(want, sizeof want, "\n.TP\n.B %d\n", codes[i]);
        if (!strstr(ingest, want) || !strstr(report, want))
            fail_msg("exit status %d is missing from a man page", codes[i]);
    }
    {
        /* slurm-report's own codes: health's, and an --allocations URL's that failed with no copy and CloudWatch's */
        char want[32];
        snprintf(want, sizeof want, "\n.TP\n.B %d\n", SA_EXIT_UNHEALTHY);
        if (!strstr(report, want))
            fail_msg("exit status %d is missing from slurm-report.1", SA_EXIT_UNHEALTHY);
        snprintf(want, sizeof want, "\n.TP\n.B %d\n", SA_EXIT_ENDPOINT);
        if (!strstr(report, want))
            fail_msg("exit status %d is missing from slurm-report.1", SA_EXIT_ENDPOINT);
    }
    assert_non_null(strstr(ingest, "\n.B SLURM_INGEST_MONGO_URI\n"));
    /* both render without a warning (mandoc's lint, when installed: tools/install-deps) */
    {
        run_t r = run("command -v mandoc");
        free(r.out);
        if (r.status == 0) {
            r = run("mandoc -T lint -W warning '" MAN_PAGE "' '" MAN_REPORT "'");
            if (r.status != 0 || r.out[0])
                fail_msg("mandoc -T lint: %s", r.out);
            free(r.out);
        } else {
            printf("note: mandoc is not installed; the man pages were not linted\n");
        }
        r = run("MANWIDTH=80 man -l '" MAN_PAGE "' '" MAN_REPORT "' >/dev/null");
        if (r.status != 0 || r.out[0])
            fail_msg("man -l: exit %d: %s", r.status, r.out);
        free(r.out);
    }
    assert_non_null(strstr(report, "\n.B SLURM_INGEST_MONGO_URI\n"));
    free(ingest);
    free(report);
}

/* Removes work and everything below it. */
static void cleanup(void)
{
    char cmd[128];
    run_t r;

    if (!work[0])
        return;
    snprintf(cmd, sizeof cmd, "/bin/rm -rf '%s'", work);
    r = run(cmd);
    free(r.out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unit_contents),
        cmocka_unit_test(test_verify_units),
        cmocka_unit_test(test_audit_units),
        cmocka_unit_test(test_site_units),
        cmocka_unit_test(test_cloudwatch_units),
        cmocka_unit_test(test_verify_catches_mistakes),
        cmocka_unit_test(test_security),
        cmocka_unit_test(test_security_catches_root),
        cmocka_unit_test(test_example_conf),
        cmocka_unit_test(test_man_pages),
    };
    run_t r;
    int rc;

    snprintf(work, sizeof work, "/tmp/sa-test-systemd.XXXXXX");
    if (!mkdtemp(work)) {
        perror("mkdtemp");
        return 1;
    }
    /* can systemd-analyze verify run here at all? A trivial unit must pass silently. */
    put("sa-probe.service", "[Service]\nType=oneshot\nExecStart=/bin/true\n");
    r = run("command -v systemd-analyze");
    if (r.status != 0) {
        printf("SKIP: systemd-analyze is not installed (Debian package 'systemd'; tools/install-deps installs "
               "it)\n");
        free(r.out);
        cleanup();
        return 77;
    }
    free(r.out);
    r = verify("sa-probe.service");
    if (r.status != 0 || r.out[0]) {
        printf("SKIP: systemd-analyze verify cannot check even a trivial unit here (exit %d): %s\n", r.status,
               r.out);
        free(r.out);
        cleanup();
        return 77;
    }
    free(r.out);
    rc = tu_run_group_tests("systemd", tests, setup, NULL);
    cleanup();
    return rc;
}
