/*
 * mt_writer: the trace file, written through a shared memory mapping.
 *
 * Every line copied in is in the kernel's page cache the moment the copy
 * ends, so it survives SIGKILL, _exit and the OOM killer without a system
 * call per event (memray's reason for the same design).  The file grows
 * in windows of MT_WRITER_WINDOW bytes, each reserved with fallocate(2)
 * before it is mapped, so a full disk is an error here and never a SIGBUS
 * in the traced program.  Where the disk has less than a window left,
 * the window is reserved as far as it can be, down to a page, and the
 * writer fails with ENOSPC only when not one more page can be had: a small
 * disk still gets every line that fits.  Until mt_writer_close() cuts the
 * file to its length, it ends in zero padding, which the analyzer reads as
 * the end; a write that fails is not part of the length.
 *
 * A program may close every descriptor it did not open (daemons do) and
 * get the trace's number back for a file of its own: the writer checks the
 * descriptor is still the trace (device and inode) before each use that
 * could touch the file, and stops with EBADF otherwise, so it never
 * resizes or writes into the program's file.
 *
 * The next window is made ready off the critical path: once the current
 * one is half full, mt_writer_write() asks for it (mt_writer_wanted), and
 * the caller, its lock released, calls mt_writer_prepare(), which reserves
 * it, writes its zeros (so the page cache holds it in large folios), maps
 * and pre-faults it for writing; the switch under the lock is then a
 * pointer swap.  When it is not ready in time the switch maps the window
 * itself, its pages faulted in by the copies.
 *
 * The process never reads its trace back: each preparation also hands the
 * last whole window to writeback and lets the one before it leave the
 * page cache (its clean pages only: nothing is lost, nothing waits for the
 * disk), so a trace holds a few windows of page cache whatever its length.
 *
 * Not thread-safe but for mt_writer_wanted() and mt_writer_prepare(): the
 * caller serializes everything else (the trace lock).  Never allocates;
 * uses only system calls.
 */
#ifndef MT_WRITER_H
#define MT_WRITER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define MT_WRITER_WINDOW (16u << 20)

typedef struct {
	/* What every write reads or changes comes first, in 40 bytes, so
	 * that a caller can keep it on one cache line with its own lock
	 * (mt_trace.c): the line then changes hands once per event. */
	char *map;         /* the current window, or NULL */
	uint32_t pos;      /* bytes used in the window */
	uint32_t limit;    /* bytes of it reserved on the disk: pos <= limit */
	uint64_t length;   /* bytes written in all */
	uint64_t map_off;  /* its offset in the file */
	int error;         /* the errno that stopped the writer, or 0 */
	/* The next window: prep says where it stands (mt_writer.c), next_map
	 * and next_off are the preparer's until prep says ready. */
	atomic_int prep;
	uint64_t armed_for; /* asked once per window only */
	uint64_t prep_off;  /* the offset asked for */
	int fd;
	uint64_t dev, ino; /* what fd must still be before it is used */
	char *next_map;
	uint64_t next_off;
	uint32_t next_limit;
	char *retired;      /* the window a switch left, still mapped */
} mt_writer_t;

/* Create path (mode 0600, O_NOFOLLOW), or reuse it when it is a regular
 * file of the effective user's (made 0600 and truncated); any other file
 * is left alone and refused (EINVAL, EPERM).  Returns 0 or -errno. */
int mt_writer_open(mt_writer_t *w, const char *path);

/* Create path, which must not exist (-EEXIST: it is left alone). */
int mt_writer_create(mt_writer_t *w, const char *path);

/* Append len bytes.  Returns 0, or -errno once the writer has failed (it
 * stays failed: later calls return the same error). */
int mt_writer_write(mt_writer_t *w, const char *data, size_t len);

/* For a caller that formats a line in place: a pointer to max bytes of
 * the current window, or NULL when it has less left (or none is mapped,
 * or the writer failed): then format elsewhere and mt_writer_write().
 * mt_writer_commit() makes the first n of them part of the trace. */
static inline char *mt_writer_space(mt_writer_t *w, size_t max)
{
	if (!w->map || w->error || w->limit - w->pos < max)
		return NULL;
	return w->map + w->pos;
}
void mt_writer_commit(mt_writer_t *w, size_t n);

/* A switch leaves its old window mapped, for the caller to unmap with
 * its lock released (unmapping 16 MiB of dirty pages takes a while):
 * returns it once, or NULL.  Call with the lock held; nothing writes to
 * a retired window.  (A fork between the take and the release leaves the
 * child a mapping of its parent's trace that it never writes to: address
 * space only, accepted.) */
static inline char *mt_writer_take_retired(mt_writer_t *w)
{
	char *p = w->retired;

	/* Only when there is one: the field is off the caller's hot line,
	 * and a store on every event would move its line between the cores
	 * on every event (a third of the unlock's time in perf). */
	if (__builtin_expect(p != NULL, 0))
		w->retired = NULL;
	return p;
}
/* Unmap what mt_writer_take_retired() gave; no lock needed. */
void mt_writer_release(char *retired);

/* Whether the next window is wanted: a relaxed load, no lock needed. */
static inline int mt_writer_wanted(mt_writer_t *w)
{
	return atomic_load_explicit(&w->prep, memory_order_relaxed) == 1;
}

/* Make the wanted window ready, with no lock held; does nothing when
 * another thread does it already.  Errors are left for the switch to
 * meet and report. */
void mt_writer_prepare(mt_writer_t *w);

/* Wait for a preparation under way to end and cancel a wanted one, so
 * that no thread touches the file until the next write asks (the caller
 * holds the lock: fork's prepare handler). */
void mt_writer_quiesce(mt_writer_t *w);

/* Cut the file to its length, keeping the window mapped and the file
 * open, for a moment when the process may end without another call
 * (an exec): nothing may be written until mt_writer_unseal().  Returns 0
 * or -errno (the writer has failed). */
int mt_writer_seal(mt_writer_t *w);

/* Undo a seal, and take back what was written since the trace was
 * length bytes long (at most the current window and the one before it).
 * Returns 0 or -errno (nothing changed; the file stays cut). */
int mt_writer_unseal(mt_writer_t *w, uint64_t length);

/* Unmap, cut the file to its length and close it.  Returns 0 or -errno. */
int mt_writer_close(mt_writer_t *w);

/* Forget the file without touching it: a forked child's copy of its
 * parent's writer. */
void mt_writer_abandon(mt_writer_t *w);

#endif
