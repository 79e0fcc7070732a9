/*
 * mt_out: the collector's trace file, plain or zstd, written in big
 * chunks and flushed to whole lines or whole frames.  It must never leave
 * the file ending inside a line or a frame where it can cut it back,
 * never raise SIGXFSZ, never open a file it did not create (but the
 * user's own root name), never print, exit or abort: every failure is a
 * -errno for the collector to report.
 */
#include "mt_out.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "mt_zpool.h"

struct mt_out {
	int fd;
	int error;       /* the -errno that stopped o, or 0: sticky */
	ZSTD_CCtx *zc;   /* NULL: a plain trace */
	char *buf;       /* whole lines not yet in the file */
	size_t len;      /* bytes held in buf, at most MT_OUT_CHUNK */
	char *zbuf;      /* zstd: a frame of buf's lines, compressed */
	size_t zcap;
	/* zstd on worker threads, or NULL: frames compressed in one call on
	 * the caller's.  With one, buf is the pool's buffer being filled. */
	mt_zpool_t *pool;
	uint64_t size;   /* bytes in the file (its descriptor's offset) */
	uint64_t safe;   /* where the last whole line or frame in it ends */
	uint64_t mark;   /* the last mark: a whole line or frame end */
};

/*
 * The zstd contexts of closed traces, kept for the next trace to open.
 * A new context asks the CPU for its features (two CPUIDs, which a
 * hypervisor traps: 5 to 7 us each on the bench machine) and grows its
 * tables again on its first frame; a collector under record opens two
 * traces for each short process (the forked child's and its exec's).
 * compress2() begins every frame with a fresh session, so nothing of
 * one trace reaches the next.  Any thread may open or close a trace.
 */
#define SPARE_CCTX_MAX 2
static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;
static ZSTD_CCtx *spare_cctx[SPARE_CCTX_MAX];
static int spare_cctxs;

static ZSTD_CCtx *cctx_take(void)
{
	ZSTD_CCtx *zc = NULL;

	pthread_mutex_lock(&spare_lock);
	if (spare_cctxs > 0)
		zc = spare_cctx[--spare_cctxs];
	pthread_mutex_unlock(&spare_lock);
	return zc ? zc : ZSTD_createCCtx();
}

static void cctx_give(ZSTD_CCtx *zc)
{
	if (!zc)
		return;
	/* Kept as a new one is: no parameter of the trace before. */
	if (ZSTD_isError(ZSTD_CCtx_reset(zc, ZSTD_reset_session_and_parameters))) {
		ZSTD_freeCCtx(zc);
		return;
	}
	pthread_mutex_lock(&spare_lock);
	if (spare_cctxs < SPARE_CCTX_MAX) {
		spare_cctx[spare_cctxs++] = zc;
		zc = NULL;
	}
	pthread_mutex_unlock(&spare_lock);
	ZSTD_freeCCtx(zc);
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), k = strlen(tail);

	return n >= k && !memcmp(s + n - k, tail, k);
}

/*
 * Copy name into out with ins put in before the extension of its last
 * component: out.jsonl, ".1" -> out.1.jsonl; a name without one (or whose
 * only dot leads its last component) gets ins at its end; a name ending
 * in ".jsonl.zst" gets it before ".jsonl.zst", so the number stays out of
 * the two-part extension.  The rule of preload/mt_trace.c's
 * insert_before_ext(), but for that last case.  Returns -1 when it does
 * not fit in cap bytes.
 */
static int insert_before_ext(const char *name, const char *ins, char *out,
			     size_t cap)
{
	static const char jz[] = ".jsonl.zst";
	const char *slash = strrchr(name, '/');
	const char *base = slash ? slash + 1 : name;
	const char *dot = strrchr(base, '.');
	size_t n = strlen(name), k = strlen(ins), at;

	if (n + k + 1 > cap)
		return -1;
	if (ends_with(base, jz) && strlen(base) > sizeof(jz) - 1)
		dot = name + n - (sizeof(jz) - 1);
	at = dot && dot != base ? (size_t)(dot - name) : n;
	memmove(out, name, at);
	memcpy(out + at, ins, k);
	memcpy(out + at + k, name + at, n - at + 1);
	return 0;
}

