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

/* mongoc_init() once, without shared-memory counters and with libmongoc's own log quiet. */
void sa_mongo_init(void);

/*
 * libmongoc (as Debian builds it) initialises itself in a constructor, before main: a
 * MONGOC_DISABLE_SHM set in main comes too late, every process makes
 * /dev/shm/mongoc-<pid>, a killed one leaves it, and a later process of that pid prints
 * "Falling back to malloc for counters." on stderr. Run from the program's
 * .preinit_array (SA_MONGO_PREINIT: before any library's constructor), this executes the
 * program again (its path from /proc/self/exe: same pid, same arguments) with MONGOC_DISABLE_SHM=1
 * added to its environment when it is not there; setting it then would not last (libc
 * sets its environment again when it initialises). Uses nothing that needs libc
 * initialised. If the exec fails, the run goes on and sa_mongo_init removes the file.
 */
void sa_mongo_preinit(int argc, char **argv, char **envp);

/* Puts sa_mongo_preinit in the program's .preinit_array: once, in each program's main.c. */
#define SA_MONGO_PREINIT                                                                                          \
    __attribute__((section(".preinit_array"), used)) static void (*const sa_mongo_preinit_entry)(                 \
        int, char **, char **) = sa_mongo_preinit

/*
 * Checks a MongoDB URI without connecting: SA_ERR_USAGE "the MongoDB URI is malformed"
 * (libmongoc refuses it, or a host is not a host name: "mongodb://u:pw@[bad", which
 * libmongoc takes for the host "[bad"), "... holds more than one '@'". The message
 * never quotes the URI. slurm-ingest checks before anything is captured.
 */
bool sa_mongo_uri_check(const char *uri, sa_error_t *error);

/*
 * Connects to uri (checked with sa_mongo_uri_check) and pings the server. Unless the URI says, serverSelectionTimeoutMS
 * is 10 s and the appname is appname. The client uses error API version 2. On
 * success, *hosts_out (caller frees) is the URI's host list for messages. Fails with
 * SA_ERR_USAGE "the MongoDB URI is malformed", "... holds more than one '@'" or
 * "cannot use the MongoDB URI for HOSTS"; SA_ERR_UNREACHABLE "MongoDB at HOSTS
 * unreachable: ..." when no connection can be made (refused, unknown host, no route,
 * connect timeout); SA_ERR_MONGO for everything else (authentication, TLS, an
 * unreadable tlsCAFile, a slow server), with the server's or driver's message. Then
 * *hosts_out is NULL. The URI's password is scrubbed from every message.
 */
mongoc_client_t *sa_mongo_connect(const char *uri, const char *appname, char **hosts_out, sa_error_t *error);

/*
 * Sets *error from a driver error: SA_ERR_UNREACHABLE "MongoDB at HOSTS unreachable:
 * what: message" when the connection could not be made or was lost, else SA_ERR_MONGO
 * "MongoDB at HOSTS: what: message" (code = the server's or driver's code).
 */
void sa_mongo_error(sa_error_t *error, const char *hosts, const char *what, const bson_error_t *berr);

#endif
