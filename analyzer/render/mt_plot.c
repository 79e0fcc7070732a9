/*
 * mt_plot: the heap-over-time SVG.  It must keep its series in fixed
 * memory whatever the trace's length (never a sample per event), never
 * lose the peak to a fold, and write only well-formed, self-contained
 * SVG: every string from outside (the trace's name, the verdict) is
 * escaped, and nothing refers to anything beyond the file.
 */
#include "../render/mt_plot.h"

#include <string.h>

#include "../base/mt_error.h"
#include "../base/mt_mem.h"
#include "../base/mt_units.h"
#include "../render/mt_xml.h"

#define ADD(expr)                     \
	do {                          \
		if ((rc = (expr)))    \
			goto cleanup; \
	} while (0)

/* ---- the series ---- */

static void series_init(mt_plot_series_t *s)
{
	memset(s, 0, sizeof(*s));
}

void mt_plot_curve_init(mt_plot_curve_t *c)
{
	series_init(&c->by_seq);
	series_init(&c->by_t);
	c->heap_events = 0;
	c->timed_events = 0;
}

/* l and r, neighbours, as one bucket; on a tie the earlier sample wins, so
 * the peak stays where it was first reached. */
static mt_plot_bucket_t merge(const mt_plot_bucket_t *l,
			      const mt_plot_bucket_t *r)
{
	mt_plot_bucket_t m;

	if (!r->used)
		return *l;
	if (!l->used)
		return *r;
	m = *l;
	if (r->max > m.max) {
		m.max = r->max;
		m.x_max = r->x_max;
	}
	if (r->bmax > m.bmax) {
		m.bmax = r->bmax;
		m.x_bmax = r->x_bmax;
	}
	m.x_last = r->x_last;
	m.last = r->last;
	m.blast = r->blast;
	return m;
}

static void fold(mt_plot_series_t *s)
{
	/* b[i] is written only after b[2i] and b[2i + 1] are read, and no
	 * later i reads below 2i + 2. */
	for (size_t i = 0; i < MT_PLOT_BUCKETS / 2; i++)
		s->b[i] = merge(&s->b[2 * i], &s->b[2 * i + 1]);
	memset(&s->b[MT_PLOT_BUCKETS / 2], 0,
	       sizeof(s->b[0]) * (MT_PLOT_BUCKETS / 2));
	s->shift++;
}

static void series_add(mt_plot_series_t *s, uint64_t x, uint64_t bytes,
		       uint64_t blocks)
{
	mt_plot_bucket_t *b;

	while ((x >> s->shift) >= MT_PLOT_BUCKETS)
		fold(s);
	b = &s->b[x >> s->shift];
	if (!b->used || bytes > b->max) {
		b->max = bytes;
		b->x_max = x;
	}
	if (!b->used || blocks > b->bmax) {
		b->bmax = blocks;
		b->x_bmax = x;
	}
	b->x_last = x;
	b->last = bytes;
	b->blast = blocks;
	b->used = 1;
	if (x > s->x_end)
		s->x_end = x;
}

void mt_plot_observe(void *ctx, const mt_heap_t *h, const mt_event_t *ev)
{
	mt_plot_curve_t *c = ctx;

	if (!mt_event_kind_moves_heap(ev->kind))
		return;
	c->heap_events++;
	series_add(&c->by_seq, ev->seq, h->live_bytes, h->live_allocations);
	if (ev->has & MT_HAS_T) {
		c->timed_events++;
		series_add(&c->by_t, ev->t, h->live_bytes, h->live_allocations);
	}
}

/* ---- the page ---- */

/* The page, in pixels: the plot area is PLOT_L..PLOT_L+PLOT_W across,
 * PLOT_T..PLOT_T+PLOT_H down. */
#define PAGE_W 880
#define PAGE_H 460
#define PLOT_L 80.0
#define PLOT_T 92.0
#define PLOT_W 720.0
#define PLOT_H 300.0

/*
 * An axis: labels in a unit (bytes in B, KiB...), ticks every step, where
 * step is 1, 2 or 5 times a power of ten tenths of the unit (whole units
 * only for the smallest one).  The axis runs from 0 to end, in the
 * series' own units.
 */
