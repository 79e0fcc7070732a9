/*
 * mt_top: one view of `memtrace top`, the figures of a heap being rebuilt
 * from a growing trace: its state, live bytes, peak, bytes allocated,
 * the allocation rate since the last view, and the top sites by live
 * bytes, each named by its stack id and its label, the one the report
 * gives it (mt_label, among every site of the heap).  In a sampled trace
 * each total is followed by its standard error ("+- 1.0 MiB",
 * mt_sampling).  Sizes are written as the report writes
 * them: "3.0 MiB (3145728 bytes)", and below 1 KiB "512 B".
 *
 * The rate is measured in the trace's own time (its events' t), not the
 * wall clock's, from the last view's last event to this one's: a view of
 * a trace read behind its writer shows what the program did, not how fast
 * it was read.  A view with no new event repeats the last rate (the
 * writer has not flushed since); one whose events record no time says
 * so.
 *
 * The view is plain text, one figure a line; on a terminal the caller
 * draws it in place (mt_top_frame()).  It never prints, and renders
 * whole or not at all.
 *
 * Invariant: the heap given to each view is the same one, rebuilt further
 * (its frames live as long as t, which keeps their names).
 */
#ifndef MT_TOP_H
#define MT_TOP_H

#include <stdint.h>

#include "../base/mt_buf.h"
#include "../model/mt_heap.h"
#include "../model/mt_integrity.h"
#include "../model/mt_label.h"
#include "../model/mt_srcline.h"

typedef enum {
	MT_TOP_RUNNING,  /* the trace is being written */
	MT_TOP_WRITTEN,  /* --once: as far as it is written */
	MT_TOP_STOPPED,  /* trace.stop was read */
	MT_TOP_GONE,     /* the process is gone without trace.stop */
	MT_TOP_TIMEOUT,  /* no byte came for --timeout */
} mt_top_state_t;

typedef struct {
	const char *name; /* the trace, as given */
	int64_t pid;      /* trace.start's, or 0 */
	uint64_t top;     /* sites listed */
	/* --alloc-fn's patterns for the sites' labels (NULL: none); the
	 * caller's, kept as long as t. */
	const mt_label_opts_t *labels;
	mt_srcline_t lines;
	/* The last view's figures, for the rate. */
	uint64_t bytes_allocated, allocations, duration_ns;
	/* The last rate measured: over rate_ns of the trace. */
	uint64_t rate_bytes, rate_allocations, rate_ns;
	uint64_t views;
	char stop_reason[24]; /* trace.stop's reason, or "" */
} mt_top_t;

void mt_top_init(mt_top_t *t, const char *name, int64_t pid, uint64_t top);
void mt_top_release(mt_top_t *t);

/* Keep trace.stop's reason (len bytes at s) for the views. */
void mt_top_stop_reason(mt_top_t *t, const char *s, size_t len);

/*
 * Append a view of h in state to out.  ig, at the end only, is the
 * trace's verdict, said after the figures (NULL while it runs).  MT_OK or
 * MT_ENOMEM (out as it was).
 */
int mt_top_render(mt_top_t *t, const mt_heap_t *h, mt_top_state_t state,
		  const mt_integrity_t *ig, mt_buf_t *out);

/*
 * Make view into what a terminal of cols columns and rows rows redraws in
 * place: cursor home, each line cut to cols - 1 columns and its rest
 * cleared, at most rows - 1 lines, then the rest of the screen cleared
 * (ANSI).  MT_OK or MT_ENOMEM (out as it was).
 */
int mt_top_frame(const mt_buf_t *view, unsigned cols, unsigned rows,
		 mt_buf_t *out);

#endif
