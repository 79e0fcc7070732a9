/*
 * mt_tree: the traces of a process tree (the workload, its children, the
 * images they exec, each a trace of its own) summed into one line, and a
 * line per process: `memtrace tree TRACE...`, and memtrace-run's line and
 * table for a run that left more than one trace.
 *
 * Sums: every count and byte figure is the sum of the processes'.
 * peak_live_bytes is the sum of each process's own peak: what the tree
 * would hold if every process peaked at once, an upper bound (the
 * processes of a tree rarely peak together, and the traces hold no common
 * clock to say when they did).  A trace that is not valid evidence is
 * counted in `invalid` and adds nothing.  The tree's status is "complete"
 * when every trace is, else the status of the first trace (in the order
 * added) that is not, which `trace` names.
 */
#ifndef MT_TREE_H
#define MT_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "../model/mt_analysis.h"
#include "../base/mt_buf.h"

typedef struct {
	uint64_t processes, complete, caveated, invalid;
	uint64_t events, allocations, frees, resizes, remaps;
	uint64_t failed_allocations, unknown_frees;
	uint64_t bytes_allocated, bytes_freed, live_allocations, live_bytes;
	uint64_t peak_live_bytes, temporary_allocations;
	/* Of sampled processes (sampled counts them): the variances of
	 * allocations and of peak_live_bytes, summed, for the processes are
	 * sampled independently (mt_sampling). */
	uint64_t sampled;
	mt_sampling_var_t var_allocations, var_peak;
	/* The first trace not complete, and its status; NULL: none.  The
	 * caller's strings, which must outlive the tree. */
	const char *trace;
	const char *status;
} mt_tree_t;

#define MT_TREE_INIT { 0 }

/* Add the process whose trace at path a has analyzed. */
void mt_tree_add(mt_tree_t *t, const char *path, const mt_analysis_t *a);

/* The tree's line, memtrace.tree/v1, with its newline.  Returns 0 or
 * MT_ENOMEM. */
int mt_tree_render(const mt_tree_t *t, mt_buf_t *out);

/* One process's line, memtrace.process/v1, with its newline: its trace,
 * the program trace.start names (pid, ppid, exe, argv: null when it does
 * not say), status and figures, or for a trace that is not valid
 * evidence, the message that says why. */
int mt_tree_render_process(const char *path, const mt_analysis_t *a,
			   mt_buf_t *out);

/*
 * The tree for a person (`memtrace tree`'s default): the tree's line, then
 * a line per process, "PROGRAM ARGS (pid N, parent M): figures  TRACE",
 * each child under its parent, indented: a trace whose pid an earlier
 * one had is the image that one exec'd ("exec " before it), else one
 * whose pid is its ppid is its parent, else it is a root.  Earlier is by
 * trace.start's time_ns when every trace has one, else in the order
 * added.  It keeps a few figures and the program's text per process,
 * never an analysis.
 */
typedef struct mt_tree_proc mt_tree_proc_t;

typedef struct {
	mt_tree_proc_t *procs;
	size_t n, cap;
	mt_buf_t text; /* the processes' texts, each ending in a NUL */
} mt_tree_view_t;

#define MT_TREE_VIEW_INIT { NULL, 0, 0, MT_BUF_INIT }

/* Add the process whose trace at path (the caller's, which must outlive
 * the view) a has analyzed.  MT_OK or MT_ENOMEM (v as it was). */
int mt_tree_view_add(mt_tree_view_t *v, const char *path,
		     const mt_analysis_t *a);

/* The tree t (the same processes, summed) and its processes, as above.
 * MT_OK or MT_ENOMEM (out as it was). */
int mt_tree_view_render(const mt_tree_view_t *v, const mt_tree_t *t,
			mt_buf_t *out);

void mt_tree_view_release(mt_tree_view_t *v);

#endif
