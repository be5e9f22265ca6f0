/*
 * sa_mongo.h - connecting to MongoDB, as slurm-ingest and slurm-report both do.
 *
 * The URI is never printed (it may hold a password): messages name the host list
 * only ("host:port,host:port").
 */
#ifndef SA_MONGO_H
#define SA_MONGO_H

#include <mongoc/mongoc.h>

#include "sa_error.h"

/*
 * Connects to uri and pings the server. Unless the URI says, serverSelectionTimeoutMS
 * is 10 s and the appname is appname. The client uses error API version 2. On
 * success, *hosts_out (caller frees) is the URI's host list for messages. Fails with
 * SA_ERR_USAGE "the MongoDB URI is malformed" or "cannot use the MongoDB URI for
 * HOSTS", or SA_ERR_MONGO code 1 "MongoDB at HOSTS unreachable: ..." when the server
 * does not answer; then *hosts_out is NULL.
 */
mongoc_client_t *sa_mongo_connect(const char *uri, const char *appname, char **hosts_out, sa_error_t *error);

/*
 * Sets *error from a driver error: SA_ERR_MONGO "MongoDB at HOSTS: what: message",
 * code 1 when the server could not be reached (stream or server selection error), 0
 * when it answered with a refusal.
 */
void sa_mongo_error(sa_error_t *error, const char *hosts, const char *what, const bson_error_t *berr);

#endif