/* Traces are private (docs/security.md): made 0600, never through a
 * symbolic link, never into a file that is not the user's own regular
 * file (a FIFO, a directory, a device, another user's file). */
#define OPEN_FLAGS (O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

/* The user's own name: created, or an existing trace of the user's made
 * private and emptied once it is ours to write (locked).  Returns fd or
 * -errno. */
static int open_root(const char *name)
{
	struct stat st;
	int fd, rc;

	for (int tries = 0;; tries++) {
		fd = open(name, OPEN_FLAGS | O_CREAT | O_EXCL, 0600);
		if (fd >= 0 || errno != EEXIST)
			break;
		fd = open(name, OPEN_FLAGS);
		if (fd >= 0 || errno != ENOENT || tries == 3)
			break; /* ENOENT: removed meanwhile, make it */
	}
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		goto cleanup;
	}
	if (st.st_uid != geteuid()) {
		rc = -EPERM;
		goto cleanup;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0 ||
	    ((st.st_mode & 07777) != 0600 && fchmod(fd, 0600) < 0) ||
	    ftruncate(fd, 0) < 0) {
		rc = -errno;
		goto cleanup;
	}
	return fd;
cleanup:
	close(fd);
	return rc;
}

/* A name no file had: created with O_EXCL, then locked; a reader that
 * opened it in between holds it a moment only, so the lock waits. */
static int open_new(const char *path)
{
	int fd, rc;

	fd = open(path, OPEN_FLAGS | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX) < 0) {
		if (errno == EINTR)
			continue;
		rc = -errno;
		goto cleanup;
	}
	return fd;
cleanup:
	close(fd);
	unlink(path);
	return rc;
}

/* The first free name among name, name.1, ... (see mt_out_open()). */
static int open_first_free(const char *name, char *path, size_t cap)
{
	for (unsigned k = 0; k < MT_OUT_NAME_TRIES; k++) {
		char num[16];
		int fd;

		if (!k) {
			memcpy(path, name, strlen(name) + 1);
		} else {
			snprintf(num, sizeof(num), ".%u", k);
			if (insert_before_ext(name, num, path, cap) < 0)
				return -ENAMETOOLONG;
		}
		fd = open_new(path);
		if (fd != -EEXIST)
			return fd;
	}
	return -EEXIST;
}

/* Forget the lines not yet in the file (and the frames the workers
 * have). */
static void drop(mt_out_t *o)
{
	o->len = 0;
	if (o->pool) {
		mt_zpool_drop(o->pool);
		o->buf = mt_zpool_buf(o->pool);
	}
}

/*
 * o failed with err, after done bytes of p reached the file at its end:
 * cut the file back to its last whole line (found in p for a plain trace,
 * whose writes start at line ends) or frame, and stay failed.
 */
static int fail(mt_out_t *o, int err, const char *p, size_t done)
{
	if (!o->zc && done) {
		const char *nl = memrchr(p, '\n', done);

		if (nl)
			o->safe = o->size - done + (size_t)(nl - p) + 1;
	}
	/* Not a regular file (a pipe): there is nothing to cut. */
	if (o->size != o->safe && !ftruncate(o->fd, (off_t)o->safe) &&
	    lseek(o->fd, (off_t)o->safe, SEEK_SET) >= 0)
		o->size = o->safe;
	o->len = 0;
	o->error = err;
	return err;
}

/* How many of n bytes at offset at stay within RLIMIT_FSIZE. */
static int fsize_room(uint64_t at, size_t n, size_t *room)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_FSIZE, &rl) < 0)
		return -errno;
	*room = n;
	if (rl.rlim_cur != RLIM_INFINITY && at + n > rl.rlim_cur)
		*room = at < rl.rlim_cur ? (size_t)(rl.rlim_cur - at) : 0;
	return 0;
}

/* Write p[0, n) at the file's end; a plain trace's bytes are whole
 * lines.  Returns 0 or -errno, the file cut back (fail()). */
