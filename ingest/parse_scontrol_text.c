/*
 * parse_scontrol_text.c - `scontrol show nodes -o` text: one node a line,
 *
 *   NodeName=vm Arch=x86_64 CPUAlloc=0 CPUTot=2 ... OS=Linux 6.1 #1 SMP ... RealMemory=4000
 *   ... State=IDLE+DRAIN ... Partitions=compute,gpu ... CfgTRES=cpu=2,mem=4000M,gres/gpu=2
 *   AllocTRES= ... Reason=disk failure ticket-123 [root@2026-11-25T21:37:54]
 *
 * A value runs to the next " Key=" (so "OS=Linux 6.18 #1 SMP" keeps its blanks);
 * the free-text values Reason, Comment and Extra run to the next key Slurm prints
 * after them (src/api/node_info.c), or to the end of the line.
 *
 * CPUs idle = CPUTot - CPUAlloc. GPUs configured come from Gres (else CfgTRES), GPUs
 * in use from GresUsed (else AllocTRES). Keys not modelled, and the raw CfgTRES and
 * AllocTRES, are kept in node->extra as text.
 */
#include "sa_lines.h"
#include "sa_parse.h"
#include "sa_slurmtext.h"
#include "sa_tres.h"
#include "sa_utf8.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define QUOTE_MAX 64
#define MAX_KEYS 128

#define Q(s, buf) sa_error_quote((s), QUOTE_MAX, (buf), sizeof(buf))

/* ---- tokens ---------------------------------------------------------------------- */

typedef struct {
    const char *key;
    const char *val;
} kv_t;

/* Length of the "Key" of a "Key=" at s, or 0 if s does not start one. */
static size_t key_at(const char *s)
{
    size_t n = 0;

    if (!isalpha((unsigned char)s[0]))
        return 0;
    while (isalnum((unsigned char)s[n]) || s[n] == '_' || s[n] == ':')
        n++;
    return s[n] == '=' ? n : 0;
}

/* The keys Slurm may print after a free-text key (NULL-terminated), or NULL. */
static const char *const *free_text_followers(const char *key)
{
    static const char *const after_reason[] = {"Comment", "Extra", "InstanceId", "InstanceType", "ReservationName",
                                               NULL};
    if (strcmp(key, "Reason") == 0)
        return after_reason;
    if (strcmp(key, "Comment") == 0)
        return after_reason + 1;
    if (strcmp(key, "Extra") == 0)
        return after_reason + 2;
    return NULL;
}

/*
 * Splits a line in place into Key=value pairs. Returns the count, or -1 (with
 * *error) when the line has text that is not Key=value.
 */
static int tokenize(char *line, kv_t *kv, int max, size_t lineno, sa_error_t *error)
{
    char q[QUOTE_MAX + 8];
    char *p = line;
    int n = 0;

    while (*p == ' ' || *p == '\t')
        p++;
    while (*p) {
        size_t klen = key_at(p);
        const char *const *follow;
        char *v, *end = NULL, *next = NULL;

        if (klen == 0) {
            sa_error_set(error, SA_ERR_INPUT, 0, "line %zu: expected Key=value at '%s'", lineno, Q(p, q));
            return -1;
        }
        if (n == max) {
            sa_error_set(error, SA_ERR_INPUT, 0, "line %zu: more than %d keys", lineno, max);
            return -1;
        }
        p[klen] = '\0';
        v = p + klen + 1;
        follow = free_text_followers(p);
        if (follow) {
            /* the earliest " Follower=" ends the free text */
            for (size_t i = 0; follow[i]; i++) {
                size_t fl = strlen(follow[i]);
                for (char *h = strchr(v, ' '); h; h = strchr(h + 1, ' ')) {
                    if (strncmp(h + 1, follow[i], fl) == 0 && h[1 + fl] == '=') {
                        if (!end || h < end)
                            end = h;
                        break;
                    }
                }
            }
            if (end) {
                next = end + 1;
                while (end > v && end[-1] == ' ')
                    end--;
            }
        } else {
            /* up to the blank before the next Key= */
            for (char *h = v; (h = strpbrk(h, " \t"));) {
                char *r = h;
                while (*r == ' ' || *r == '\t')
                    r++;
                if (!*r || key_at(r)) {
                    end = h;
                    next = r;
                    break;
                }
                h = r;
            }
        }
        kv[n].key = p;
        kv[n].val = v;
        n++;
        if (!end)
            break;
        *end = '\0';
        p = next;
        while (*p == ' ' || *p == '\t')
            p++;
    }
    return n;
}

/* ---- node fields ------------------------------------------------------------------ */

static const char *kv_get(const kv_t *kv, int n, const char *key)
{
    const char *found = NULL;
    for (int i = 0; i < n; i++) {
        if (strcmp(kv[i].key, key) == 0)
            found = kv[i].val;
    }
    return found;
}

