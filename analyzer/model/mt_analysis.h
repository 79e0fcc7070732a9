/*
 * mt_analysis: one streaming pass over a trace file, judging its
 * integrity (mt_integrity) and rebuilding its heap (mt_heap) line by line
 * on one thread, while other threads read, decompress and parse the
 * trace's later chunks (mt_ahead, mt_analysis_set_threads()).
 *
 * Memory is bounded by the reader's buffers plus the heap's tables: the
 * pass never keeps a line once the next one is read.  It parses up to 16
 * block events ahead of applying them (their events, not their lines), so
 * that their cache misses in the heap's tables overlap; what it reports
 * is still decided line by line in trace order.
 */
#ifndef MT_ANALYSIS_H
#define MT_ANALYSIS_H

#include "../model/mt_heap.h"
#include "../model/mt_identity.h"
#include "../model/mt_integrity.h"
#include "../read/mt_reader.h"

typedef struct {
	mt_integrity_t integrity;
	mt_heap_t heap;
	int error_errno;      /* errno of an MT_EIO result */
	uint64_t json_c_lines; /* lines the fast path left to json-c */
	/* trace.start's stack_depth, the most frames the preload kept per
	 * stack; has_stack_depth 0 when line 1 had none (or no integer). */
	uint64_t stack_depth;
	int has_stack_depth;
	/* The program trace.start names (pid, ppid, exe, argv), read from
	 * line 1 in the pass; none when line 1 is no valid trace.start. */
	mt_identity_t identity;
} mt_analysis_t;

/*
 * Read and judge path.  Returns MT_OK (the verdict, valid or not, is in
 * a->integrity), MT_EIO when the file cannot be opened or read
 * (a->error_errno tells why; ENOENT for a missing one), or MT_ENOMEM.
 * Whatever it returns, mt_analysis_release() must follow.
 */
int mt_analysis_run(mt_analysis_t *a, const char *path);

/*
 * An observer sees the heap after each event it applied, in trace order;
 * it must not fail or keep per-event state (`memtrace plot` folds the
 * events into a fixed number of buckets).
 */
typedef void mt_analysis_observer_t(void *ctx, const mt_heap_t *h,
				    const mt_event_t *ev);

/* mt_analysis_run(), calling observe(ctx, ...) after every applied event. */
int mt_analysis_run_observed(mt_analysis_t *a, const char *path,
			     mt_analysis_observer_t *observe, void *ctx);
/*
 * mt_analysis_run_observed() of a file still being written, followed
 * (mt_reader_follow()): where the bytes written so far end, wait(wait_ctx,
 * bytes_read) waits for more and returns 1, or returns 0 to make that the
 * trace's end, which is then judged as any end.  Every event of the lines
 * read before a wait is applied, and observed, when wait is called, so
 * that the heap is the trace's so far.  The reads stay on this thread.
 */
int mt_analysis_run_followed(mt_analysis_t *a, const char *path,
			     mt_analysis_observer_t *observe, void *ctx,
			     mt_reader_wait_t *wait, void *wait_ctx);
/* mt_analysis_run_observed() with the blocks of the allocators named
 * allocator alone in the heap's figures (mt_heap_t.only_allocator; NULL:
 * every allocator's).  The verdict is the whole trace's. */
int mt_analysis_run_allocator(mt_analysis_t *a, const char *path,
			      const char *allocator,
			      mt_analysis_observer_t *observe, void *ctx);
/* The one pass the three above are: allocator and wait as they take them
 * (NULL: none). */
int mt_analysis_run_full(mt_analysis_t *a, const char *path,
			 const char *allocator,
			 mt_analysis_observer_t *observe, void *ctx,
			 mt_reader_wait_t *wait, void *wait_ctx);
void mt_analysis_release(mt_analysis_t *a);

/*
 * How many threads a pass reads and parses with, its own included
 * (mt_ahead): n >= 1, or 0 for the CPUs this process may run on (its
 * affinity mask), the default.  1 reads, decompresses and parses on the
 * pass's thread alone.  A followed trace (mt_analysis_run_followed()) is
 * read on the pass's thread whatever n is.  The outcome is the same for
 * every n.  For the whole process: the CLI sets it from --threads.
 */
void mt_analysis_set_threads(unsigned n);

#endif