static int put(mt_out_t *o, const char *p, size_t n)
{
	size_t done = 0, room = 0;
	int rc;

	rc = fsize_room(o->size, n, &room);
	if (rc < 0)
		return fail(o, rc, p, 0);
	while (done < room) {
		ssize_t w = write(o->fd, p + done, room - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return fail(o, w < 0 ? -errno : -ENOSPC, p, done);
		done += (size_t)w;
		o->size += (uint64_t)w;
	}
	if (room < n)
		return fail(o, -EFBIG, p, done);
	if (!o->zc)
		o->safe = o->size;
	return 0;
}

/* Workers: write the frames they are done with, oldest first: all of
 * them when all is set (waiting for each), else those done already, and
 * more, waiting, while no buffer is free to fill. */
static int take_frames(mt_out_t *o, int all)
{
	for (;;) {
		const char *z;
		size_t n;
		int r = mt_zpool_oldest(o->pool, all || !mt_zpool_buf(o->pool), &z, &n);
		int rc;

		if (!r)
			return 0;
		if (r < 0) {
			mt_zpool_pop(o->pool);
			return fail(o, r, NULL, 0);
		}
		rc = put(o, z, n);
		mt_zpool_pop(o->pool);
		if (rc < 0)
			return rc;
		o->safe = o->size;
	}
}

/* Workers: queue the lines gathered in buf as a frame of their own, and
 * go on in a free buffer. */
static int hand(mt_out_t *o)
{
	int rc;

	if (o->len) {
		mt_zpool_queue(o->pool, o->len);
		o->len = 0;
	}
	rc = take_frames(o, 0);
	o->buf = mt_zpool_buf(o->pool);
	return rc;
}

/*
 * Write the buffer out: a plain trace's lines as they are, a compressed
 * trace's as one zstd frame of their own.  A frame per buffer, each
 * compressed in one call, costs 12 % less zstd time than one stream ended
 * every second (the copies into the stream's window) for 1 % more bytes,
 * and a cut trace keeps every whole MiB of lines.
 */
static int drain(mt_out_t *o)
{
	size_t n = o->len, z;
	int rc;

	if (o->pool) {
		rc = hand(o);
		return rc < 0 ? rc : take_frames(o, 1);
	}
	o->len = 0;
	if (!n)
		return 0;
	if (!o->zc)
		return put(o, o->buf, n);
	z = ZSTD_compress2(o->zc, o->zbuf, o->zcap, o->buf, n);
	if (ZSTD_isError(z))
		return fail(o, mt_zpool_errno(z, -EIO), NULL, 0);
	rc = put(o, o->zbuf, z);
	if (rc < 0)
		return rc;
	o->safe = o->size;
	return 0;
}

int mt_out_open(mt_out_t **out, const char *name, int root, char *path,
		size_t cap)
{
	mt_out_t *o = NULL;
	int rc;

	*out = NULL;
	if (!*name)
		return -ENOENT;
	if (strlen(name) + 1 > cap)
		return -ENAMETOOLONG;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->fd = -1;
	o->buf = malloc(MT_OUT_CHUNK);
	if (!o->buf) {
		rc = -ENOMEM;
		goto cleanup;
	}
	if (ends_with(name, ".zst")) {
		o->zc = cctx_take();
		if (!o->zc) {
			rc = -ENOMEM;
			goto cleanup;
		}
		o->zcap = ZSTD_compressBound(MT_OUT_CHUNK);
		o->zbuf = malloc(o->zcap);
		if (!o->zbuf) {
			rc = -ENOMEM;
			goto cleanup;
		}
		rc = mt_zpool_params(o->zc, MT_OUT_LEVEL);
		if (rc < 0)
			goto cleanup;
	}
	if (root) {
		memcpy(path, name, strlen(name) + 1);
		rc = open_root(name);
	} else {
		rc = open_first_free(name, path, cap);
	}
	if (rc < 0)
		goto cleanup;
	o->fd = rc;
	*out = o;
	o = NULL;
	rc = 0;
cleanup:
	if (o) {
		cctx_give(o->zc);
		free(o->zbuf);
		free(o->buf);
		free(o);
	}
	return rc;
}

int mt_out_compressed(const mt_out_t *o)
{
	return o->zc != NULL;
}

int mt_out_set_zstd(mt_out_t *o, int level, int workers)
{
	int rc;

	if (!o->zc || o->len || o->pool || workers < 0 || workers > MT_OUT_WORKERS_MAX)
		return -EINVAL;
	/* The pool first, so that nothing changes when it cannot start. */
	if (workers &&
	    (rc = mt_zpool_create(&o->pool, workers, level, MT_OUT_CHUNK)) < 0)
		return rc;
	rc = mt_zpool_params(o->zc, level);
	if (rc < 0) {
		mt_zpool_destroy(o->pool);
		o->pool = NULL;
		return rc;
	}
	if (!workers)
		return 0;
	/* The pool's buffers take the place of buf and zbuf. */
	free(o->buf);
	free(o->zbuf);
	o->zbuf = NULL;
	o->zcap = 0;
	o->buf = mt_zpool_buf(o->pool);
	return 0;
}

void mt_out_start_workers(mt_out_t *o)
{
	if (o->pool)
		mt_zpool_start(o->pool);
}

unsigned mt_out_workers_started(const mt_out_t *o)
{
	return o->pool ? mt_zpool_started(o->pool) : 0;
}

int mt_out_set_expander(mt_out_t *o, const mt_zpool_expander_t *ex)
{
	/* The pool refuses one after its first frame was queued. */
	if (!o->pool || o->len)
		return -EINVAL;
	return mt_zpool_set_expander(o->pool, ex);
}

int mt_out_cpus(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return 1;
	n = CPU_COUNT(&set);
	return n > 0 ? n : 1;
}

int mt_out_workers_for(int cpus)
{
	return cpus < 2 ? 0 : MT_OUT_WORKERS_MAX;
}

int mt_out_workers_here(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < MT_OUT_NPROC_ROOM)
		return 0;
	return mt_out_workers_for(mt_out_cpus());
}