/* True for the values scontrol prints for "nothing". */
static bool is_none(const char *v)
{
    return !v || !*v || strcmp(v, "(null)") == 0 || strcmp(v, "N/A") == 0;
}

/* Sets the error "line N: node X: Key: <message so far>". */
static void err_key(size_t lineno, const char *node, const char *key, sa_error_t *error)
{
    char q[QUOTE_MAX + 8];
    sa_error_prefix(error, "line %zu: node %s: %s", lineno, Q(node, q), key);
}

/* An integer value (SA_UNSET for N/A); fails on junk. */
static bool get_int(const kv_t *kv, int n, const char *key, int64_t *out, size_t lineno, const char *node,
                    sa_error_t *error)
{
    char q[QUOTE_MAX + 8];
    const char *v = kv_get(kv, n, key);

    if (is_none(v))
        return true;
    if (!sa_parse_int64(v, out)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "expected an integer, got '%s'", Q(v, q));
        err_key(lineno, node, key, error);
        return false;
    }
    return true;
}

/* Copies every GPU entry of src into dst. */
static bool gpus_copy(sa_gpus_t *dst, const sa_gpus_t *src)
{
    for (size_t i = 0; i < src->n; i++) {
        if (!sa_gpus_add(dst, src->v[i].type, src->v[i].count))
            return false;
    }
    return true;
}

/*
 * Reason text "disk failure ticket-123 [root@2026-11-25T21:37:54]": the "[user@time]"
 * after the first line of the reason gives reason_user and reason_time. Text that
 * does not fit is kept whole as the reason.
 */
static bool set_reason(sa_node_t *node, const char *v)
{
    for (const char *open = strstr(v, " ["); open; open = strstr(open + 1, " [")) {
        const char *close = strchr(open, ']');
        const char *at = close ? memchr(open, '@', (size_t)(close - open)) : NULL;
        char when[64];
        int64_t t;

        if (!at || (size_t)(close - at - 1) >= sizeof when)
            continue;
        memcpy(when, at + 1, (size_t)(close - at - 1));
        when[close - at - 1] = '\0';
        if (!sa_time_parse_text(when, &t, NULL) || t == SA_UNSET)
            continue;
        node->reason_user = strndup(open + 2, (size_t)(at - open - 2));
        node->reason = malloc(strlen(v) + 1);
        if (!node->reason_user || !node->reason)
            return false;
        memcpy(node->reason, v, (size_t)(open - v));
        strcpy(node->reason + (open - v), close + 1);
        node->reason_time = t;
        return true;
    }
    node->reason = strdup(v);
    return node->reason != NULL;
}

/* Keys read into members (the rest go to extra). CfgTRES/AllocTRES also go to extra. */
static bool key_is_modelled(const char *key)
{
    static const char *const keys[] = {"NodeName",   "State",  "CPUAlloc", "CPUTot",     "RealMemory", "AllocMem",
                                       "FreeMem",    "Gres",   "GresUsed", "Partitions", "Reason",     NULL};
    for (size_t i = 0; keys[i]; i++) {
        if (strcmp(key, keys[i]) == 0)
            return true;
    }
    return false;
}

