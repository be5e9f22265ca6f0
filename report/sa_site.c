/*
 * sa_site.c - the static web site (see sa_site.h).
 */
#include "sa_site.h"

bool sa_site_write(const sa_report_opts_t *o, const sa_site_opts_t *so, FILE *warn, sa_error_t *error)
{
    (void)o;
    (void)so;
    (void)warn;
    sa_error_set(error, SA_ERR_USAGE, 0, "site: not written yet");
    return false;
}