typedef struct {
	uint64_t unit;
	const char *suffix;
	uint64_t step;  /* tenths of the unit */
	uint64_t ticks; /* the last tick's index */
	double end;
} axis_t;

typedef struct {
	const uint64_t *units;
	const char *const *suffix;
	int n;
} scale_t;

static const uint64_t byte_units[] = {
	1, 1024, 1024ull * 1024, 1024ull * 1024 * 1024,
	1024ull * 1024 * 1024 * 1024,
};
static const char *const byte_suffix[] = { " B", " KiB", " MiB", " GiB", " TiB" };
static const uint64_t time_units[] = { 1, 1000, 1000000, 1000000000 };
static const char *const time_suffix[] = { " ns", " us", " ms", " s" };
static const uint64_t count_units[] = { 1 };
static const char *const count_suffix[] = { "" };

static const scale_t bytes_scale = { byte_units, byte_suffix, 5 };
static const scale_t time_scale = { time_units, time_suffix, 4 };
static const scale_t count_scale = { count_units, count_suffix, 1 };

/* Round the axis up to a tick (for values) or stop at max (for x). */
static void axis_make(axis_t *ax, const scale_t *sc, uint64_t max, int want,
		      int round_up)
{
	unsigned __int128 raw, in_tenths;
	uint64_t step = 1;
	int i = 0;

	if (!max)
		max = 1;
	while (i + 1 < sc->n && sc->units[i + 1] <= max)
		i++;
	ax->unit = sc->units[i];
	ax->suffix = sc->suffix[i];
	/* A value axis keeps a twentieth of headroom above its highest
	 * value, so that the curve's top does not run along the frame. */
	in_tenths = (((unsigned __int128)max + (round_up ? (max + 19) / 20 : 0)) * 10 +
		     ax->unit - 1) / ax->unit;
	raw = (in_tenths + (unsigned)want - 1) / (unsigned)want;
	if (ax->unit == 1 && raw < 10)
		raw = 10;
	for (;;) {
		if (step >= raw)
			break;
		if (step * 2 >= raw) {
			step *= 2;
			break;
		}
		if (step * 5 >= raw) {
			step *= 5;
			break;
		}
		step *= 10;
	}
	ax->step = step;
	if (round_up) {
		ax->ticks = (uint64_t)((in_tenths + step - 1) / step);
		ax->end = (double)ax->ticks * (double)step / 10.0 * (double)ax->unit;
	} else {
		ax->ticks = (uint64_t)((unsigned __int128)max * 10 / ax->unit / step);
		ax->end = (double)max;
	}
}

/* The label of tick k, in the axis's one unit, 0 included ("0 s",
 * "0.5 s", "1 s"): a tenth only where the tick has one. */
static int add_tick_label(mt_buf_t *b, const axis_t *ax, uint64_t k)
{
	uint64_t tenths = k * ax->step;

	if (tenths % 10)
		return mt_buf_addf(b, "%llu.%llu%s", (unsigned long long)(tenths / 10),
			    (unsigned long long)(tenths % 10), ax->suffix);
	return mt_buf_addf(b, "%llu%s", (unsigned long long)(tenths / 10), ax->suffix);
}

static double tick_value(const axis_t *ax, uint64_t k)
{
	return (double)k * (double)ax->step / 10.0 * (double)ax->unit;
}

/* ---- the curves ---- */

/*
 * A pen draws a curve's points on the page, in pixels through the axes:
 * never the figures themselves, which reach billions of ns under a scale
 * near 1e-7 (Chromium stopped filling such a path part way).
 */
typedef struct {
	mt_buf_t *b;
	const axis_t *ax, *ay;
	uint64_t x, y;
	int any;
} pen_t;

