/*
 * mt_writer: the trace file, written through a shared memory mapping.
 *
 * Every line copied in is in the kernel's page cache the moment the copy
 * ends, so it survives SIGKILL, _exit and the OOM killer without a system
 * call per event (memray's reason for the same design).  The file grows
 * in windows of MT_WRITER_WINDOW bytes, each reserved with fallocate(2)
 * before it is mapped, so a full disk is an error here and never a SIGBUS
 * in the traced program.  Until mt_writer_close() cuts the file to its
 * length, it ends in zero padding, which the analyzer reads as the end.
 *
 * A program may close every descriptor it did not open (daemons do) and
 * get the trace's number back for a file of its own: the writer checks the
 * descriptor is still the trace (device and inode) before each use that
 * could touch the file, and stops with EBADF otherwise, so it never
 * resizes or writes into the program's file.
 *
 * Not thread-safe: the caller serializes (the trace lock).  Never
 * allocates; uses only system calls.
 */
#ifndef MT_WRITER_H
#define MT_WRITER_H

#include <stddef.h>
#include <stdint.h>

#define MT_WRITER_WINDOW (4u << 20)

typedef struct {
	int fd;
	uint64_t dev, ino; /* what fd must still be before it is used */
	char *map;         /* the current window, or NULL */
	uint64_t map_off;  /* its offset in the file */
	size_t pos;        /* bytes used in the window */
	uint64_t length;   /* bytes written in all */
	int error;         /* the errno that stopped the writer, or 0 */
} mt_writer_t;

/* Create path (mode 0600, O_NOFOLLOW), or reuse it when it is a regular
 * file of the effective user's (made 0600 and truncated); any other file
 * is left alone and refused (EINVAL, EPERM).  Returns 0 or -errno. */
int mt_writer_open(mt_writer_t *w, const char *path);

/* Append len bytes.  Returns 0, or -errno once the writer has failed (it
 * stays failed: later calls return the same error). */
int mt_writer_write(mt_writer_t *w, const char *data, size_t len);

/* Unmap, cut the file to its length and close it.  Returns 0 or -errno. */
int mt_writer_close(mt_writer_t *w);

/* Forget the file without touching it: a forked child's copy of its
 * parent's writer. */
void mt_writer_abandon(mt_writer_t *w);

#endif
