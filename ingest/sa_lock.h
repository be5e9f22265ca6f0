/*
 * sa_lock.h - one slurm-ingest per cluster at a time.
 *
 * An exclusive flock() on a lock file (e.g. /var/lib/slurm-ingest/<cluster>.lock).
 * The kernel releases the lock when the holder's last descriptor closes, so a
 * process that dies (even by SIGKILL) never leaves a stale lock behind: the file
 * itself stays and is simply locked again by the next run. The holder writes its
 * PID into the file only so that a second run can name it in its message.
 *
 * The descriptor is close-on-exec, so commands started with sa_exec_run (or any
 * exec) do not inherit the lock. A child created with a bare fork() (no exec)
 * shares it, and the lock then lasts until both have closed it.
 * flock() locks are per open file: two sa_lock_acquire() calls on one path in one
 * process conflict as well. flock() is not reliable on some network file systems
 * (old NFS); keep the lock file on a local disk.
 */
#ifndef SA_LOCK_H
#define SA_LOCK_H

#include "sa_error.h"

typedef struct sa_lock sa_lock_t;

/*
 * Takes the lock at path without waiting. The file is created (0640 minus umask) if
 * missing; its directory must exist. Refuses a path that is a symbolic link or not
 * a regular file (the PID is written into it).
 *
 * Returns the held lock, or NULL with *error set:
 *   - SA_ERR_LOCKED, code = the holder's PID (0 if unknown):
 *     "another slurm-ingest (pid 1234) holds /path/cluster.lock";
 *   - SA_ERR_IO, code = errno: the file cannot be opened, locked or written.
 */
sa_lock_t *sa_lock_acquire(const char *path, sa_error_t *error);

/* Releases the lock (the file stays, emptied) and frees it. Accepts NULL. */
void sa_lock_release(sa_lock_t *lock);

#endif