static int pen_to(pen_t *p, uint64_t x, uint64_t y)
{
	const char *sep = p->any ? " " : "";
	int rc;

	if (p->any && p->x == x && p->y == y)
		return MT_OK;
	rc = mt_buf_addf(p->b, "%s%.2f,%.2f", sep,
		  PLOT_L + (double)x / p->ax->end * PLOT_W,
		  PLOT_T + PLOT_H - (double)y / p->ay->end * PLOT_H);
	p->any = 1;
	p->x = x;
	p->y = y;
	return rc;
}

/* A step: level y from x on. */
static int pen_step(pen_t *p, uint64_t x, uint64_t y)
{
	int rc = pen_to(p, x, p->y);

	return rc ? rc : pen_to(p, x, y);
}

/* The points of a curve, live bytes or (blocks set) live blocks: from
 * (0, 0), in each bucket a step to its highest sample and one to its last,
 * in the order of their x, and at the end level to the last x. */
static int add_points(mt_buf_t *b, const mt_plot_series_t *s, int blocks,
		      const axis_t *ax, const axis_t *ay)
{
	pen_t p = { b, ax, ay, 0, 0, 0 };
	int rc;

	ADD(pen_to(&p, 0, 0));
	for (size_t i = 0; i < MT_PLOT_BUCKETS; i++) {
		const mt_plot_bucket_t *k = &s->b[i];
		uint64_t xm = blocks ? k->x_bmax : k->x_max;
		uint64_t m = blocks ? k->bmax : k->max;
		uint64_t last = blocks ? k->blast : k->last;

		if (!k->used)
			continue;
		if (xm <= k->x_last) {
			ADD(pen_step(&p, xm, m));
			ADD(pen_step(&p, k->x_last, last));
		} else {
			ADD(pen_step(&p, k->x_last, last));
			ADD(pen_step(&p, xm, m));
		}
	}
	ADD(pen_step(&p, s->x_end, p.y));
cleanup:
	return rc;
}

/* ---- the page's parts ---- */

static int add_text(mt_buf_t *b, double x, double y, const char *attrs,
		    const char *text)
{
	int rc;

	if ((rc = mt_buf_addf(b, "<text x=\"%.1f\" y=\"%.1f\"%s>", x, y, attrs)) ||
	    (rc = mt_xml_add_text(b, text, strlen(text), 0)))
		return rc;
	return mt_buf_add_str(b, "</text>\n");
}

static int add_line(mt_buf_t *b, double x1, double y1, double x2, double y2,
		    const char *attrs)
{
	return mt_buf_addf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"%s/>\n",
		    x1, y1, x2, y2, attrs);
}

/* The y of value v on an axis. */
static double y_of(const axis_t *a, double v)
{
	return PLOT_T + PLOT_H - v / a->end * PLOT_H;
}

