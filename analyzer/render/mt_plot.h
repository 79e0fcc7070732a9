/*
 * mt_plot: `memtrace plot TRACE [-o heap.svg] [--strict]`, the heap over
 * time as a self-contained SVG: live bytes as a step curve (the left
 * axis), live blocks on a second axis (the right one), the peak marked
 * and labelled, axes in human units, the integrity verdict in the
 * subtitle.  It has no script, no style sheet, no font and no link to
 * fetch: any browser renders it offline.
 *
 * The x axis is the time since trace.start when every heap event of the
 * trace has a "t", else the event sequence number.  The series is kept in
 * one pass and fixed memory (mt_plot_curve_t): MT_PLOT_BUCKETS buckets
 * over x, each keeping its highest sample and its last, and two
 * neighbours fold into one, doubling the width, whenever an x falls past
 * the last bucket.  A bucket's highest sample survives every fold, so the
 * curve's highest point is the trace's peak_live_bytes exactly, at the
 * first x it was reached.
 *
 * Every shape is drawn in page coordinates (pixels of the viewBox, x
 * from the series' x, y from bytes or blocks), never under a transform:
 * the polyline with id "live-bytes" has the points of the live-bytes
 * curve, the polygon "live-bytes-area" the same points closed along the
 * plot's bottom, "live-blocks" those of the live-blocks curve, and the
 * circle "peak" sits at the peak's place.  The area's data-x-end and
 * data-y-end are the figures (ns or seq, bytes) at the plot area's right
 * and top edges, so a reader can turn its pixels back into figures.
 *
 * Exit statuses are the other commands'; the SVG is written whole or not
 * at all (to -o FILE, else standard output).
 *
 * The command line (options, usage, exit statuses) is cmd/plot.c's;
 * this module renders and prints nothing.
 */
#ifndef MT_PLOT_H
#define MT_PLOT_H

#include <stdint.h>

#include "../model/mt_analysis.h"
#include "../base/mt_buf.h"

#define MT_PLOT_BUCKETS 512

typedef struct {
	uint64_t x_max, max;    /* the highest live bytes, and its x */
	uint64_t x_bmax, bmax;  /* the most live blocks, and its x */
	uint64_t x_last, last, blast; /* the bucket's last sample */
	int used;
} mt_plot_bucket_t;

typedef struct {
	mt_plot_bucket_t b[MT_PLOT_BUCKETS];
	unsigned shift;  /* a bucket is 2^shift units of x wide */
	uint64_t x_end;  /* the highest x seen */
} mt_plot_series_t;

typedef struct {
	mt_plot_series_t by_seq, by_t;
	uint64_t heap_events, timed_events;
} mt_plot_curve_t;

void mt_plot_curve_init(mt_plot_curve_t *c);

/* An mt_analysis_observer_t: ctx is an mt_plot_curve_t. */
void mt_plot_observe(void *ctx, const mt_heap_t *h, const mt_event_t *ev);

/* Append the SVG of a (valid evidence, analyzed with mt_plot_observe on
 * c) to out, titled with name.  MT_OK or MT_ENOMEM (out as it was). */
int mt_plot_render(const mt_analysis_t *a, const mt_plot_curve_t *c,
		   const char *name, mt_buf_t *out);

#endif
