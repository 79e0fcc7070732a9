/*
 * mt_nofd: file reads with no descriptor in the program's table.
 *
 * A descriptor the tracer opens, even for a moment, takes the lowest free
 * number in the program's table: another thread's open() gets another
 * number than it would bare, and a daemon that closes every descriptor
 * and reopens its own can be handed the tracer's, or hand the tracer its
 * file.  So the tracer opens files only in a child that shares the
 * program's memory but has a descriptor table of its own
 * (clone(CLONE_VM | CLONE_VFORK), no CLONE_FILES), every signal blocked
 * around it: what the child maps lands in the shared memory, what it reads
 * lands in the caller's buffer, and its descriptors close when it exits.
 *
 * It must never call malloc or a hooked function, never leave a child
 * unreaped, and never let a handler of the program run in the child.
 */
#ifndef MT_NOFD_H
#define MT_NOFD_H

#include <stdatomic.h>
#include <stddef.h>

/*
 * Run fn(arg) in such a child and return its result, or -errno when the
 * child could not be made (EAGAIN: RLIMIT_NPROC; a seccomp filter may
 * refuse clone).  fn runs on a stack of 64 KiB, with the calling thread's
 * TLS (errno included) but not as that thread: it must make system calls
 * only with mt_real_syscall6, never call a libc function that sets errno,
 * takes a lock or allocates, and keep its results in memory.
 */
long mt_nofd_run(long (*fn)(void *), void *arg);

/*
 * While on is set, the process has one thread and every signal of it is
 * blocked around each call: mt_nofd_run runs fn in place, in the
 * program's own table, and the descriptors fn opens are closed before it
 * returns.  Nothing of the program can run meanwhile to see one, so the
 * table is what it was, as in a child, without the child's clone and the
 * scheduler's round trip (a forked child before fork() returns in it; an
 * image's start before its first thread).  Only the one thread may set
 * it, and must clear it before anything else can run.
 */
void mt_nofd_set_alone(int on);
int mt_nofd_alone(void);

/* The errno of the first clone refused with EPERM or ENOSYS (a seccomp
 * filter the program installed), 0 while none was: the caller stops
 * tracing (it cannot read a file the way it must). */
extern _Atomic int mt_nofd_refused;

/* Map the regular file at path whole, read-only and private: *addr and
 * *size.  Returns 0, or -errno (EINVAL: not a regular file, or empty). */
long mt_nofd_map(const char *path, const void **addr, size_t *size);

/* The same, for a function that mt_nofd_run() runs (in its child). */
long mt_nofd_map_here(const char *path, const void **addr, size_t *size);

/* Read the file at path from its start into buf, up to cap bytes: returns
 * how many, or -errno. */
long mt_nofd_read(const char *path, char *buf, size_t cap);

/* Read the file at path from its start through buf (cap bytes): each time
 * more has come, fn(arg, buf, have) is called in the child and returns how
 * many bytes from buf's start it has used, which are dropped (a buffer
 * that stays full is dropped whole).  Returns 0, or -errno. */
long mt_nofd_read_each(const char *path, char *buf, size_t cap,
		       size_t (*fn)(void *arg, char *buf, size_t have), void *arg);

#endif
