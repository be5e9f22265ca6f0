/*
 * sa_rgu.c - RGU weights (see sa_rgu.h and schema/rgu-weights.json).
 */
#include "sa_rgu.h"

#include <ctype.h>
#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sa_model.h"
#include "sa_rutil.h"
#include "sa_rgu_weights_json.h" /* generated from schema/rgu-weights.json: sa_rgu_weights_json[] */

typedef struct {
    char *name;
    double rgu;
    sa_strv_t match;
    bool guess;    /* the match does not say the parent GPU */
    char *cluster; /* an entry of a cluster's table ("clusters"), else NULL */
} entry_t;

struct sa_rgu {
    entry_t *v;
    size_t n;
    char *source;
    bool has_clusters;
};

void sa_rgu_free(sa_rgu_t *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].name);
        free(r->v[i].cluster);
        sa_strv_clear(&r->v[i].match);
    }
    free(r->v);
    free(r->source);
    free(r);
}

/* Appends the entries of a parsed weights document to r; what names the document. */
static bool add_entries(sa_rgu_t *r, const json_t *doc, const char *what, sa_error_t *error)
{
    const json_t *weights = json_object_get(doc, "weights"), *e;
    size_t i;

    if (!json_is_array(weights)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%s: weights: expected an array of {name, rgu, match}", what);
        return false;
    }
    if (!r->source && json_is_string(json_object_get(doc, "source")))
        r->source = strdup(json_string_value(json_object_get(doc, "source")));
    json_array_foreach(weights, i, e) {
        const json_t *name = json_object_get(e, "name"), *rgu = json_object_get(e, "rgu"),
                     *match = json_object_get(e, "match"), *m;
        entry_t *v, *ent;
        size_t k;

        if (!json_is_object(e)) {
            sa_error_set(error, SA_ERR_INPUT, 0, "%s: weights[%zu]: expected an object", what, i);
            return false;
        }
        if (!json_is_number(rgu) || !(json_number_value(rgu) >= 0) || !isfinite(json_number_value(rgu))) {
            sa_error_set(error, SA_ERR_INPUT, 0, "%s: weights[%zu]: rgu: expected a number >= 0", what, i);
            return false;
        }
        if (!json_is_array(match) || json_array_size(match) == 0) {
            sa_error_set(error, SA_ERR_INPUT, 0, "%s: weights[%zu]: match: expected a non-empty array of patterns",
                         what, i);
            return false;
        }
        if (name && !json_is_string(name)) {
            sa_error_set(error, SA_ERR_INPUT, 0, "%s: weights[%zu]: name: expected a string", what, i);
            return false;
        }
        if (json_object_get(e, "guess") && !json_is_boolean(json_object_get(e, "guess"))) {
            sa_error_set(error, SA_ERR_INPUT, 0, "%s: weights[%zu]: guess: expected true or false", what, i);
            return false;
        }
        v = realloc(r->v, (r->n + 1) * sizeof *v);
        if (!v) {
            sa_error_nomem(error);
            return false;
        }
        r->v = v;
        ent = &r->v[r->n++];
        memset(ent, 0, sizeof *ent);
        ent->rgu = json_number_value(rgu);
        ent->guess = json_is_true(json_object_get(e, "guess"));
        {
            const char *nm = name ? json_string_value(name) : json_string_value(json_array_get(match, 0));
            ent->name = strdup(nm ? nm : "?");
        }
        sa_strv_init(&ent->match);
        json_array_foreach(match, k, m) {
            char *low;
            if (!json_is_string(m) || json_string_length(m) == 0) {
                sa_error_set(error, SA_ERR_INPUT, 0, "%s: weights[%zu]: match[%zu]: expected a non-empty string",
                             what, i, k);
                return false;
            }
            low = strdup(json_string_value(m));
            for (char *p = low; p && *p; p++)
                *p = (char)tolower((unsigned char)*p);
            if (!low || !sa_strv_push(&ent->match, low)) {
                free(low);
                sa_error_nomem(error);
                return false;
            }
            free(low);
        }
    }
    return true;
}

/* Appends one entry of a cluster's table: {gpu_type (a glob), parent, rgu}. */
static bool add_cluster_entry(sa_rgu_t *r, const char *cluster, const json_t *e, const char *what, size_t i,
                              sa_error_t *error)
{
    const json_t *type = json_object_get(e, "gpu_type"), *parent = json_object_get(e, "parent"),
                 *rgu = json_object_get(e, "rgu");
    entry_t *v, *ent;
    char *low;

    if (!json_is_object(e) || !json_is_string(type) || json_string_length(type) == 0 || !json_is_string(parent) ||
        !json_is_number(rgu) || !(json_number_value(rgu) >= 0) || !isfinite(json_number_value(rgu))) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%s: clusters: %s[%zu]: expected {\"gpu_type\": GLOB, \"parent\": "
                     "MODEL, \"rgu\": NUMBER >= 0}", what, cluster, i);
        return false;
    }
    if (!(v = realloc(r->v, (r->n + 1) * sizeof *v)))
        return sa_error_nomem(error);
    r->v = v;
    ent = &r->v[r->n++];
    memset(ent, 0, sizeof *ent);
    sa_strv_init(&ent->match);
    ent->rgu = json_number_value(rgu);
    ent->cluster = strdup(cluster);
    ent->name = sa_rprintf("%s %s", json_string_value(parent), json_string_value(type));
    low = strdup(json_string_value(type));
    for (char *p = low; p && *p; p++)
        *p = (char)tolower((unsigned char)*p);
    if (!ent->cluster || !ent->name || !low || !sa_strv_push(&ent->match, low)) {
        free(low);
        return sa_error_nomem(error);
    }
    free(low);
    r->has_clusters = true;
    return true;
}

