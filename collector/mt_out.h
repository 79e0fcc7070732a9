/*
 * mt_out: the collector's trace file: the memtrace JSONL lines it drains
 * from the ring, written plain or as zstd frames (format.md section 2.1),
 * in big write(2)s.
 *
 * The file only ever ends at a boundary a reader can use: after a whole
 * line (plain) or after a whole zstd frame (compressed), as far as this
 * module can see to it.  A write that fails (ENOSPC, EDQUOT, EFBIG, EIO,
 * ...) cuts the file back with ftruncate(2) to the last such boundary it
 * wrote completely, and the module stays failed: every later call returns
 * the same error.  A plain trace on a small disk keeps every whole line
 * that fit; a compressed one every whole frame.  It must never leave a
 * part-line or a part-frame behind when it can cut it off, never raise
 * SIGXFSZ (RLIMIT_FSIZE is read before each write, and a write that would
 * pass it is cut at the limit and fails with EFBIG, so the caller need
 * not ignore the signal), never print, exit or abort: errors are -errno.
 *
 * Not thread-safe: one caller at a time per mt_out_t.  Allocates with
 * malloc (it runs in the collector's own process, never in the traced
 * program).
 */
#ifndef MT_OUT_H
#define MT_OUT_H

#include <stddef.h>
#include <stdint.h>

#include "mt_zpool.h"

/* How many bytes of lines are gathered before one write(2) (a compressed
 * trace: before one zstd frame). */
#define MT_OUT_CHUNK (1u << 20)

/* The zstd level: --fast=3, the fastest that keeps python3's and
 * sqlite3's traces within 12 bytes an event (docs/performance.md, "The
 * collector"). */
#define MT_OUT_LEVEL -3

/*
 * With worker threads (mt_out_set_zstd), each chunk of lines is queued
 * to them as it fills and the drain goes on in another buffer
 * (mt_zpool): the frames are the same as without them, one a chunk, and
 * reach the file in order.  The workers are at most MT_OUT_WORKERS_MAX.
 */
#define MT_OUT_WORKERS_MAX 2

/* The names a non-root trace tries: NAME, then NAME.1 ... NAME.999. */
#define MT_OUT_NAME_TRIES 1000

typedef struct mt_out mt_out_t;

/*
 * Open the trace named name (already %p-expanded) and take an exclusive
 * flock(2) on it, held until mt_out_close(), so another process can wait
 * for the trace to be finished with flock(LOCK_SH).
 *
 * Traces are private (docs/security.md): a file is created mode 0600,
 * never through a symbolic link.  root = 1 (the name the user gave):
 * create the file, or take an existing regular file of the user's, made
 * 0600 and emptied (anything else: -EINVAL, another user's: -EPERM).  The
 * lock is taken (LOCK_NB) before the file is emptied, so a trace that
 * another process still holds locked is left alone: -EWOULDBLOCK.
 *
 * root = 0: take the first name that no file has among NAME, then NAME
 * with ".1", ".2", ... ".999" put in before the extension of its last path
 * component (out.jsonl -> out.1.jsonl; a name without an extension gets
 * the number at its end: out -> out.1; a leading dot is no extension).
 * One exception: a name ending in ".jsonl.zst" gets the number before
 * ".jsonl.zst" (t.5.jsonl.zst -> t.5.1.jsonl.zst), not before ".zst".
 * Each is created with O_EXCL, so an existing file is never opened;
 * -EEXIST when all 1000 exist.
 *
 * The trace is zstd-compressed when name ends in ".zst" (every name tried
 * does then), plain otherwise.  path receives the name used (cap bytes;
 * -ENAMETOOLONG when it does not fit).  Returns 0 and *out, or -errno and
 * no file created (but for a root name that already existed).
 */
int mt_out_open(mt_out_t **out, const char *name, int root, char *path,
		size_t cap);

/* Whether the trace is written zstd-compressed. */
int mt_out_compressed(const mt_out_t *o);

/*
 * Set a compressed trace's zstd level (negative: zstd's --fast=N) and
 * the worker threads that compress its frames (0: the caller's thread;
 * either way a frame of MT_OUT_CHUNK bytes compressed in one call).
 * Only while no line waits for the file (at the start, or just after a
 * flush or mark: the frames before are in the file, the workers make
 * the next), and once with workers.  Returns 0, -EINVAL for a plain
 * trace, a level zstd refuses, more than MT_OUT_WORKERS_MAX workers or a
 * call with lines buffered, or mt_zpool's -errno (nothing changed).
 */