static int add_axes(mt_buf_t *b, const axis_t *ax, const axis_t *ay,
		    const axis_t *ab, int timed)
{
	const double right = PLOT_L + PLOT_W, bottom = PLOT_T + PLOT_H;
	mt_buf_t label = MT_BUF_INIT;
	int rc;

	ADD(mt_buf_addf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		    "fill=\"none\" stroke=\"#999999\"/>\n",
		 PLOT_L, PLOT_T, PLOT_W, PLOT_H));
	ADD(mt_buf_add_str(b, "<g font-family=\"sans-serif\" font-size=\"11\" "
			      "fill=\"#333333\">\n"));
	for (uint64_t k = 0; k <= ay->ticks; k++) {
		double y = y_of(ay, tick_value(ay, k));

		if (k)
			ADD(add_line(b, PLOT_L, y, right, y, " stroke=\"#e4e4e4\""));
		mt_buf_reset(&label);
		ADD(add_tick_label(&label, ay, k));
		ADD(add_text(b, PLOT_L - 6, y + 4, " text-anchor=\"end\"", label.data));
	}
	for (uint64_t k = 0; k <= ab->ticks; k++) {
		mt_buf_reset(&label);
		ADD(add_tick_label(&label, ab, k));
		ADD(add_text(b, right + 6, y_of(ab, tick_value(ab, k)) + 4, "",
			     label.data));
	}
	for (uint64_t k = 0; k <= ax->ticks; k++) {
		double x = PLOT_L + tick_value(ax, k) / ax->end * PLOT_W;

		ADD(add_line(b, x, bottom, x, bottom + 4, " stroke=\"#999999\""));
		mt_buf_reset(&label);
		ADD(add_tick_label(&label, ax, k));
		ADD(add_text(b, x, bottom + 17, " text-anchor=\"middle\"", label.data));
	}
	ADD(add_text(b, PLOT_L + PLOT_W / 2, bottom + 36,
		     " text-anchor=\"middle\" font-size=\"12\"",
		     timed ? "time since the trace started" :
			     "event sequence number (the trace has no time for "
			     "every event)"));
	ADD(mt_buf_addf(b, "<text x=\"0\" y=\"0\" transform=\"translate(22 %.1f) "
		    "rotate(-90)\" text-anchor=\"middle\" font-size=\"12\" "
		    "fill=\"#1f5fa8\">live heap</text>\n", PLOT_T + PLOT_H / 2));
	ADD(mt_buf_addf(b, "<text x=\"0\" y=\"0\" transform=\"translate(%.1f %.1f) "
		    "rotate(90)\" text-anchor=\"middle\" font-size=\"12\" "
		    "fill=\"#c05a00\">live blocks</text>\n",
		 (double)PAGE_W - 18, PLOT_T + PLOT_H / 2));
	/* The legend, under the x axis. */
	ADD(add_line(b, PLOT_L, bottom + 54, PLOT_L + 20, bottom + 54,
		     " stroke=\"#1f5fa8\" stroke-width=\"2\""));
	ADD(add_text(b, PLOT_L + 26, bottom + 58, " font-size=\"12\"",
		     "live heap (bytes, left)"));
	ADD(add_line(b, PLOT_L + 190, bottom + 54, PLOT_L + 210, bottom + 54,
		     " stroke=\"#c05a00\" stroke-width=\"1\""));
	ADD(add_text(b, PLOT_L + 216, bottom + 58, " font-size=\"12\"",
		     "live blocks (right)"));
	ADD(mt_buf_add_str(b, "</g>\n"));
cleanup:
	mt_buf_release(&label);
	return rc;
}

