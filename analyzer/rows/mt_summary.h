/*
 * mt_summary: renders an analysis as the rows of format.md section 4: the
 * summary line, the site lines, and the verdict line of `memtrace check`.
 *
 * Invariants: fields appear in format.md's order; every line ends in '\n'
 * and is at most MT_SUMMARY_LINE_MAX bytes, the '\n' included; on any
 * error nothing is appended to out.
 */
#ifndef MT_SUMMARY_H
#define MT_SUMMARY_H

#include <stdint.h>

#include "../model/mt_analysis.h"
#include "../base/mt_buf.h"

/* The seed's max_repetition_row_bytes. */
#define MT_SUMMARY_LINE_MAX 8192

/*
 * Append the summary line and up to top site lines (top = 0: the summary
 * line alone).  Returns MT_OK, MT_ENOMEM, or MT_ETOOLONG when the summary
 * line cannot fit in MT_SUMMARY_LINE_MAX bytes (a site line is shortened
 * instead: its outermost frames are left out and counted in
 * "frames_omitted").  The analysis must be valid evidence.
 */
int mt_summary_render(const mt_analysis_t *a, uint64_t top,
		      int include_zero_live, mt_buf_t *out);

/* Append `memtrace check`'s line: status, message, caveats. */
int mt_summary_render_check(const mt_analysis_t *a, mt_buf_t *out);

#endif