int mt_out_set_zstd(mt_out_t *o, int level, int workers);

/*
 * With workers: have them turn what is appended (mt_out_room and
 * mt_out_put only) from records into lines, ex's way (mt_zpool.h), before
 * they compress them; a flush, mark or rewind does as it does with lines.
 * Only before the first write since the workers were set.  Returns 0,
 * -EINVAL without workers or after such a write, or -ENOMEM (nothing
 * changed: o still takes lines).
 */
int mt_out_set_expander(mt_out_t *o, const mt_zpool_expander_t *ex);

/* The program waits for room in its ring: start the workers, if any and
 * not yet (mt_zpool_start()).  Until then the drain compresses each frame
 * itself: a program the collector keeps up with never has them take CPU
 * time, nor cache, beside it. */
void mt_out_start_workers(mt_out_t *o);
/* How many workers were started. */
unsigned mt_out_workers_started(const mt_out_t *o);

/* The CPUs the calling process may run on (sched_getaffinity), at least
 * 1. */
int mt_out_cpus(void);

/* zstd workers for a collector that may run on cpus CPUs: none on one,
 * else MT_OUT_WORKERS_MAX.  Started once the program waits for room in
 * its ring, they run at the lowest priority, and the drain compresses the
 * frames itself once one was starved (mt_zpool.h): they take only the CPU
 * time the program and the drain leave, on two CPUs the time the
 * program's threads wait. */
int mt_out_workers_for(int cpus);

/* The workers for this collector: mt_out_workers_for() its CPUs, but
 * none under a soft RLIMIT_NPROC below MT_OUT_NPROC_ROOM: each worker is
 * a task the limit counts, and a limit that low is one whose room the
 * program's own forks need. */
#define MT_OUT_NPROC_ROOM 1024
int mt_out_workers_here(void);

/*
 * Append len bytes: whole JSONL lines, each ending in '\n'; a line is
 * never split across calls (the cut-back of a failed plain write relies
 * on it).  Buffered: the lines reach the file in chunks of at most
 * MT_OUT_CHUNK bytes (compressed: a zstd frame each, with its content
 * checksum), and all of them at the next mt_out_flush().
 */
int mt_out_write(mt_out_t *o, const char *buf, size_t len);

/*
 * The same as mt_out_write, without the copy: mt_out_room gives in *at
 * room for max bytes (at most MT_OUT_CHUNK) at the end of the lines
 * gathered, and mt_out_put appends the len <= max bytes of whole lines
 * written there.  No other call of o may come in between.  Returns 0 or
 * -errno (o's error, or -EINVAL for a max too large).
 */
int mt_out_room(mt_out_t *o, size_t max, char **at);
void mt_out_put(mt_out_t *o, size_t len);

/*
 * Make every line written so far readable in the file: plain, write the
 * buffer out; zstd, compress it as a frame of its own and write that out,
 * so a reader of the running trace, or of a trace cut by a kill of the
 * collector afterwards, decodes every line up to here.  Without a line since the last flush it writes nothing (no
 * empty frame).  The collector calls it at least once a second.
 */
int mt_out_flush(mt_out_t *o);

/*
 * mt_out_mark() flushes, then remembers the file's length; opening the
 * trace is a mark at length 0.  mt_out_rewind() cuts the file back to the
 * last mark and goes on writing from there, as if nothing after the mark
 * had been written (the lines not yet flushed are dropped too).  For an exec: its trace.stop "exec" line is written after
 * a mark, and taken back when the exec fails.  A zstd mark ends a frame,
 * so a rewind leaves whole frames only.
 */
int mt_out_mark(mt_out_t *o);
int mt_out_rewind(mt_out_t *o);

/* The bytes in the file (written out, not buffered). */
uint64_t mt_out_length(const mt_out_t *o);

/*
 * Flush, close and free o (the flock goes with the descriptor).  Returns
 * 0, or -errno of the first failure of o's life (the failed write whose
 * error the later calls repeated, or the flush or close here).  o is freed
 * whatever it returns; NULL is a no-op.
 */
int mt_out_close(mt_out_t *o);

#endif