/* Appends the per-cluster tables of a weights document ("clusters": {NAME: [entries]}). */
static bool add_clusters(sa_rgu_t *r, const json_t *doc, const char *what, sa_error_t *error)
{
    const json_t *cl = json_object_get(doc, "clusters"), *arr;
    const char *name;

    if (!cl)
        return true;
    if (!json_is_object(cl)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "%s: clusters: expected an object CLUSTER -> [{gpu_type, parent, rgu}]",
                     what);
        return false;
    }
    json_object_foreach((json_t *)cl, name, arr) {
        size_t i;
        const json_t *e;
        if (!json_is_array(arr)) {
            sa_error_set(error, SA_ERR_INPUT, 0, "%s: clusters: %s: expected an array", what, name);
            return false;
        }
        json_array_foreach(arr, i, e) {
            if (!add_cluster_entry(r, name, e, what, i, error))
                return false;
        }
    }
    return true;
}

sa_rgu_t *sa_rgu_load(const char *path, sa_error_t *error)
{
    sa_rgu_t *r = calloc(1, sizeof *r);
    json_error_t jerr;
    json_t *doc = NULL, *defaults = NULL;

    if (!r) {
        sa_error_nomem(error);
        return NULL;
    }
    if (path) {
        doc = json_load_file(path, 0, &jerr);
        if (!doc) {
            sa_error_set(error, SA_ERR_INPUT, 0, "%s:%d: %s", path, jerr.line, jerr.text);
            goto fail;
        }
        if (!json_is_object(doc)) {
            sa_error_set(error, SA_ERR_INPUT, 0, "%s: expected a JSON object", path);
            goto fail;
        }
        if (!add_clusters(r, doc, path, error) ||
            ((json_object_get(doc, "weights") || !json_object_get(doc, "clusters")) &&
             !add_entries(r, doc, path, error)))
            goto fail;
        if (!json_is_true(json_object_get(doc, "include_defaults")))
            goto done;
    }
    defaults = json_loads(sa_rgu_weights_json, 0, &jerr);
    if (!defaults || !add_entries(r, defaults, "schema/rgu-weights.json", error)) {
        if (!defaults)
            sa_error_set(error, SA_ERR_INPUT, 0, "schema/rgu-weights.json: %s", jerr.text);
        goto fail;
    }
done:
    json_decref(doc);
    json_decref(defaults);
    return r;
fail:
    json_decref(doc);
    json_decref(defaults);
    sa_rgu_free(r);
    return NULL;
}

bool sa_rgu_weight_on(const sa_rgu_t *r, const char *cluster, const char *gpu_type, double *w, const char **name,
                      bool *guess)
{
    char low[256];
    size_t i;

    if (guess)
        *guess = false;
    if (!gpu_type || !*gpu_type)
        return false;
    for (i = 0; gpu_type[i] && i < sizeof low - 1; i++)
        low[i] = (char)tolower((unsigned char)gpu_type[i]);
    low[i] = '\0';
    /* pass 0: the cluster's table (loaded first, so in file order); pass 1: the general entries */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t e = 0; e < r->n; e++) {
            if (pass == 0 ? !r->v[e].cluster || !cluster || strcmp(r->v[e].cluster, cluster) != 0
                          : r->v[e].cluster != NULL)
                continue;
            for (size_t k = 0; k < r->v[e].match.n; k++) {
                if (fnmatch(r->v[e].match.v[k], low, 0) == 0) {
                    *w = r->v[e].rgu;
                    if (name)
                        *name = r->v[e].name;
                    if (guess)
                        *guess = r->v[e].guess;
                    return true;
                }
            }
        }
    }
    return false;
}

bool sa_rgu_weight(const sa_rgu_t *r, const char *gpu_type, double *w, const char **name)
{
    return sa_rgu_weight_on(r, NULL, gpu_type, w, name, NULL);
}

bool sa_rgu_has_clusters(const sa_rgu_t *r)
{
    return r->has_clusters;
}

const char *sa_rgu_source(const sa_rgu_t *r)
{
    return r->source ? r->source : "";
}
