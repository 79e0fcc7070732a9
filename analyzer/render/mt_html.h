/*
 * mt_html: `memtrace html TRACE [-o FILE] [--strict]`, the trace as one
 * self-contained HTML page to explore in a browser, titled with the
 * program the trace names (mt_identity; else the trace's name): the
 * integrity verdict first, the totals, live bytes and blocks over time (readouts under the
 * pointer, a range to select), an icicle flame graph by allocation calls,
 * bytes allocated, peak contribution or bytes leaked (click to zoom,
 * search to highlight), sortable tables of the top sites, and a site's
 * stack with file:line and its own live bytes over time.
 *
 * The page is the script and the style sheet of analyzer/render/html/
 * (embedded in the binary at build time, mt_html_assets.S) and the data,
 * one JSON object in <script type="application/json" id="memtrace-data">,
 * every '<' in it written \u003c so that no string from the trace can end
 * the element.  Nothing in the page refers to anything outside it: no URL,
 * no font, no src=.  Its size is bounded whatever the trace's length
 * (MT_HTML_MAX_BYTES): the time series has at most MT_PLOT_BUCKETS
 * buckets, a site's series MT_HTML_SITE_POINTS, the tables the top sites
 * by each figure, the flame graph the nodes that hold at least 1/1000 of
 * some figure's total, at most a node budget of them, and names are cut
 * at a byte budget; when a page still comes out too big, the budgets are
 * halved until it fits.
 *
 * The data's "totals" are the heap's figures under the summary row's
 * names (format.md section 4), so they equal `memtrace summary`'s.
 *
 * The global series is kept in the pass (mt_html_observe, in fixed
 * memory, as mt_plot's); the sites' own series need to know the sites
 * first, so mt_html_render() reads the trace a second time for them, in
 * fixed memory too (at most MT_HTML_SERIES_SITES sites).  A trace read
 * from standard input cannot be read twice: its page has no site series,
 * and says so.
 *
 * The command line (options, usage, exit statuses) is cmd/html.c's; this
 * module renders and prints nothing.
 */
#ifndef MT_HTML_H
#define MT_HTML_H

#include <stdint.h>

#include "../model/mt_analysis.h"
#include "../model/mt_label.h"
#include "../base/mt_buf.h"
#include "../render/mt_plot.h"
#include "../gates/mt_suppress.h"

/* The most bytes a page may have. */
#define MT_HTML_MAX_BYTES (5u << 20)
/* The sites that get a series of their own, and its points. */
#define MT_HTML_SERIES_SITES 32
#define MT_HTML_SITE_POINTS 128

/* What the pass keeps for the page: the global series. */
typedef struct {
	mt_plot_curve_t curve;
} mt_html_pass_t;

void mt_html_pass_init(mt_html_pass_t *p);

/* An mt_analysis_observer_t: ctx is an mt_html_pass_t. */
void mt_html_observe(void *ctx, const mt_heap_t *h, const mt_event_t *ev);

/*
 * Append the page of a (valid evidence, analyzed with mt_html_observe on
 * p) to out, the sites supp matches leaking nothing (mt_suppress.h).
 * path is the trace's path ("-": standard input, read once
 * only), read again for the sites' series; name titles the page.  A
 * second read that fails leaves the series out.  MT_OK or MT_ENOMEM (out
 * as it was).
 */
int mt_html_render(const mt_analysis_t *a, const mt_html_pass_t *p,
		   const mt_suppress_t *supp, const char *path, const char *name,
		   mt_buf_t *out);

/* mt_html_render(), each site named as labels (--alloc-fn; NULL for
 * none) tells mt_label, as the report names it. */
int mt_html_render_labelled(const mt_analysis_t *a, const mt_html_pass_t *p,
			    const mt_suppress_t *supp,
			    const mt_label_opts_t *labels, const char *path,
			    const char *name, mt_buf_t *out);

#endif
