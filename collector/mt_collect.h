/*
 * mt_collect: the collector's drain: read the records a traced program
 * appends to the ring (common/mt_ring.h) in order and write them as
 * memtrace JSONL lines (docs/format.md) through mt_out.
 *
 * Invariants:
 * - seq is given here, one per line written, so the trace's seq is
 *   contiguous whatever the program did; t is rounded down to whole
 *   microseconds and never decreases along seq.
 * - A record is read only once its first word is published; its slots'
 *   header words are zeroed before tail moves past them.
 * - Once the program is gone, every record published before is written,
 *   and a half-written one (a thread killed in the middle) is stepped
 *   over, never written.
 * - Whatever is in the file is whole lines (whole zstd frames): a flush
 *   at least every second makes recent events readable.
 */
#ifndef MT_COLLECT_H
#define MT_COLLECT_H

#include <sys/types.h>

#include "../common/mt_ring.h"
#include "mt_out.h"

typedef struct {
	mt_ring_hdr_t *hdr;
	mt_ring_slot_t *slots;
	mt_out_t *out;
	pid_t program;
	int pidfd;      /* the program's pidfd, or -1 */
	int statfd;     /* without one: its /proc/PID/stat, or -1 (kill(2)) */
	int ring_fd;    /* the memfd: an exec is known by its mapping's end */
	const char *path; /* the trace's name (our copy): messages, the empty file's removal */
	/* The file is one the collector made (not the user's own name
	 * reused): removed when the program ended before recording a line. */
	int made;
	/* One of many rings a process serves (memtrace record): each is
	 * charged the CPU time spent on it, not the process's, when timed
	 * (its program prints the account): two system calls a step. */
	int shared, timed;
	/* The caller polls pidfd itself, with the other rings' (a shared
	 * collector), and sets ended once it is readable. */
	int watched, ended;
	/* A later image of the same process has registered (a shared
	 * collector): an exec whose stop was read has succeeded. */
	int replaced;
	/* For a compressed trace made without zstd workers (a shared
	 * collector makes none up front: most of its rings are short
	 * processes', for which a pool is work and memory thrown away), or
	 * NULL: asked once, the first time the program waits for room in its
	 * ring, how many workers the trace may have now (0: none).  The
	 * drain then flushes, gives the trace that many (mt_out_set_zstd),
	 * has them make the block lines (mt_batch.h) and starts them.  Not
	 * asked for a plain trace. */
	int (*workers_for)(void);
	struct mt_collect_drain *drain; /* mt_collect's own, from open */
} mt_collect_t;

/*
 * A ring is drained in steps, so that one process can serve many:
 * mt_collect_open, then mt_collect_step until it says MT_COLLECT_DONE
 * (napping, with mt_collect_nap or otherwise, only when every ring it
 * serves says MT_COLLECT_IDLE), then mt_collect_close.
 */
enum {
	MT_COLLECT_IDLE, /* nothing to read now */
	MT_COLLECT_BUSY, /* it read some: step again soon */
	MT_COLLECT_DONE, /* the trace has ended (a stop, the program's end,
			  * an exec, a write error): close it */
};

/* Ready c to be stepped: 0, or -ENOMEM (the message is in the header;
 * mt_collect_close must follow either way). */
int mt_collect_open(mt_collect_t *c);
int mt_collect_step(mt_collect_t *c);
/* How long a collector of many rings may sleep for c, in ms, once every
 * ring is idle: until its buffered lines are due in the file (a second
 * after the last flush), or its exec is due a look (10 ms); a second at
 * most; 0 when it is to be stepped now; 1 when its program's end is
 * known only by looking. */
int mt_collect_wait_ms(mt_collect_t *c);
/* Sleep up to a millisecond, or until a writer that finds the ring full
 * rings its doorbell. */
void mt_collect_nap(mt_collect_t *c);
/* Close the trace, set hdr->state to MT_RING_DONE and let every waiter
 * go.  Returns 0, or -errno of a write error (already in the header's
 * message). */
int mt_collect_close(mt_collect_t *c);

/* The one-ring collector: open, step (napping when idle) and close.
 * Returns as mt_collect_close. */
int mt_collect_run(mt_collect_t *c);

#endif
