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
	const char *path; /* the trace's name, for messages */
} mt_collect_t;

/* Drain until the trace ends (a stop, the program's end, an exec, a
 * write error); close the trace and set hdr->state to MT_RING_DONE.
 * Returns 0, or -errno of a write error (already reported on stderr). */
int mt_collect_run(mt_collect_t *c);

#endif