static int add_header(mt_buf_t *b, const mt_analysis_t *a, const char *name)
{
	const mt_heap_t *h = &a->heap;
	const mt_integrity_t *ig = &a->integrity;
	mt_buf_t line = MT_BUF_INIT;
	int rc, sampled = h->sample_bytes != 0;

	ADD(mt_buf_add_str(&line, "Live heap of "));
	ADD(mt_buf_add_str(&line, name));
	ADD(mt_buf_add_str(b, "<title>"));
	ADD(mt_xml_add_text(b, line.data, line.len, 0));
	ADD(mt_buf_add_str(b, "</title>\n"));
	ADD(add_text(b, PLOT_L, 24, " font-family=\"sans-serif\" font-size=\"16\" "
			       "font-weight=\"bold\" fill=\"#222222\"", line.data));

	mt_buf_reset(&line);
	/* A sampled trace's figures each with its standard error. */
	if (h->peak_live_bytes) {
		ADD(mt_buf_add_str(&line, "peak "));
		ADD(mt_units_add_size(&line, h->peak_live_bytes));
		if (sampled)
			ADD(mt_units_add_pm_size(&line, mt_sampling_stderr(h->var.peak_live_bytes)));
		ADD(mt_buf_add_str(&line, " (seq "));
		ADD(mt_buf_add_u64(&line, h->peak_seq));
		ADD(mt_buf_add_str(&line, "), "));
		ADD(mt_units_add_size(&line, h->live_bytes));
		if (sampled)
			ADD(mt_units_add_pm_size(&line, mt_sampling_stderr(h->var.live_bytes)));
		ADD(mt_buf_add_str(&line, " live at the end; "));
	}
	ADD(mt_buf_add_u64(&line, h->allocations));
	if (sampled)
		ADD(mt_units_add_pm_count(&line, mt_sampling_stderr(h->var.allocations)));
	ADD(mt_buf_add_str(&line, h->allocations == 1 ? " allocation, " : " allocations, "));
	ADD(mt_buf_add_u64(&line, h->frees));
	if (sampled)
		ADD(mt_units_add_pm_count(&line, mt_sampling_stderr(h->var.frees)));
	ADD(mt_buf_add_str(&line, h->frees == 1 ? " free" : " frees"));
	if (h->duration_ns) {
		ADD(mt_buf_add_str(&line, " in "));
		ADD(mt_units_add_duration(&line, h->duration_ns));
	}
	/* A sampled trace's curve and figures are estimates (format.md 2.1). */
	if (h->sample_bytes) {
		ADD(mt_buf_add_str(&line, "; estimates, one allocation sampled per "));
		ADD(mt_units_add_size(&line, h->sample_bytes));
	}
	ADD(add_text(b, PLOT_L, 44, " font-family=\"sans-serif\" font-size=\"12\" "
			       "fill=\"#333333\"", line.data));

	if (mt_integrity_complete(ig)) {
		ADD(add_text(b, PLOT_L, 62, " font-family=\"sans-serif\" font-size=\"12\" "
				       "fill=\"#2e7d32\"", "complete trace"));
	} else {
		mt_buf_reset(&line);
		ADD(mt_buf_add_str(&line, "CAVEATED trace ("));
		ADD(mt_buf_add_str(&line, mt_integrity_status(ig)));
		ADD(mt_buf_add_str(&line, "): the curve shows only what it recorded"));
		ADD(add_text(b, PLOT_L, 62, " font-family=\"sans-serif\" font-size=\"12\" "
				       "font-weight=\"bold\" fill=\"#b00020\"", line.data));
		/* The sentence on a line of its own (at most 240 bytes: it
		 * can run past the page only when the trace is very odd;
		 * the report and `check` have it whole anyway). */
		ADD(add_text(b, PLOT_L, 78, " font-family=\"sans-serif\" font-size=\"11\" "
				       "fill=\"#b00020\"", mt_integrity_message(ig)));
	}
cleanup:
	mt_buf_release(&line);
	return rc;
}

/* The x where the series first reaches peak (the peak's bucket keeps it). */
static uint64_t peak_x(const mt_plot_series_t *s, uint64_t peak)
{
	for (size_t i = 0; i < MT_PLOT_BUCKETS; i++)
		if (s->b[i].used && s->b[i].max == peak)
			return s->b[i].x_max;
	return 0;
}

static int add_peak(mt_buf_t *b, const mt_analysis_t *a,
		    const mt_plot_series_t *s, const axis_t *ax,
		    const axis_t *ay, int timed)
{
	const mt_heap_t *h = &a->heap;
	uint64_t x = peak_x(s, h->peak_live_bytes);
	double px = PLOT_L + (double)x / ax->end * PLOT_W;
	double py = PLOT_T + PLOT_H - (double)h->peak_live_bytes / ay->end * PLOT_H;
	mt_buf_t label = MT_BUF_INIT;
	int right = px < PLOT_L + PLOT_W / 2;
	int rc;

	ADD(mt_buf_add_str(&label, "peak "));
	ADD(mt_units_add_size(&label, h->peak_live_bytes));
	if (timed) {
		ADD(mt_buf_add_str(&label, " at "));
		ADD(mt_units_add_duration(&label, x));
		ADD(mt_buf_add_str(&label, " (seq "));
		ADD(mt_buf_add_u64(&label, h->peak_seq));
		ADD(mt_buf_add_str(&label, ")"));
	} else {
		ADD(mt_buf_add_str(&label, " at seq "));
		ADD(mt_buf_add_u64(&label, x));
	}
	ADD(mt_buf_addf(b, "<circle id=\"peak\" cx=\"%.2f\" cy=\"%.2f\" r=\"4\" "
		    "fill=\"#d62728\" stroke=\"white\" stroke-width=\"1\"/>\n", px, py));
	/* A white halo keeps the label legible over the curves; it goes
	 * under the point when above it would leave the plot area. */
	ADD(add_text(b, right ? px + 8 : px - 8, py - 7 < PLOT_T + 12 ? py + 16 : py - 7,
		     right ? " font-family=\"sans-serif\" font-size=\"12\" "
			     "font-weight=\"bold\" fill=\"#d62728\" stroke=\"white\" "
			     "stroke-width=\"3\" paint-order=\"stroke\"" :
			     " font-family=\"sans-serif\" font-size=\"12\" "
			     "font-weight=\"bold\" fill=\"#d62728\" stroke=\"white\" "
			     "stroke-width=\"3\" paint-order=\"stroke\" text-anchor=\"end\"",
		     label.data));
cleanup:
	mt_buf_release(&label);
	return rc;
}

