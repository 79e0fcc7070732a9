/*
 * mt_analysis: one streaming pass over a trace file, judging its integrity
 * (mt_integrity) and rebuilding its heap (mt_heap) line by line.
 *
 * Memory is bounded by the reader's buffers plus the heap's tables: the
 * pass never keeps a line once the next one is read.  It parses block
 * events ahead of applying them (their events, not their lines): up to 16
 * on one thread, so their cache misses overlap, or batches of 1024 that a
 * second thread applies while the first parses on (mt_pipe; when the
 * process may use two CPUs, see mt_analysis.c).  What it reports is still
 * decided line by line in trace order, the same either way.
 *
 * Observers are called on the second thread for the events it applies,
 * never on two threads at once; a block event seen there carries its
 * kind, seq, allocator_id, ptr, new_ptr, size, stack, tid and t, and of
 * has only the bits of stack, tid and t (its fn and align stay behind:
 * no observer reads them).
 */
#ifndef MT_ANALYSIS_H
#define MT_ANALYSIS_H

#include "mt_heap.h"
#include "mt_integrity.h"

typedef struct {
	mt_integrity_t integrity;
	mt_heap_t heap;
	int error_errno;      /* errno of an MT_EIO result */
	uint64_t json_c_lines; /* lines the fast path left to json-c */
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
void mt_analysis_release(mt_analysis_t *a);

/*
 * The threads a pass uses: 1 or 2 when env (MEMTRACE_ANALYZER_THREADS)
 * says "1" or "2"; else 1 when the process may run on one CPU only, and
 * MT_ANALYSIS_TIMED when it may run on two or more: two threads, whose
 * pass times itself on one and on two as it goes and runs the faster way
 * (mt_analysis.c).  The allocations a command makes (the second thread's
 * ring and read buffer) follow from env and the CPUs alone, never from
 * the timing or the load, so an allocation sweep (MEMTRACE_ANALYZER_FAIL_AT)
 * meets the same ones on every run.
 */
#define MT_ANALYSIS_TIMED 3
int mt_analysis_choose_threads(const char *env, int cpus);

/* For tests: the timed pass's schedule, in events (probe: each way's
 * probe; keep: the faster way's run after it), and every pass not told
 * its threads is timed, as on two CPUs; probe 0 restores the defaults
 * and the CPUs' say.  Not thread-safe. */
void mt_analysis_test_schedule(uint64_t probe, uint64_t keep);

#endif
