/*
 * mt_writer: mmap-window file writer.  It must never allocate, never
 * block on anything but the file, and never leave the traced program
 * exposed to SIGBUS (space is reserved before a window is mapped).
 */
#include "mt_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Open path for the trace: created new (mode 0600), or else an existing
 * regular file of this user's, made 0600 and emptied.  Never through a
 * symlink.  A file someone else made is refused without a change: in a
 * shared directory (/tmp) they may have made it to read the trace. */
static int open_trace(const char *path, struct stat *st)
{
	const int flags = O_RDWR | O_NOFOLLOW | O_CLOEXEC;

	for (int tries = 0; tries < 3; tries++) {
		int fd, err;

		do
			fd = open(path, flags | O_CREAT | O_EXCL, 0600);
		while (fd < 0 && errno == EINTR);
		if (fd >= 0) {
			if (fstat(fd, st) == 0)
				return fd;
			err = errno;
			close(fd);
			return -err;
		}
		if (errno != EEXIST)
			return -errno;
		do
			fd = open(path, flags);
		while (fd < 0 && errno == EINTR);
		if (fd < 0) {
			if (errno == ENOENT)
				continue; /* removed meanwhile: create it */
			return -errno;
		}
		if (fstat(fd, st) < 0)
			err = errno;
		else if (!S_ISREG(st->st_mode))
			err = EINVAL;
		else if (st->st_uid != geteuid())
			err = EPERM;
		else if (((st->st_mode & 07777) != 0600 && fchmod(fd, 0600) < 0) ||
			 ftruncate(fd, 0) < 0)
			err = errno;
		else
			return fd;
		close(fd);
		return -err;
	}
	return -EEXIST;
}

int mt_writer_open(mt_writer_t *w, const char *path)
{
	struct stat st;
	int fd;

	memset(w, 0, sizeof(*w));
	fd = open_trace(path, &st);
	if (fd < 0) {
		w->error = -fd;
		w->fd = -1;
		return fd;
	}
	w->fd = fd;
	w->dev = (uint64_t)st.st_dev;
	w->ino = (uint64_t)st.st_ino;
	return 0;
}

/* Whether fd is still the trace file (the program may have closed it and
 * opened something else under the same number). */
static int still_ours(const mt_writer_t *w)
{
	struct stat st;

	return fstat(w->fd, &st) == 0 && (uint64_t)st.st_dev == w->dev &&
	       (uint64_t)st.st_ino == w->ino;
}

static int fail(mt_writer_t *w, int err)
{
	if (!w->error)
		w->error = err;
	return -w->error;
}

/* Map the window that starts at off, reserving its blocks first. */
static int map_window(mt_writer_t *w, uint64_t off)
{
	int rc;
	void *p;

	if (w->map) {
		munmap(w->map, MT_WRITER_WINDOW);
		w->map = NULL;
	}
	if (!still_ours(w))
		return fail(w, EBADF);
	do
		rc = fallocate(w->fd, 0, (off_t)off, MT_WRITER_WINDOW);
	while (rc < 0 && errno == EINTR);
	if (rc < 0) {
		if (errno != EOPNOTSUPP && errno != ENOSYS)
			return fail(w, errno);
		/* A file system without fallocate: extend the file; a full
		 * disk may then only show when pages are written back. */
		if (ftruncate(w->fd, (off_t)(off + MT_WRITER_WINDOW)) < 0)
			return fail(w, errno);
	}
	p = mmap(NULL, MT_WRITER_WINDOW, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		 w->fd, (off_t)off);
	if (p == MAP_FAILED)
		return fail(w, errno);
	w->map = p;
	w->map_off = off;
	w->pos = 0;
	return 0;
}

int mt_writer_write(mt_writer_t *w, const char *data, size_t len)
{
	if (w->error)
		return -w->error;
	while (len) {
		size_t n;

		if (!w->map || w->pos == MT_WRITER_WINDOW) {
			uint64_t off = w->map ? w->map_off + MT_WRITER_WINDOW : 0;
			int rc = map_window(w, off);

			if (rc)
				return rc;
		}
		n = MT_WRITER_WINDOW - w->pos;
		if (n > len)
			n = len;
		memcpy(w->map + w->pos, data, n);
		w->pos += n;
		w->length += n;
		data += n;
		len -= n;
	}
	return 0;
}

int mt_writer_close(mt_writer_t *w)
{
	int rc = 0;

	if (w->map) {
		munmap(w->map, MT_WRITER_WINDOW);
		w->map = NULL;
	}
	if (w->fd < 0)
		return 0;
	if (!still_ours(w)) {
		/* Not ours any more: neither cut nor close it.  Every
		 * line is in the file already; the trace just keeps its
		 * zero padding, which the analyzer reads as the end. */
		w->fd = -1;
		return 0;
	}
	/* Cut the reserved padding off: a whole trace ends at its last
	 * newline. */
	if (ftruncate(w->fd, (off_t)w->length) < 0)
		rc = -errno;
	if (close(w->fd) < 0 && !rc)
		rc = -errno;
	w->fd = -1;
	return rc;
}

void mt_writer_abandon(mt_writer_t *w)
{
	if (w->map)
		munmap(w->map, MT_WRITER_WINDOW);
	if (w->fd >= 0 && still_ours(w))
		close(w->fd);
	memset(w, 0, sizeof(*w));
	w->fd = -1;
}
