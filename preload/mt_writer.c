/*
 * mt_writer: mmap-window file writer.  It must never allocate, never
 * block on anything but the file, and never leave the traced program
 * exposed to SIGBUS (space is reserved before a window is mapped).
 */
#include "mt_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* mt_writer_t.prep */
enum { PREP_IDLE, PREP_WANTED, PREP_BUSY, PREP_READY };

/* A prepared window's zeros are written in pieces of PIECE bytes, from
 * ZEROS bytes of .bss that nothing ever writes. */
#define PIECE (2u << 20)
#define ZEROS (64u << 10)
static char zeros[ZEROS];

/* Open path for the trace: created new (mode 0600), or else an existing
 * regular file of this user's, made 0600 and emptied.  Never through a
 * symlink.  A file someone else made is refused without a change: in a
 * shared directory (/tmp) they may have made it to read the trace. */
static int open_trace(const char *path, struct stat *st, int reuse)
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
		if (errno != EEXIST || !reuse)
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

static int open_writer(mt_writer_t *w, const char *path, int reuse)
{
	struct stat st;
	int fd;

	memset(w, 0, sizeof(*w));
	fd = open_trace(path, &st, reuse);
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

int mt_writer_open(mt_writer_t *w, const char *path)
{
	return open_writer(w, path, 1);
}

int mt_writer_create(mt_writer_t *w, const char *path)
{
	return open_writer(w, path, 0);
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

/* Write len zero bytes at off, a piece at a time, until done or a write
 * fails. */
static void write_zeros(int fd, uint64_t off, uint64_t len)
{
	struct iovec iov[PIECE / ZEROS];

	while (len) {
		size_t n = len < PIECE ? (size_t)len : PIECE, cnt = 0;
		ssize_t got;

		for (size_t at = 0; at < n; at += ZEROS, cnt++) {
			iov[cnt].iov_base = zeros;
			iov[cnt].iov_len = n - at < ZEROS ? n - at : ZEROS;
		}
		got = pwritev(fd, iov, (int)cnt, (off_t)off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return;
		off += (uint64_t)got;
		len -= (uint64_t)got;
	}
}

/* The least a reservation asks for: a page. */
#define RESERVE_MIN 4096u

/*
 * Reserve the blocks of [off, off + want) and extend the file over them,
 * or, where the disk has less, the most of it that it has, halving down
 * to RESERVE_MIN.  Returns the bytes reserved, or 0 (errno set: ENOSPC
 * when not even RESERVE_MIN was to be had).  A file system without
 * fallocate gets its file extended over the whole of it: a full disk may
 * then only show when pages are written back.
 */
static uint32_t reserve(const mt_writer_t *w, uint64_t off, uint32_t want)
{
	struct rlimit fsize;

	/* Past RLIMIT_FSIZE the kernel would send SIGXFSZ, which kills the
	 * program unless it says otherwise: ask for no more than the limit
	 * leaves. */
	if (getrlimit(RLIMIT_FSIZE, &fsize) == 0 && fsize.rlim_cur != RLIM_INFINITY) {
		uint64_t room = fsize.rlim_cur > off ? fsize.rlim_cur - off : 0;

		room &= ~(uint64_t)(RESERVE_MIN - 1);
		if (room < RESERVE_MIN) {
			errno = EFBIG;
			return 0;
		}
		if (want > room)
			want = (uint32_t)room;
	}
	for (;;) {
		int rc;

		do
			rc = fallocate(w->fd, 0, (off_t)off, (off_t)want);
		while (rc < 0 && errno == EINTR);
		if (rc == 0)
			return want;
		if (errno == EOPNOTSUPP || errno == ENOSYS)
			return ftruncate(w->fd, (off_t)(off + want)) < 0 ? 0 : want;
		if (errno != ENOSPC && errno != EFBIG)
			return 0;
		if (want <= RESERVE_MIN) {
			errno = ENOSPC;
			return 0;
		}
		want = want / 2 < RESERVE_MIN ? RESERVE_MIN : want / 2;
	}
}

/* Reserve the blocks of the window at off, as many as the disk has up to
 * the window (*limit says how many), and map the whole window; NULL
 * (errno set) on failure.  When populate is set (a window made ahead,
 * with no lock held) the page cache of its reserved part is made whole
 * first: its zeros written with
 * pwritev() in 2 MiB pieces, which lets the file system hold them in
 * large folios, then faulted in for writing at once.  Page by page, from
 * the mapping's faults, the same pages cost 5 to 10 times as much on a
 * virtual machine whose page-table updates trap to the host
 * (docs/performance.md, "The trace's pages"); MAP_POPULATE would fault
 * them in read-only, and each first write would fault again. */
static char *reserve_and_map(const mt_writer_t *w, uint64_t off, int populate,
			     uint32_t *limit)
{
	void *p;

	*limit = reserve(w, off, MT_WRITER_WINDOW);
	if (!*limit)
		return NULL;
	/* Zeros over reserved blocks change no byte of the trace: a failure
	 * here only leaves the pages to the faults, as unprepared.  The
	 * descriptor is looked at again first: zeros written into a file the
	 * program opened under the trace's number meanwhile would be its
	 * bytes lost (the look narrows that window; nothing can close it). */
	if (populate && still_ours(w))
		write_zeros(w->fd, off, *limit);
	/* The whole window is mapped whatever was reserved: what is past the
	 * file's end is never touched until a reservation covers it. */
	p = mmap(NULL, MT_WRITER_WINDOW, PROT_READ | PROT_WRITE, MAP_SHARED,
		 w->fd, (off_t)off);
	if (p == MAP_FAILED)
		return NULL;
	/* An older kernel says EINVAL: the pages then fault in as written. */
	if (populate)
		madvise(p, *limit, MADV_POPULATE_WRITE);
	return p;
}

/*
 * The trace is written once and never read back by the process, so its
 * page cache need not stay: when the window at next_off is made, the one
 * before the current window is whole, and its writeback is started; the
 * one before that, whose writeback started a window ago, leaves the page
 * cache (POSIX_FADV_DONTNEED drops only clean pages that nothing maps, so
 * no byte is lost and nothing waits for the disk).  The next window's
 * pages are then the ones just freed, which on a virtual machine cost a
 * fraction of memory the guest has not used lately (the host backs it
 * again, page by page).  A trace of any length holds a few windows of
 * page cache instead of its whole length.  Errors change nothing (tmpfs
 * drops nothing) and are ignored.
 */
static void recycle(const mt_writer_t *w, uint64_t next_off)
{
	const uint64_t win = MT_WRITER_WINDOW;

	if (next_off >= 2 * win)
		sync_file_range(w->fd, (off_t)(next_off - 2 * win), (off_t)win,
				SYNC_FILE_RANGE_WRITE);
	if (next_off >= 3 * win)
		posix_fadvise(w->fd, (off_t)(next_off - 3 * win), (off_t)win,
			      POSIX_FADV_DONTNEED);
}

/* Wait for a preparation under way to end (it needs no lock and ends
 * soon) and cancel one only wanted, by a compare-and-swap: a thread may
 * take it (WANTED to BUSY) at any moment, and would then write its zeros
 * over a window the caller maps itself.  Returns what it settled on:
 * PREP_READY (next_map is the caller's), or no window. */
static int settle(mt_writer_t *w)
{
	for (;;) {
		int st = atomic_load_explicit(&w->prep, memory_order_acquire);

		if (st == PREP_BUSY)
			sched_yield();
		else if (st != PREP_WANTED ||
			 atomic_compare_exchange_weak_explicit(&w->prep, &st, PREP_IDLE,
							       memory_order_acquire,
							       memory_order_relaxed))
			return st;
	}
}

/* Map the window that starts at off: the prepared one when it is there,
 * else reserve and map it now. */
static int map_window(mt_writer_t *w, uint64_t off)
{
	char *p = NULL;
	uint32_t limit = 0;

	if (w->map) {
		/* At most one is retired at a time: a caller that did not
		 * take the last one meets it here. */
		if (w->retired)
			munmap(w->retired, MT_WRITER_WINDOW);
		w->retired = w->map;
		w->map = NULL;
	}
	if (settle(w) == PREP_READY) {
		if (w->next_off == off) {
			p = w->next_map;
			limit = w->next_limit;
		} else {
			munmap(w->next_map, MT_WRITER_WINDOW);
		}
		w->next_map = NULL;
	}
	atomic_store_explicit(&w->prep, PREP_IDLE, memory_order_relaxed);
	if (!p) {
		if (!still_ours(w))
			return fail(w, EBADF);
		p = reserve_and_map(w, off, 0, &limit);
		if (!p)
			return fail(w, errno);
	}
	w->map = p;
	w->map_off = off;
	w->pos = 0;
	w->limit = limit;
	return 0;
}

/* The window is mapped whole but reserved only in part (a disk short of
 * space): reserve more of it after what is used.  Returns 0 or -errno. */
static int grow_window(mt_writer_t *w)
{
	uint32_t got;

	if (!still_ours(w))
		return fail(w, EBADF);
	got = reserve(w, w->map_off + w->limit, MT_WRITER_WINDOW - w->limit);
	if (!got)
		return fail(w, errno);
	w->limit += got;
	return 0;
}

/* Half full: ask for the next window, once per window. */
static inline void ask_for_next(mt_writer_t *w)
{
	if (w->pos >= MT_WRITER_WINDOW / 2 &&
	    w->armed_for != w->map_off + MT_WRITER_WINDOW &&
	    atomic_load_explicit(&w->prep, memory_order_relaxed) == PREP_IDLE) {
		w->armed_for = w->prep_off = w->map_off + MT_WRITER_WINDOW;
		atomic_store_explicit(&w->prep, PREP_WANTED, memory_order_release);
	}
}

int mt_writer_write(mt_writer_t *w, const char *data, size_t len)
{
	size_t done = 0;

	if (w->error)
		return -w->error;
	while (len) {
		size_t n;
		int rc = 0;

		if (!w->map || w->pos == MT_WRITER_WINDOW)
			rc = map_window(w, w->map ? w->map_off + MT_WRITER_WINDOW : 0);
		else if (w->pos == w->limit)
			rc = grow_window(w);
		if (rc) {
			/* A line only part written is no part of the trace:
			 * closing cuts the file where it starts. */
			w->length -= done;
			return rc;
		}
		n = w->limit - w->pos;
		if (n > len)
			n = len;
		memcpy(w->map + w->pos, data, n);
		w->pos += (uint32_t)n;
		w->length += n;
		done += n;
		data += n;
		len -= n;
	}
	ask_for_next(w);
	return 0;
}

void mt_writer_commit(mt_writer_t *w, size_t n)
{
	w->pos += (uint32_t)n;
	w->length += n;
	ask_for_next(w);
}

void mt_writer_prepare(mt_writer_t *w)
{
	int wanted = PREP_WANTED;
	char *p;

	if (!atomic_compare_exchange_strong_explicit(&w->prep, &wanted, PREP_BUSY,
						     memory_order_acquire,
						     memory_order_relaxed))
		return;
	/* fd, dev and ino stay as they are while a preparation is busy:
	 * closing waits for it (mt_writer_quiesce).  The pages let go first
	 * are the ones the new window's take. */
	p = NULL;
	if (still_ours(w)) {
		recycle(w, w->prep_off);
		p = reserve_and_map(w, w->prep_off, 1, &w->next_limit);
	}
	if (!p) {
		/* The switch tries again and reports what it meets. */
		atomic_store_explicit(&w->prep, PREP_IDLE, memory_order_release);
		return;
	}
	w->next_map = p;
	w->next_off = w->prep_off;
	atomic_store_explicit(&w->prep, PREP_READY, memory_order_release);
}

void mt_writer_quiesce(mt_writer_t *w)
{
	settle(w);
}

void mt_writer_release(char *retired)
{
	if (retired)
		munmap(retired, MT_WRITER_WINDOW);
}

/* Let go of a prepared window (the caller has quiesced) and of a retired
 * one. */
static void drop_next(mt_writer_t *w)
{
	mt_writer_release(mt_writer_take_retired(w));
	if (atomic_load_explicit(&w->prep, memory_order_acquire) == PREP_READY) {
		munmap(w->next_map, MT_WRITER_WINDOW);
		w->next_map = NULL;
	}
	atomic_store_explicit(&w->prep, PREP_IDLE, memory_order_relaxed);
}

int mt_writer_close(mt_writer_t *w)
{
	int rc = 0;

	mt_writer_quiesce(w);
	drop_next(w);
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

int mt_writer_seal(mt_writer_t *w)
{
	if (w->error)
		return -w->error;
	/* No window made ahead may outlive the cut, nor a thread be making
	 * one. */
	mt_writer_quiesce(w);
	drop_next(w);
	if (w->fd < 0 || !still_ours(w))
		return fail(w, EBADF);
	if (ftruncate(w->fd, (off_t)w->length) < 0)
		return fail(w, errno);
	return 0;
}

int mt_writer_unseal(mt_writer_t *w, uint64_t length)
{
	uint64_t back = w->length - length;

	if (w->error || !w->map || length > w->length ||
	    back > w->pos + (uint64_t)(w->map_off ? MT_WRITER_WINDOW : 0))
		return -EINVAL;
	if (!still_ours(w))
		return -EBADF;
	if (back > w->pos) {
		/* The taken-back bytes began in the window before, which was
		 * full: go back to it (the cut left its bytes as they were). */
		char *p = mmap(NULL, MT_WRITER_WINDOW, PROT_READ | PROT_WRITE,
			       MAP_SHARED, w->fd, (off_t)(w->map_off - MT_WRITER_WINDOW));

		if (p == MAP_FAILED)
			return -errno;
		munmap(w->map, MT_WRITER_WINDOW);
		w->map = p;
		w->map_off -= MT_WRITER_WINDOW;
		w->pos += MT_WRITER_WINDOW;
		w->limit = MT_WRITER_WINDOW;
	}
	/* The reservation the cut gave back, then the taken-back bytes made
	 * zeros again (the cut zeroed all but those of the last page). */
	if (reserve(w, w->map_off, w->limit) != w->limit)
		return -(errno ? errno : ENOSPC);
	w->pos -= (uint32_t)back;
	w->length = length;
	/* Past this window the cut freed the blocks: what is reserved there
	 * later reads as zeros. */
	memset(w->map + w->pos, 0, (size_t)(back < MT_WRITER_WINDOW - w->pos ?
					  back : MT_WRITER_WINDOW - w->pos));
	return 0;
}

void mt_writer_abandon(mt_writer_t *w)
{
	/* In a forked child no preparation is under way (the prepare
	 * handler quiesced); in the parent, an I/O error: wait for it. */
	mt_writer_quiesce(w);
	drop_next(w);
	if (w->map)
		munmap(w->map, MT_WRITER_WINDOW);
	if (w->fd >= 0 && still_ours(w))
		close(w->fd);
	memset(w, 0, sizeof(*w));
	w->fd = -1;
}
