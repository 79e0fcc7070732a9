/*
 * mt_flame: `memtrace flamegraph TRACE --folded [--metric M] [-o FILE]`,
 * the trace's sites as folded stacks, the input of flamegraph.pl,
 * inferno-flamegraph and speedscope: one line a stack, its frames from
 * the outermost to the innermost joined by ';', a space, and the site's
 * figure for the metric:
 *
 *     _start;__libc_start_main;main;parse_config 1
 *
 * Metrics: allocations (calls to allocation functions, the default, as
 * heaptrack_print's), bytes (bytes allocated), leaked (bytes still live at
 * the end), peak (live bytes at the global peak, so that the graph's
 * total is the peak).  A frame is named as the report names it, by the
 * module's symbol (libdw), else the trace's, else
 * "module-file-name+0xoffset", else its ip; ';' and
 * control bytes in a name become '?'.  Stacks whose names fold to the same
 * line (one function calling from two places) are one line with the sum;
 * lines come sorted bytewise, sites with a figure of 0 are left out, and
 * the allocations without a stack are "[no stack]".  A stack of exactly
 * trace.start's stack_depth frames was (most likely) cut by the preload,
 * which keeps the innermost ones: its outermost frame is "[truncated]",
 * so that it does not pass for a root; without a stack_depth none is.
 * Frames are named through mt_srcline's names only (no source lines),
 * each once.
 *
 * Exit statuses are the other commands'; the output is whole or absent.
 *
 * The command line (options, usage, exit statuses) is cmd/flamegraph.c's;
 * this module renders and prints nothing.
 */
#ifndef MT_FLAME_H
#define MT_FLAME_H

#include "../model/mt_analysis.h"
#include "../base/mt_buf.h"
#include "../model/mt_srcline.h"

typedef enum {
	MT_FLAME_ALLOCATIONS,
	MT_FLAME_BYTES,
	MT_FLAME_LEAKED,
	MT_FLAME_PEAK,
} mt_flame_metric_t;

/* Append the folded stacks of a (valid evidence).  MT_OK or MT_ENOMEM
 * (out then as it was). */
int mt_flame_render(const mt_analysis_t *a, mt_flame_metric_t metric,
		    mt_buf_t *out);

/*
 * Append frame f (with id id) named as a folded stack names it: each of
 * its levels (mt_srcline_level_t: the calls inlined there, then its own
 * function), outermost first, joined by ';'; each named as
 * mt_flame_add_level() names it.  MT_OK or MT_ENOMEM (b then as it was).
 */
int mt_flame_add_frame(mt_buf_t *b, mt_srcline_t *lines, uint64_t id,
		       const mt_frame_t *f);

/* How many levels frame f stands for (1 without inlined calls). */
int mt_flame_nlevels(mt_srcline_t *lines, uint64_t id, const mt_frame_t *f,
		     size_t *n);

/*
 * Append level level of frame f (0 the innermost) named as a folded
 * stack names it: its function, else "0xoffset in module-file-name",
 * else its ip; ';' and control bytes as '?'.  `memtrace export` and the
 * html report name their frames through it, so that every view names a
 * frame as the flame graph does.  MT_OK or MT_ENOMEM (b then as it was).
 */
int mt_flame_add_level(mt_buf_t *b, mt_srcline_t *lines, uint64_t id,
		       const mt_frame_t *f, size_t level);

#endif
