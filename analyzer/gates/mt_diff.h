/*
 * mt_diff: run-to-run comparison of two traces or summary files (any
 * mix), as `memtrace diff BASE NEW [--threshold PCT] [--top N] [--json]`
 * runs it (cmd/diff.c).
 *
 * Totals are compared field by field.  Sites are matched by their
 * symbolized stack, never by stack id or address (both change from run to
 * run): the sequence, innermost first, of each frame's symbol and the file
 * name of its module.  Sites of one run whose stacks read the same are
 * added together first.  The changed sites are listed by their change in
 * the figure that regressed, largest first: their part of the peak (the
 * bytes each holds live at its run's peak) when peak_live_bytes did or
 * neither did, live bytes when live_bytes alone did; then the other, then
 * bytes allocated, then allocations.
 *
 * Returns the exit status: 0 when neither peak_live_bytes nor live_bytes
 * (leaked at exit) grew beyond both PCT percent of BASE's and SIZE bytes
 * (defaults 1% and 1 KiB: runs of one program differ by a few bytes;
 * growth from 0 is always beyond), 1 when one did, 2 either input is not valid evidence, 3 one is
 * missing or unreadable, 4 out of memory, 64 usage.  The report is text
 * for people on stdout, or with --json one JSON object on one line;
 * nothing is printed before everything is computed.
 */
#ifndef MT_DIFF_H
#define MT_DIFF_H

#include <stdint.h>

#include "../base/mt_buf.h"
#include "../gates/mt_ci.h"
#include "../gates/mt_profile.h"
#include "../gates/mt_suppress.h"

/* What to compare and how to show it. */
typedef struct {
	const char *base_path, *new_path; /* the runs' names in the report */
	uint64_t threshold; /* growth allowed: thousandths of a percent */
	uint64_t min_growth; /* and bytes: a regression exceeds both */
	uint64_t top;       /* changed sites to list */
	int json;           /* one JSON object instead of text */
	/* What suppressions left out of each run's live figures
	 * (mt_suppress_profile()): BASE, NEW; a line each in the text when
	 * not nothing. */
	mt_suppress_left_t left[2];
} mt_diff_t;

/*
 * Append the comparison of base and now (both evidence) to out, and set
 * *regressed when peak_live_bytes or live_bytes grew beyond the
 * threshold.  MT_OK or MT_ENOMEM.
 */
int mt_diff_render(mt_buf_t *out, const mt_diff_t *o, const mt_profile_t *base,
		   const mt_profile_t *now, int *regressed);

/*
 * The verdict as cases of c (mt_ci), for --junit and --format github: one
 * per deciding figure (peak_live_bytes, live_bytes), failed when it grew
 * beyond the threshold, with the site that grew most in it (the sites' own
 * peaks for peak_live_bytes, live bytes for live_bytes) and that site's
 * source line in NEW; the suite's name ("memtrace diff BASE NEW"), the
 * note lines and the verdict line.  The other totals are shown, never
 * judged, so they are no cases.  MT_OK or MT_ENOMEM.
 */
int mt_diff_ci(mt_ci_t *c, const mt_diff_t *o, const mt_profile_t *base,
	       const mt_profile_t *now);

/* The command (cmd/diff.c); argv[0] is "diff".  Returns the exit status. */
int mt_diff_cmd(int argc, char **argv);

#endif
