/*
 * sa_mongo.c - connecting to MongoDB (see sa_mongo.h).
 */
#include "sa_mongo.h"

#include <stdlib.h>
#include <string.h>

/* The URI's host list, for messages. */
static char *uri_hosts(const mongoc_uri_t *uri)
{
    const mongoc_host_list_t *h = mongoc_uri_get_hosts(uri);
    char buf[512] = "";
    size_t len = 0;

    for (; h && len < sizeof buf - 1; h = h->next)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", len ? "," : "", h->host_and_port);
    return strdup(buf[0] ? buf : "(no host)");
}

mongoc_client_t *sa_mongo_connect(const char *uri_str, const char *appname, char **hosts_out, sa_error_t *error)
{
    static bool initialised;
    mongoc_uri_t *uri;
    mongoc_client_t *client = NULL;
    bson_error_t berr;
    bson_t ping = BSON_INITIALIZER;
    char *hosts;

    *hosts_out = NULL;
    if (!initialised) {
        mongoc_init();
        initialised = true;
    }
    uri = mongoc_uri_new_with_error(uri_str, &berr);
    if (!uri) {
        /* berr may quote the URI, which may hold a password: say only this */
        sa_error_set(error, SA_ERR_USAGE, 0, "the MongoDB URI is malformed");
        return NULL;
    }
    if (!mongoc_uri_has_option(uri, MONGOC_URI_SERVERSELECTIONTIMEOUTMS))
        mongoc_uri_set_option_as_int32(uri, MONGOC_URI_SERVERSELECTIONTIMEOUTMS, 10000);
    if (!mongoc_uri_has_option(uri, MONGOC_URI_APPNAME))
        mongoc_uri_set_appname(uri, appname);
    hosts = uri_hosts(uri);
    client = mongoc_client_new_from_uri(uri);
    mongoc_uri_destroy(uri);
    if (!hosts) {
        sa_error_set(error, SA_ERR_MONGO, 0, "out of memory");
        goto fail;
    }
    if (!client) {
        sa_error_set(error, SA_ERR_USAGE, 0, "cannot use the MongoDB URI for %s", hosts);
        goto fail;
    }
    mongoc_client_set_error_api(client, MONGOC_ERROR_API_VERSION_2);
    BSON_APPEND_INT32(&ping, "ping", 1);
    if (!mongoc_client_command_simple(client, "admin", &ping, NULL, NULL, &berr)) {
        sa_error_set(error, SA_ERR_MONGO, 1, "MongoDB at %s unreachable: %s", hosts, berr.message);
        goto fail;
    }
    bson_destroy(&ping);
    *hosts_out = hosts;
    return client;
fail:
    bson_destroy(&ping);
    mongoc_client_destroy(client);
    free(hosts);
    return NULL;
}

void sa_mongo_error(sa_error_t *error, const char *hosts, const char *what, const bson_error_t *berr)
{
    bool unreachable = berr->domain == MONGOC_ERROR_STREAM || berr->domain == MONGOC_ERROR_SERVER_SELECTION;
    sa_error_set(error, SA_ERR_MONGO, unreachable ? 1 : 0, "MongoDB at %s: %s: %s", hosts, what, berr->message);
}
