/*
 * mt_report: `memtrace report TRACE [--top N] [--strict] [-o FILE]`, the
 * report people read, in the manner of heaptrack_print: under its title
 * the program the trace names (mt_identity), then the integrity verdict
 * first, in words (a caveated trace says so before any figure),
 * the totals in human units, then the top N sites by peak contribution,
 * by bytes leaked, by calls and by temporary allocations, each with its
 * whole stack, one frame a line, "function at file:line in module" where
 * the module's debug information tells (mt_srcline).
 *
 * A site is a stack, as in the summary rows.  Each list holds the sites
 * whose figure for it is not 0, ranked by that figure, then bytes
 * allocated, then stack id.
 *
 * Exit statuses are the other commands': 0, 1 (a caveated trace, only
 * with --strict), 2, 3, 4, 64, 73; the report is written whole or not at
 * all.
 *
 * The command line (options, usage, exit statuses) is cmd/report.c's;
 * this module renders and prints nothing.
 */
#ifndef MT_REPORT_H
#define MT_REPORT_H

#include <stdint.h>

#include "../model/mt_analysis.h"
#include "../base/mt_buf.h"
#include "../gates/mt_suppress.h"
#include "../model/mt_label.h"

/*
 * Append the report of a (valid evidence) to out, naming the trace as
 * name.  The sites whose stack supp matches (a frame's symbol in the
 * trace or in the module's debug information, or its module) are left
 * out of what is leaked: the "leaked" total, the "Leaked" list and each
 * site's "leaked" figure; a "left out" line under the total counts them.
 * Every other figure is the trace's.  MT_OK or MT_ENOMEM (out then as it
 * was).
 */
int mt_report_render(const mt_analysis_t *a, const char *name, uint64_t top,
		     const mt_suppress_t *supp, mt_buf_t *out);

/* mt_report_render(), each site named as labels (--alloc-fn; NULL for
 * none) tells mt_label. */
int mt_report_render_labelled(const mt_analysis_t *a, const char *name,
			      uint64_t top, const mt_suppress_t *supp,
			      const mt_label_opts_t *labels, mt_buf_t *out);

#endif