/* Builds a node from one line's pairs. */
static bool fill_node(const kv_t *kv, int n, sa_node_t *node, size_t lineno, sa_error_t *error)
{
    const char *name = kv_get(kv, n, "NodeName");
    const char *v;
    sa_tres_t cfg, alloc;
    bool ok = false;

    sa_tres_init(&cfg);
    sa_tres_init(&alloc);
    if (is_none(name)) {
        sa_error_set(error, SA_ERR_INPUT, 0, "line %zu: no NodeName", lineno);
        goto done;
    }
    if (!(node->name = strdup(name)))
        goto oom;
    if ((v = kv_get(kv, n, "State")) && !sa_node_state_parse_text(v, &node->state, error)) {
        err_key(lineno, name, "State", error);
        goto done;
    }
    if (!get_int(kv, n, "CPUTot", &node->cpus_total, lineno, name, error) ||
        !get_int(kv, n, "CPUAlloc", &node->cpus_alloc, lineno, name, error) ||
        !get_int(kv, n, "RealMemory", &node->mem_total_mb, lineno, name, error) ||
        !get_int(kv, n, "AllocMem", &node->mem_alloc_mb, lineno, name, error) ||
        !get_int(kv, n, "FreeMem", &node->mem_free_mb, lineno, name, error))
        goto done;
    if (!is_none(v = kv_get(kv, n, "Gres"))) {
        if (!(node->gres = strdup(v)))
            goto oom;
        if (!sa_gres_parse_gpus(v, false, &node->gpus_total, error)) {
            err_key(lineno, name, "Gres", error);
            goto done;
        }
    }
    if (!is_none(v = kv_get(kv, n, "GresUsed"))) {
        if (!(node->gres_used = strdup(v)))
            goto oom;
        if (!sa_gres_parse_gpus(v, false, &node->gpus_used, error)) {
            err_key(lineno, name, "GresUsed", error);
            goto done;
        }
    }
    if ((v = kv_get(kv, n, "CfgTRES")) && !sa_tres_parse(v, false, &cfg, error)) {
        err_key(lineno, name, "CfgTRES", error);
        goto done;
    }
    if ((v = kv_get(kv, n, "AllocTRES")) && !sa_tres_parse(v, false, &alloc, error)) {
        err_key(lineno, name, "AllocTRES", error);
        goto done;
    }
    /* the TRES fill what the plain keys did not say */
    if (!node->gres && !gpus_copy(&node->gpus_total, &cfg.gpus))
        goto oom;
    if (!node->gres_used && !gpus_copy(&node->gpus_used, &alloc.gpus))
        goto oom;
    if (node->cpus_total == SA_UNSET)
        node->cpus_total = cfg.cpu;
    if (node->mem_total_mb == SA_UNSET)
        node->mem_total_mb = cfg.mem_mb;
    if (node->cpus_alloc == SA_UNSET && kv_get(kv, n, "AllocTRES"))
        node->cpus_alloc = alloc.cpu != SA_UNSET ? alloc.cpu : 0;
    if (node->mem_alloc_mb == SA_UNSET && kv_get(kv, n, "AllocTRES"))
        node->mem_alloc_mb = alloc.mem_mb != SA_UNSET ? alloc.mem_mb : 0;
    if (node->cpus_total != SA_UNSET && node->cpus_alloc != SA_UNSET)
        node->cpus_idle = node->cpus_total - node->cpus_alloc;

    if ((v = kv_get(kv, n, "Partitions")) && !is_none(v)) {
        const char *p = v;
        while (*p) {
            size_t len = strcspn(p, ",");
            if (len > 0) {
                char *part = strndup(p, len);
                bool added = part && sa_strv_add_sorted_unique(&node->partitions, part);
                free(part);
                if (!added)
                    goto oom;
            }
            p += len + (p[len] == ',');
        }
    }
    if ((v = kv_get(kv, n, "Reason")) && *v && !set_reason(node, v))
        goto oom;

    for (int i = 0; i < n; i++) {
        json_t *s;
        if (key_is_modelled(kv[i].key) || !*kv[i].val)
            continue;
        if (!node->extra && !(node->extra = json_object()))
            goto oom;
        s = json_string(kv[i].val);
        if (!s || json_object_set_new(node->extra, kv[i].key, s) != 0)
            goto oom;
    }
    ok = true;
    goto done;
oom:
    sa_error_nomem(error);
done:
    sa_tres_clear(&cfg);
    sa_tres_clear(&alloc);
    return ok;
}

/* One node a line; blank lines are skipped; each node goes to sink->on_node and is freed. */
bool sa_parse_scontrol_nodes_text(sa_reader_t *r, const sa_sink_t *sink, sa_error_t *error)
{
    sa_lines_t L;
    kv_t *kv = NULL;
    bool ok = false;
    int rc;

    sa_lines_init(&L, r);
    kv = calloc(MAX_KEYS, sizeof *kv);
    if (!kv) {
        sa_error_nomem(error);
        goto done;
    }
    while ((rc = sa_lines_next(&L, error)) > 0) {
        sa_node_t *node;
        bool blank = true, node_ok;
        int n;

        if (!sa_utf8_valid((const unsigned char *)L.line, L.line_len)) {
            sa_error_set(error, SA_ERR_INPUT, 0, "line %zu: not UTF-8 text", L.lineno);
            goto done;
        }
        for (const char *p = L.line; *p && blank; p++)
            blank = isspace((unsigned char)*p) != 0;
        if (blank)
            continue;
        n = tokenize(L.line, kv, MAX_KEYS, L.lineno, error);
        if (n < 0)
            goto done;
        if (strcmp(kv[0].key, "NodeName") != 0) {
            sa_error_set(error, SA_ERR_INPUT, 0,
                         "line %zu: expected NodeName= first (scontrol show nodes -o), found %s=", L.lineno,
                         kv[0].key);
            goto done;
        }
        node = sa_node_new();
        if (!node) {
            sa_error_nomem(error);
            goto done;
        }
        node_ok = fill_node(kv, n, node, L.lineno, error);
        if (node_ok && sink && sink->on_node)
            node_ok = sink->on_node(node, sink->ctx, error);
        sa_node_destroy(node);
        if (!node_ok)
            goto done;
    }
    ok = rc == 0;
done:
    free(kv);
    sa_lines_clear(&L);
    return ok;
}
