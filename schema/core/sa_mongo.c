/*
 * sa_mongo.c - connecting to MongoDB (see sa_mongo.h).
 */
#define _GNU_SOURCE /* strcasestr */
#include "sa_mongo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

/* The URI's password, kept to scrub it from driver messages (never printed). */
static char *known_secret;

/* libmongoc's own log lines (the "endSessions" warning FerretDB causes, TLS details that
 * also come back as errors) are dropped unless SLURM_ARCHIVE_MONGOC_LOG=1. */
static void quiet_log(mongoc_log_level_t level, const char *domain, const char *message, void *data)
{
    (void)data;
    if (getenv("SLURM_ARCHIVE_MONGOC_LOG") && strcmp(getenv("SLURM_ARCHIVE_MONGOC_LOG"), "1") == 0 &&
        (!known_secret || !strstr(message, known_secret)))
        fprintf(stderr, "mongoc: %s: %s: %s\n", mongoc_log_level_str(level), domain, message);
}

void sa_mongo_init(void)
{
    static bool initialised;
    if (initialised)
        return;
    initialised = true;
    /* no shared-memory counters (sa_mongo_preinit): when the program could not be run
     * again with MONGOC_DISABLE_SHM, libmongoc made /dev/shm/mongoc-<pid> already; its
     * name goes now, so that a kill leaves nothing behind (the mapping stays) */
    if (!getenv("MONGOC_DISABLE_SHM")) {
        char name[32];
        snprintf(name, sizeof name, "/mongoc-%ld", (long)getpid());
        shm_unlink(name);
        setenv("MONGOC_DISABLE_SHM", "1", 0);
    }
    mongoc_log_set_handler(quiet_log, NULL);
    mongoc_init();
}

#define PREINIT_MAX_ENV 4096 /* more variables than this: no exec (sa_mongo_init's fallback) */

void sa_mongo_preinit(int argc, char **argv, char **envp)
{
    static char disable[] = "MONGOC_DISABLE_SHM=1";
    static char *env[PREINIT_MAX_ENV + 2];
    static char self[4096];
    ssize_t len;
    size_t n = 0;

    (void)argc;
    if (!argv || !envp)
        return;
    for (; envp[n]; n++) {
        if (strncmp(envp[n], disable, sizeof "MONGOC_DISABLE_SHM=" - 1) == 0 || n >= PREINIT_MAX_ENV)
            return; /* there already (or too many to copy) */
        env[n] = envp[n];
    }
    env[n] = disable;
    env[n + 1] = NULL;
    /* the program's own path, not /proc/self/exe: the process keeps its name (ps, pgrep, the journal) */
    len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0 || (size_t)len >= sizeof self - 1)
        return;
    self[len] = '\0';
    execve(self, argv, env);
    /* no /proc, a binary replaced or removed since, no exec allowed: go on */
}

/* Replaces every occurrence of secret in s (in place) by "***" (s has room: *** is shorter or equal). */
static void scrub(char *s, const char *secret)
{
    size_t n = secret ? strlen(secret) : 0;
    char *p;
    if (n < 3)
        return;
    while ((p = strstr(s, secret)) != NULL) {
        memcpy(p, "***", 3);
        memmove(p + 3, p + n, strlen(p + n) + 1);
    }
}

/* The URI's host list, for messages: never anything before an '@'. */
static char *uri_hosts(const mongoc_uri_t *uri)
{
    const mongoc_host_list_t *h = mongoc_uri_get_hosts(uri);
    char buf[512] = "";
    size_t len = 0;

    for (; h && len < sizeof buf - 1; h = h->next) {
        const char *hp = strrchr(h->host_and_port, '@');
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", len ? "," : "", hp ? hp + 1 : h->host_and_port);
    }
    return strdup(buf[0] ? buf : "(no host)");
}

/*
 * True if a server-selection or stream error means no connection could be made at all
 * (refused, name unknown, no route, connect timeout): the caller spools. Anything else
 * (authentication, TLS, a server that answers too slowly) is a failure to report.
 */
static bool is_unreachable(const bson_error_t *berr)
{
    static const char *const words[] = {"connection refused", "failed to resolve", "connection timeout",
                                        "no route to host", "network is unreachable", "host is unreachable",
                                        "failed to connect", "connection reset", "connection closed",
                                        "socket error", "stream is closed", "broken pipe",
                                        "failure during socket delivery",
                                        /* the server was lost and selection is in its cooldown */
                                        "no servers yet eligible for rescan", NULL};
    if (berr->domain != MONGOC_ERROR_STREAM && berr->domain != MONGOC_ERROR_SERVER_SELECTION)
        return false;
    for (const char *const *w = words; *w; w++) {
        if (strcasestr(berr->message, *w))
            return !strcasestr(berr->message, "timed out") && !strcasestr(berr->message, "socket timeout");
    }
    return false;
}

