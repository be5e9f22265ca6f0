/*
 * sa_jobfields.h - every member of a job document (collection jobs and jobs_superseded),
 * in one table: its path, its BSON type and what it means.
 *
 * The table is the reference a reader looks up first; schema/jobdoc/job.schema.json (the
 * $jsonSchema validator) says the same in JSON Schema, and tests/test_jobfields.c keeps
 * the two equal both ways and checks that every member of every document the merge
 * (sa_jobdoc.c) writes for the repository's fixtures is in the table with its type.
 *
 * Paths: members of a sub-document are joined with '.', the elements of an array are
 * "[]" ("runs[].gpus_by_type[].type"; "state_flags[]" is one flag). "extra" holds what
 * Slurm printed that the model does not, as printed: its members are not listed.
 * Members whose name starts with '_' are the merge's and the writer's bookkeeping; they
 * are part of the document and listed like the others.
 */
#ifndef SA_JOBFIELDS_H
#define SA_JOBFIELDS_H

#include <stddef.h>

typedef struct {
    const char *path;    /* "runs[].gpus_by_type[].type" */
    const char *type;    /* BSON type as $jsonSchema names it: string long double bool date object array */
    const char *meaning; /* one sentence */
} sa_jobfield_t;

/* The table, in document order; the last entry has path NULL. */
extern const sa_jobfield_t sa_jobfields[];

/* The entry of a path, or NULL when the table has none. */
const sa_jobfield_t *sa_jobfield_find(const char *path);

#endif