int mt_plot_render(const mt_analysis_t *a, const mt_plot_curve_t *c,
		   const char *name, mt_buf_t *out)
{
	const mt_heap_t *h = &a->heap;
	int timed = c->heap_events && c->timed_events == c->heap_events &&
		    c->by_t.x_end > 0;
	const mt_plot_series_t *s = timed ? &c->by_t : &c->by_seq;
	axis_t ax, ay, ab;
	size_t mark = out->len;
	int rc;

	axis_make(&ax, timed ? &time_scale : &count_scale, s->x_end, 8, 0);
	axis_make(&ay, &bytes_scale, h->peak_live_bytes, 5, 1);
	axis_make(&ab, &count_scale, h->peak_live_allocations, 5, 1);

	ADD(mt_buf_addf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
		      "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n",
		 PAGE_W, PAGE_H, PAGE_W, PAGE_H));
	ADD(mt_buf_add_str(out, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"));
	ADD(add_header(out, a, name));
	ADD(add_axes(out, &ax, &ay, &ab, timed));
	if (!c->heap_events) {
		ADD(add_text(out, PLOT_L + PLOT_W / 2, PLOT_T + PLOT_H / 2,
			     " font-family=\"sans-serif\" font-size=\"14\" "
			     "text-anchor=\"middle\" fill=\"#666666\"",
			     "no allocation or free in this trace"));
		goto end;
	}
	/*
	 * The area under the live bytes is the line's points, in pixels, and
	 * the plot's bottom-right corner.  It once held the figures (ns,
	 * bytes) under a transform onto the plot area; Chromium stopped
	 * filling that path of coordinates in the billions (a run of 4.1 s
	 * filled to 2.45 s), and a stroke is distorted by a transform's
	 * unequal scales anyway.  The figures at the plot area's right and
	 * top edges stay in the file (data-x-end, data-y-end), so a reader
	 * can turn pixels back into them.
	 */
	ADD(mt_buf_addf(out, "<polygon id=\"live-bytes-area\" data-x-end=\"%llu\" "
		      "data-y-end=\"%.17g\" fill=\"#1f5fa8\" "
		      "fill-opacity=\"0.15\" stroke=\"none\" points=\"",
		 (unsigned long long)s->x_end, ay.end));
	ADD(add_points(out, s, 0, &ax, &ay));
	ADD(mt_buf_addf(out, " %.2f,%.2f\"/>\n", PLOT_L + PLOT_W, PLOT_T + PLOT_H));
	ADD(mt_buf_add_str(out, "<polyline id=\"live-blocks\" fill=\"none\" "
				"stroke=\"#c05a00\" stroke-width=\"1\" "
				"stroke-opacity=\"0.8\" points=\""));
	ADD(add_points(out, s, 1, &ax, &ab));
	ADD(mt_buf_add_str(out, "\"/>\n"));
	ADD(mt_buf_add_str(out, "<polyline id=\"live-bytes\" fill=\"none\" "
				"stroke=\"#1f5fa8\" stroke-width=\"2\" "
				"stroke-linejoin=\"round\" points=\""));
	ADD(add_points(out, s, 0, &ax, &ay));
	ADD(mt_buf_add_str(out, "\"/>\n"));
	ADD(add_peak(out, a, s, &ax, &ay, timed));
end:
	ADD(mt_buf_add_str(out, "</svg>\n"));
cleanup:
	if (rc)
		mt_buf_truncate(out, mark);
	return rc;
}