int mt_out_write(mt_out_t *o, const char *buf, size_t len)
{
	int rc;

	if (o->error)
		return o->error;
	while (len) {
		size_t take = len;

		if (o->len + len > MT_OUT_CHUNK) {
			if (o->len) {
				rc = o->pool ? hand(o) : drain(o);
				if (rc < 0)
					return rc;
				continue;
			}
			/* More than a buffer at once: the whole lines that
			 * fit (a line longer than a buffer is cut). */
			{
				const char *nl = memrchr(buf, '\n', MT_OUT_CHUNK);

				take = nl ? (size_t)(nl - buf) + 1 : MT_OUT_CHUNK;
			}
		}
		memcpy(o->buf + o->len, buf, take);
		o->len += take;
		buf += take;
		len -= take;
	}
	return 0;
}

int mt_out_room(mt_out_t *o, size_t max, char **at)
{
	int rc;

	if (o->error)
		return o->error;
	if (max > MT_OUT_CHUNK)
		return -EINVAL;
	if (o->len + max > MT_OUT_CHUNK) {
		rc = o->pool ? hand(o) : drain(o);
		if (rc < 0)
			return rc;
	}
	*at = o->buf + o->len;
	return 0;
}

void mt_out_put(mt_out_t *o, size_t len)
{
	o->len += len;
}

int mt_out_flush(mt_out_t *o)
{
	int rc;

	if (o->error)
		return o->error;
	rc = drain(o);
	if (rc < 0)
		return rc;
	o->safe = o->size;
	return 0;
}

int mt_out_mark(mt_out_t *o)
{
	int rc = mt_out_flush(o);

	if (rc < 0)
		return rc;
	o->mark = o->size;
	return 0;
}

int mt_out_rewind(mt_out_t *o)
{
	if (o->error)
		return o->error;
	drop(o);
	if (o->size != o->mark &&
	    (ftruncate(o->fd, (off_t)o->mark) < 0 ||
	     lseek(o->fd, (off_t)o->mark, SEEK_SET) < 0)) {
		o->error = -errno;
		return o->error;
	}
	o->size = o->safe = o->mark;
	return 0;
}

uint64_t mt_out_length(const mt_out_t *o)
{
	return o->size;
}

int mt_out_close(mt_out_t *o)
{
	int rc;

	if (!o)
		return 0;
	rc = mt_out_flush(o);
	if (close(o->fd) < 0 && !rc)
		rc = -errno;
	if (o->pool)
		mt_zpool_destroy(o->pool); /* buf is one of its buffers */
	else
		free(o->buf);
	cctx_give(o->zc);
	free(o->zbuf);
	free(o);
	return rc;
}