/* Checks what libmongoc only reports as "connection error": a TLS file it cannot read. */
static bool check_tls_files(const mongoc_uri_t *uri, sa_error_t *error)
{
    static const char *const opts[] = {MONGOC_URI_TLSCAFILE, MONGOC_URI_TLSCERTIFICATEKEYFILE, NULL};
    for (const char *const *o = opts; *o; o++) {
        const char *path = mongoc_uri_get_option_as_utf8(uri, *o, NULL);
        if (path && access(path, R_OK) != 0) {
            sa_error_set(error, SA_ERR_MONGO, 0, "the MongoDB URI's %s cannot be read", *o);
            return false;
        }
    }
    return true;
}

/* True when a host of the URI is a DNS name, an IPv4 address, an IPv6 literal or a socket path. */
static bool host_ok(const mongoc_host_list_t *h)
{
    if (h->family == AF_INET6 || h->host[0] == '/')
        return h->host[0] != '\0';
    if (!h->host[0])
        return false;
    for (const char *p = h->host; *p; p++) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.' ||
              *p == '-' || *p == '_'))
            return false;
    }
    return true;
}

/* The parsed URI, or NULL with *error set (never quoting the URI). */
static mongoc_uri_t *uri_parse(const char *uri_str, sa_error_t *error)
{
    const char *at = strchr(uri_str, '@');
    mongoc_uri_t *uri;
    bson_error_t berr;

    if (at && strchr(at + 1, '@')) {
        /* libmongoc would split the user info at the first '@' and take the rest of
         * the password for a host name, which then shows in its messages */
        sa_error_set(error, SA_ERR_USAGE, 0, "the MongoDB URI holds more than one '@': write an '@' in the user "
                                             "name or password as %%40");
        return NULL;
    }
    uri = mongoc_uri_new_with_error(uri_str, &berr);
    if (!uri) {
        /* berr may quote the URI, which may hold a password: say only this */
        sa_error_set(error, SA_ERR_USAGE, 0, "the MongoDB URI is malformed");
        return NULL;
    }
    for (const mongoc_host_list_t *h = mongoc_uri_get_hosts(uri); h; h = h->next) {
        if (!host_ok(h)) {
            sa_error_set(error, SA_ERR_USAGE, 0, "the MongoDB URI is malformed: a host is not a host name, an "
                                                 "address or [an IPv6 address]");
            mongoc_uri_destroy(uri);
            return NULL;
        }
    }
    return uri;
}

bool sa_mongo_uri_check(const char *uri_str, sa_error_t *error)
{
    mongoc_uri_t *uri;

    sa_mongo_init();
    uri = uri_parse(uri_str, error);
    mongoc_uri_destroy(uri);
    return uri != NULL;
}

mongoc_client_t *sa_mongo_connect(const char *uri_str, const char *appname, char **hosts_out, sa_error_t *error)
{
    mongoc_uri_t *uri;
    mongoc_client_t *client = NULL;
    bson_error_t berr;
    bson_t ping = BSON_INITIALIZER;
    char *hosts = NULL;

    *hosts_out = NULL;
    sa_mongo_init();
    if (!(uri = uri_parse(uri_str, error)))
        return NULL;
    if (mongoc_uri_get_password(uri)) {
        free(known_secret);
        known_secret = strdup(mongoc_uri_get_password(uri));
    }
    if (!mongoc_uri_has_option(uri, MONGOC_URI_SERVERSELECTIONTIMEOUTMS))
        mongoc_uri_set_option_as_int32(uri, MONGOC_URI_SERVERSELECTIONTIMEOUTMS, 10000);
    if (!mongoc_uri_has_option(uri, MONGOC_URI_APPNAME))
        mongoc_uri_set_appname(uri, appname);
    hosts = uri_hosts(uri);
    if (!hosts) {
        sa_error_nomem(error);
        goto fail;
    }
    if (!check_tls_files(uri, error)) {
        sa_error_prefix(error, "MongoDB at %s", hosts);
        goto fail;
    }
    client = mongoc_client_new_from_uri(uri);
    if (!client) {
        sa_error_set(error, SA_ERR_USAGE, 0, "cannot use the MongoDB URI for %s", hosts);
        goto fail;
    }
    mongoc_client_set_error_api(client, MONGOC_ERROR_API_VERSION_2);
    BSON_APPEND_INT32(&ping, "ping", 1);
    if (!mongoc_client_command_simple(client, "admin", &ping, NULL, NULL, &berr)) {
        sa_mongo_error(error, hosts, "ping", &berr);
        goto fail;
    }
    mongoc_uri_destroy(uri);
    bson_destroy(&ping);
    *hosts_out = hosts;
    return client;
fail:
    mongoc_uri_destroy(uri);
    bson_destroy(&ping);
    mongoc_client_destroy(client);
    free(hosts);
    return NULL;
}

void sa_mongo_error(sa_error_t *error, const char *hosts, const char *what, const bson_error_t *berr)
{
    char msg[sizeof berr->message + 1];
    snprintf(msg, sizeof msg, "%s", berr->message);
    scrub(msg, known_secret);
    if (is_unreachable(berr))
        sa_error_set(error, SA_ERR_UNREACHABLE, berr->code, "MongoDB at %s unreachable: %s: %s", hosts, what, msg);
    else
        sa_error_set(error, SA_ERR_MONGO, berr->code, "MongoDB at %s: %s: %s", hosts, what, msg);
}
