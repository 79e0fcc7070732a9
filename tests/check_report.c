/*
 * check_report: the commands for people, report, flamegraph and plot
 * (docs/reports.md).
 *
 * The traces of fixtures/report/ name modules that do not exist, so their
 * frames fall back to symbol and offset, and every command's output of
 * them is compared with a golden file byte for byte.  Real source lines
 * come from the demo workload, built with -g, traced under the preload in
 * a scratch directory; copies of it that are deleted or stripped show the
 * fallback.  The figures the report ranks by are summed against the
 * summary's totals; the SVG is parsed as XML and its curve's highest
 * point checked against the trace's peak_live_bytes; every command is run
 * under every allocation failure; and where Chromium is installed, the
 * SVG is rendered headless and the picture checked.
 */
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mt_test.h"
#include "../analyzer/model/mt_analysis.h"
#include "../analyzer/cmd/mt_cli.h"
#include "../analyzer/base/mt_error.h"
#include "../analyzer/base/mt_mem.h"
#include "../analyzer/render/mt_flamesvg.h"
#include "../analyzer/render/mt_xml.h"
#include "../analyzer/render/mt_plot.h"

#ifndef CHROMIUM
#define CHROMIUM "/usr/bin/chromium"
#endif

/* ---- running memtrace and the workload ---- */


/* fixtures/report, where the golden commands run. */
static char *report_dir(void)
{
	return mt_test_fixture("report");
}

/* Run memtrace in fixtures/report and compare stdout with a golden file;
 * it must exit with status and say nothing on stderr. */
#define GOLDEN(want_, golden_, ...)                                        \
	do {                                                               \
		mt_test_run_t r_;                                          \
		char *dir_ = report_dir();                                 \
		mt_test_memtrace_in(&r_, dir_, __VA_ARGS__, NULL);                      \
		mt_quiet(r_.status == (want_), "exit %d, want %d: %s", \
			 r_.status, (want_), r_.err);                 \
		ck_assert_str_eq(r_.err, "");                              \
		mt_test_assert_golden(r_.out, r_.out_len,                  \
				      "report/expected/" golden_);         \
		mt_test_run_release(&r_);                                  \
		free(dir_);                                                \
	} while (0)

/* Run program under the preload, writing its trace to trace. */
static void trace_program(const char *program, const char *trace)
{
	char preload[4096], output[4096];
	char *const env[] = { preload, output, NULL };
	char *argv[] = { (char *)program, "50", NULL };
	mt_test_run_t r;

	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s/libmtpreload.so",
		 mt_test_build_dir());
	snprintf(output, sizeof(output), "MEMTRACE_OUTPUT=%s", trace);
	mt_test_run(&r, argv, env);
	mt_quiet(r.status == 0, "%s exits %d: %s", program, r.status, r.err);
	mt_quiet(mt_test_exists(trace), "%s wrote no trace", program);
	mt_test_run_release(&r);
}

static char *demo_program(void)
{
	char *p = NULL;

	ck_assert_int_ne(asprintf(&p, "%s/workloads/wl_demo", mt_test_build_dir()), -1);
	return p;
}

/* Copy a file (the workload) to dst, executable. */
static void copy_file(const char *src, const char *dst, int executable)
{
	size_t len;
	char *data = mt_test_read(src, &len);

	mt_quiet(data != NULL, "cannot read %s", src);
	mt_test_write(dst, data, len);
	if (executable)
		mt_quiet_int_eq(chmod(dst, 0755), 0);
	free(data);
}

/* The line of tests/workloads/wl_demo.c holding text, from 1. */
static unsigned demo_line_of(const char *text)
{
	char *path = NULL, *src, *p;
	unsigned line = 1;

	ck_assert_int_ne(asprintf(&path, "%s/tests/workloads/wl_demo.c",
				  mt_test_source_dir()), -1);
	src = mt_test_read(path, NULL);
	mt_quiet(src != NULL, "cannot read %s", path);
	p = strstr(src, text);
	mt_quiet(p != NULL, "wl_demo.c has no '%s'", text);
	for (char *q = src; q < p; q++)
		line += *q == '\n';
	free(src);
	free(path);
	return line;
}

/* Whether some line of text holds a, and after it b. */
static int line_with(const char *text, const char *a, const char *b)
{
	for (const char *line = text; *line;) {
		const char *end = strchr(line, '\n');
		size_t n = end ? (size_t)(end - line) : strlen(line);
		char *copy = strndup(line, n);
		char *pa = strstr(copy, a);
		int found = pa && strstr(pa + strlen(a), b);

		free(copy);
		if (found)
			return 1;
		line += n + (end != NULL);
	}
	return 0;
}

/* An integer field of a summary line. */
static uint64_t summary_field(const char *summary, const char *field)
{
	json_object *obj = json_tokener_parse(summary), *v;
	uint64_t n;

	mt_quiet(obj != NULL, "not JSON: %s", summary);
	mt_quiet(json_object_object_get_ex(obj, field, &v), "no %s", field);
	n = (uint64_t)json_object_get_int64(v);
	json_object_put(obj);
	return n;
}

/* `memtrace summary --top 0` of trace. */
static char *summary_of(const char *trace)
{
	mt_test_run_t r;
	char *line;

	mt_test_memtrace_in(&r, NULL, "summary", trace, "--top", "0", NULL);
	mt_quiet_int_eq(r.status, 0);
	line = strdup(r.out);
	mt_test_run_release(&r);
	return line;
}

/* ---- XML: a small, strict well-formedness checker ---- */

typedef struct {
	const char *p, *end;
	const char *why;
	size_t at;
	const char *start;
} xml_t;

static int xml_fail(xml_t *x, const char *why)
{
	if (!x->why) {
		x->why = why;
		x->at = (size_t)(x->p - x->start);
	}
	return -1;
}

static int xml_lit(xml_t *x, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(x->end - x->p) < n || memcmp(x->p, s, n))
		return 0;
	x->p += n;
	return 1;
}

static void xml_ws(xml_t *x)
{
	while (x->p < x->end && (*x->p == ' ' || *x->p == '\t' ||
				 *x->p == '\n' || *x->p == '\r'))
		x->p++;
}

static int name_start(unsigned char c)
{
	return isalpha(c) || c == '_' || c == ':' || c >= 0x80;
}

static int name_char(unsigned char c)
{
	return name_start(c) || isdigit(c) || c == '-' || c == '.';
}

static int xml_name(xml_t *x, const char **name, size_t *len)
{
	const char *s = x->p;

	if (x->p >= x->end || !name_start((unsigned char)*x->p))
		return xml_fail(x, "a name was expected");
	while (x->p < x->end && name_char((unsigned char)*x->p))
		x->p++;
	*name = s;
	*len = (size_t)(x->p - s);
	return 0;
}

/* After '&': a predefined entity or a character reference, then ';'. */
static int xml_ref(xml_t *x)
{
	static const char *const named[] = { "amp;", "lt;", "gt;", "quot;", "apos;" };

	if (xml_lit(x, "#x")) {
		const char *s = x->p;

		while (x->p < x->end && isxdigit((unsigned char)*x->p))
			x->p++;
		if (x->p == s || !xml_lit(x, ";"))
			return xml_fail(x, "a bad hex character reference");
		return 0;
	}
	if (xml_lit(x, "#")) {
		const char *s = x->p;

		while (x->p < x->end && isdigit((unsigned char)*x->p))
			x->p++;
		if (x->p == s || !xml_lit(x, ";"))
			return xml_fail(x, "a bad character reference");
		return 0;
	}
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (xml_lit(x, named[i]))
			return 0;
	return xml_fail(x, "an undeclared entity");
}

static int xml_comment(xml_t *x)
{
	/* after "<!--" */
	while (x->p < x->end) {
		if (xml_lit(x, "--"))
			return xml_lit(x, ">") ? 0 :
			       xml_fail(x, "'--' inside a comment");
		x->p++;
	}
	return xml_fail(x, "an unclosed comment");
}

static int xml_pi(xml_t *x)
{
	/* after "<?" */
	const char *name;
	size_t len;

	if (xml_name(x, &name, &len))
		return -1;
	if (len == 3 && !strncasecmp(name, "xml", 3))
		return xml_fail(x, "an XML declaration not at the start");
	while (x->p < x->end)
		if (xml_lit(x, "?>"))
			return 0;
		else
			x->p++;
	return xml_fail(x, "an unclosed processing instruction");
}

static void xml_misc(xml_t *x)
{
	for (;;) {
		xml_ws(x);
		if (xml_lit(x, "<!--")) {
			if (xml_comment(x))
				return;
		} else if (x->end - x->p >= 2 && x->p[0] == '<' && x->p[1] == '?') {
			x->p += 2;
			if (xml_pi(x))
				return;
		} else {
			return;
		}
	}
}

static int xml_element(xml_t *x, int depth)
{
	const char *name, *attrs[64];
	size_t len, alen[64], nattrs = 0;

	if (depth > 200)
		return xml_fail(x, "elements nested too deep");
	if (!xml_lit(x, "<"))
		return xml_fail(x, "'<' was expected");
	if (xml_name(x, &name, &len))
		return -1;
	for (;;) {
		const char *an;
		size_t al;
		char quote;
		int had_ws = x->p < x->end && isspace((unsigned char)*x->p);

		xml_ws(x);
		if (xml_lit(x, "/>"))
			return 0;
		if (xml_lit(x, ">"))
			break;
		if (!had_ws)
			return xml_fail(x, "no space before an attribute");
		if (xml_name(x, &an, &al))
			return -1;
		for (size_t i = 0; i < nattrs; i++)
			if (alen[i] == al && !memcmp(attrs[i], an, al))
				return xml_fail(x, "an attribute given twice");
		if (nattrs == 64)
			return xml_fail(x, "too many attributes for this checker");
		attrs[nattrs] = an;
		alen[nattrs++] = al;
		xml_ws(x);
		if (!xml_lit(x, "="))
			return xml_fail(x, "'=' was expected");
		xml_ws(x);
		if (x->p >= x->end || (*x->p != '"' && *x->p != '\''))
			return xml_fail(x, "an unquoted attribute value");
		quote = *x->p++;
		while (x->p < x->end && *x->p != quote) {
			if (*x->p == '<')
				return xml_fail(x, "'<' in an attribute value");
			if (*x->p++ == '&' && xml_ref(x))
				return -1;
		}
		if (!xml_lit(x, quote == '"' ? "\"" : "'"))
			return xml_fail(x, "an unclosed attribute value");
	}
	for (;;) {
		if (x->p >= x->end)
			return xml_fail(x, "an element is not closed");
		if (xml_lit(x, "</")) {
			const char *en;
			size_t el;

			if (xml_name(x, &en, &el))
				return -1;
			if (el != len || memcmp(en, name, len))
				return xml_fail(x, "an end tag does not match its start tag");
			xml_ws(x);
			return xml_lit(x, ">") ? 0 : xml_fail(x, "'>' was expected");
		}
		if (xml_lit(x, "<!--")) {
			if (xml_comment(x))
				return -1;
		} else if (xml_lit(x, "<![CDATA[")) {
			while (x->p < x->end && !xml_lit(x, "]]>"))
				x->p++;
		} else if (x->end - x->p >= 2 && x->p[0] == '<' && x->p[1] == '?') {
			x->p += 2;
			if (xml_pi(x))
				return -1;
		} else if (*x->p == '<') {
			if (xml_element(x, depth + 1))
				return -1;
		} else if (*x->p == '&') {
			x->p++;
			if (xml_ref(x))
				return -1;
		} else {
			if (xml_lit(x, "]]>"))
				return xml_fail(x, "']]>' in character data");
			x->p++;
		}
	}
}

/* NULL when the n bytes at s are a well-formed XML document (UTF-8, no
 * DTD), else a description of the first fault (static storage). */
static const char *xml_check(const char *s, size_t n)
{
	static char why[160];
	xml_t x = { s, s + n, NULL, 0, s };
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {
		size_t len = u[i] < 0x80 ? 1 : (u[i] & 0xe0) == 0xc0 ? 2 :
			     (u[i] & 0xf0) == 0xe0 ? 3 : (u[i] & 0xf8) == 0xf0 ? 4 : 0;

		if (!len || i + len > n || (len == 2 && u[i] < 0xc2)) {
			snprintf(why, sizeof(why), "byte %zu is not UTF-8", i);
			return why;
		}
		for (size_t k = 1; k < len; k++)
			if ((u[i + k] & 0xc0) != 0x80) {
				snprintf(why, sizeof(why), "byte %zu is not UTF-8", i);
				return why;
			}
		if (u[i] < 0x20 && u[i] != '\t' && u[i] != '\n' && u[i] != '\r') {
			snprintf(why, sizeof(why), "byte %zu is a control character", i);
			return why;
		}
		i += len;
	}
	if (xml_lit(&x, "<?xml")) {
		while (x.p < x.end && !xml_lit(&x, "?>"))
			x.p++;
	}
	xml_misc(&x);
	if (!x.why && xml_lit(&x, "<!DOCTYPE"))
		xml_fail(&x, "a DTD (this checker does not read them)");
	if (!x.why && (x.p >= x.end || *x.p != '<'))
		xml_fail(&x, "there is no root element");
	if (!x.why)
		xml_element(&x, 0);
	if (!x.why)
		xml_misc(&x);
	if (!x.why && x.p != x.end)
		xml_fail(&x, "there is content after the root element");
	if (!x.why)
		return NULL;
	snprintf(why, sizeof(why), "%s at byte %zu", x.why, x.at);
	return why;
}

/* ---- the SVG's figures ---- */

/* The start of the tag holding id="id". */
static const char *svg_tag(const char *svg, const char *id)
{
	char key[128];
	const char *p;

	snprintf(key, sizeof(key), " id=\"%s\"", id);
	p = strstr(svg, key);
	mt_quiet(p != NULL, "the SVG has no element with id %s", id);
	while (p > svg && *p != '<')
		p--;
	return p;
}

/* The value of attribute name of the tag at tag (malloc'd). */
static char *svg_attr(const char *tag, const char *name)
{
	const char *end = strchr(tag, '>');
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), " %s=\"", name);
	p = strstr(tag, key);
	mt_quiet(p != NULL && end && p < end, "no %s in the tag", name);
	p += strlen(key);
	return strndup(p, (size_t)(strchr(p, '"') - p));
}

typedef struct {
	double *x, *y;
	size_t n;
} points_t;

static void parse_points(const char *s, points_t *pts)
{
	size_t cap = 0;

	memset(pts, 0, sizeof(*pts));
	while (*s) {
		char *end;
		double x, y;

		while (*s == ' ')
			s++;
		if (!*s)
			break;
		x = strtod(s, &end);
		mt_quiet(end != s && *end == ',', "bad point at '%.20s'", s);
		s = end + 1;
		y = strtod(s, &end);
		mt_quiet(end != s && (*end == ' ' || !*end), "bad point at '%.20s'", s);
		s = end;
		if (pts->n == cap) {
			cap = cap ? cap * 2 : 256;
			pts->x = realloc(pts->x, cap * sizeof(double));
			pts->y = realloc(pts->y, cap * sizeof(double));
			ck_assert(pts->x && pts->y);
		}
		pts->x[pts->n] = x;
		pts->y[pts->n++] = y;
	}
}

static void points_free(points_t *pts)
{
	free(pts->x);
	free(pts->y);
}

/* The points of the element with id, in pixels. */
static void svg_points(const char *svg, const char *id, points_t *pts)
{
	char *v = svg_attr(svg_tag(svg, id), "points");

	parse_points(v, pts);
	free(v);
}

/* The plot area of mt_plot.c, in the viewBox's pixels. */
#define PLOT_LEFT 80.0
#define PLOT_TOP 92.0
#define PLOT_RIGHT 800.0
#define PLOT_BOTTOM 392.0

/* A numeric attribute of the element with id. */
static double svg_number(const char *svg, const char *id, const char *name)
{
	char *v = svg_attr(svg_tag(svg, id), name);
	double d = strtod(v, NULL);

	free(v);
	return d;
}

/*
 * The curve's highest point is the trace's peak: the area under the live
 * bytes and the line over it reach the peak's pixel (from the bytes at
 * the plot's top edge the SVG states) and no higher, at the same x; the
 * marker sits there.
 */
static void assert_curve_peaks_at(const char *svg, uint64_t peak)
{
	points_t area, line;
	double area_top = INFINITY, top = INFINITY, want_y, cx;
	double y_end = svg_number(svg, "live-bytes-area", "data-y-end");

	mt_quiet(y_end >= (double)peak, "the plot's top is %g bytes, under "
		 "the peak %" PRIu64, y_end, peak);
	want_y = PLOT_BOTTOM - (double)peak / y_end * (PLOT_BOTTOM - PLOT_TOP);
	want_y = round(want_y * 100) / 100; /* as printed: two decimals */
	svg_points(svg, "live-bytes-area", &area);
	mt_quiet_uint_gt(area.n, 2);
	for (size_t i = 0; i < area.n; i++)
		if (area.y[i] < area_top)
			area_top = area.y[i];
	mt_quiet(fabs(area_top - want_y) < 0.01,
		 "the area's top is at y=%.2f, the peak's place is %.2f",
		 area_top, want_y);
	svg_points(svg, "live-bytes", &line);
	for (size_t i = 0; i < line.n; i++)
		if (line.y[i] < top)
			top = line.y[i];
	mt_quiet(fabs(top - want_y) < 0.01,
		 "the line's top is at y=%.2f, the peak's place is %.2f", top, want_y);

	mt_quiet(fabs(svg_number(svg, "peak", "cy") - want_y) < 0.01,
		 "the marker is at y=%.2f", svg_number(svg, "peak", "cy"));
	/* At a corner of the area's top (a sample just under the peak may
	 * print at the same pixel, so not necessarily the first). */
	cx = svg_number(svg, "peak", "cx");
	for (size_t i = 0;; i++) {
		mt_quiet(i < area.n, "the marker's x=%.2f is no x of the "
			 "area's top", cx);
		if (fabs(area.y[i] - want_y) < 0.01 && fabs(area.x[i] - cx) < 0.01)
			break;
	}
	points_free(&area);
	points_free(&line);
}

/* plot of trace into dir/name; returns the SVG (malloc'd). */
static char *plot_of(const char *trace, const char *dir, const char *name,
		     size_t *len)
{
	char *out = mt_test_path(dir, name), *svg;
	mt_test_run_t r;

	mt_test_memtrace_in(&r, NULL, "plot", trace, "-o", out, NULL);
	mt_quiet(r.status == 0, "plot exits %d: %s", r.status, r.err);
	ck_assert_str_eq(r.out, "");
	mt_test_run_release(&r);
	svg = mt_test_read(out, len);
	mt_quiet(svg != NULL, "plot wrote no %s", out);
	free(out);
	return svg;
}

/* ---- report ---- */

START_TEST(test_report_golden_of_complete_trace)
{
	GOLDEN(0, "app.report.txt", "report", "app.jsonl");
}
END_TEST

START_TEST(test_report_top_limits_each_list)
{
	GOLDEN(0, "app.report-top2.txt", "report", "app.jsonl", "--top", "2");
}
END_TEST

START_TEST(test_report_says_caveated_before_any_figure)
{
	char *dir = report_dir();
	mt_test_run_t r;
	const char *caveat, *totals;

	GOLDEN(0, "killed.report.txt", "report", "killed.jsonl");
	mt_test_memtrace_in(&r, dir, "report", "killed.jsonl", "--strict", NULL);
	mt_quiet_int_eq(r.status, 1);
	mt_test_assert_golden(r.out, r.out_len, "report/expected/killed.report.txt");
	caveat = strstr(r.out, "Integrity: CAVEATED (missing_stop_event)");
	totals = strstr(r.out, "Totals");
	mt_quiet_ptr_nonnull(caveat);
	mt_quiet_ptr_nonnull(totals);
	ck_assert(caveat < totals);
	mt_test_run_release(&r);

	/* A complete trace passes --strict. */
	mt_test_memtrace_in(&r, dir, "report", "app.jsonl", "--strict", NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_test_run_release(&r);
	free(dir);
}
END_TEST

START_TEST(test_report_golden_of_trace_without_allocations)
{
	GOLDEN(0, "empty.report.txt", "report", "empty.jsonl");
}
END_TEST

START_TEST(test_report_top_zero_gives_the_totals_alone)
{
	char *dir = report_dir(), *golden = mt_test_fixture("report/expected/app.report.txt");
	char *full = mt_test_read(golden, NULL);
	char *lists = strstr(full, "\nPeak contribution");
	mt_test_run_t r;

	mt_quiet_ptr_nonnull(lists);
	mt_test_memtrace_in(&r, dir, "report", "app.jsonl", "--top", "0", NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet_uint_eq(r.out_len, (size_t)(lists - full));
	ck_assert(!memcmp(r.out, full, r.out_len));
	mt_test_run_release(&r);
	free(full);
	free(golden);
	free(dir);
}
END_TEST

START_TEST(test_report_reads_standard_input)
{
	char *dir = report_dir(), *golden = mt_test_fixture("report/expected/app.report.txt");
	char *full = mt_test_read(golden, NULL);
	char *memtrace = mt_test_memtrace();
	char *argv[] = { "/bin/sh", "-c", "cd \"$1\" && exec \"$2\" report - < app.jsonl",
			 "sh", dir, memtrace, NULL };
	const char *rest = strchr(full, '\n');
	mt_test_run_t r;

	mt_test_run(&r, argv, NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert(!strncmp(r.out, "memtrace report of standard input\n", 34));
	ck_assert_str_eq(r.out + 33, rest);
	mt_test_run_release(&r);
	free(memtrace);
	free(full);
	free(golden);
	free(dir);
}
END_TEST

START_TEST(test_report_writes_its_output_file_whole)
{
	char *dir = mt_test_scratch(), *trace = mt_test_fixture("report/app.jsonl");
	char *out = mt_test_path(dir, "report.txt");
	char *bad = mt_test_path(dir, "no/such/dir/report.txt");
	char *golden = mt_test_fixture("report/expected/app.report.txt");
	char *full = mt_test_read(golden, NULL), *want = NULL, *data;
	size_t len;
	mt_test_run_t r;

	mt_test_memtrace_in(&r, NULL, "report", trace, "-o", out, NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "");
	mt_test_run_release(&r);
	data = mt_test_read(out, &len);
	mt_quiet_ptr_nonnull(data);
	/* The golden report, but for the trace's name in its first line. */
	ck_assert_int_ne(asprintf(&want, "memtrace report of %s%s", trace,
				  strchr(full, '\n')), -1);
	ck_assert_str_eq(data, want);
	mt_quiet_uint_eq(len, strlen(want));
	free(want);
	free(data);
	free(full);
	free(golden);

	mt_test_memtrace_in(&r, NULL, "report", trace, "-o", bad, NULL);
	mt_quiet_int_eq(r.status, 73);
	ck_assert_str_eq(r.out, "");
	mt_quiet_ptr_nonnull(strstr(r.err, "memtrace: cannot write '"));
	mt_test_run_release(&r);
	free(bad);
	free(out);
	free(trace);
}
END_TEST

START_TEST(test_report_refuses_what_is_not_evidence)
{
	char *invalid = mt_test_fixture("traces/invalid_not_json.jsonl");
	mt_test_run_t r;

	mt_test_memtrace_in(&r, NULL, "report", invalid, NULL);
	mt_quiet_int_eq(r.status, 2);
	ck_assert_str_eq(r.out, "");
	mt_quiet_ptr_nonnull(strstr(r.err, "is not valid memtrace evidence: line 1 is not"));
	mt_test_run_release(&r);

	mt_test_memtrace_in(&r, NULL, "report", "/nonexistent/trace.jsonl", NULL);
	mt_quiet_int_eq(r.status, 3);
	ck_assert_str_eq(r.out, "");
	ck_assert_str_eq(r.err, "memtrace: cannot read '/nonexistent/trace.jsonl': "
				"No such file or directory\n");
	mt_test_run_release(&r);
	free(invalid);
}
END_TEST

START_TEST(test_report_usage_errors_exit_64)
{
	const char *const cases[][4] = {
		{ "report", "app.jsonl", "--top", "x" },
		{ "report", "app.jsonl", "--bogus", NULL },
		{ "report", "app.jsonl", "killed.jsonl", NULL },
		{ "report", NULL, NULL, NULL },
		{ "report", "app.jsonl", "--top", NULL },
	};
	const char *const said[] = {
		"memtrace: --top needs a number, not 'x'\n",
		"memtrace: unknown option '--bogus'\n",
		"memtrace: unexpected argument 'killed.jsonl'\n",
		"memtrace: missing TRACE argument\n",
		"memtrace: option '--top' needs a value\n",
	};
	char *dir = report_dir();

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		mt_test_run_t r;

		mt_test_memtrace_in(&r, dir, cases[i][0], cases[i][1], cases[i][2], cases[i][3], NULL);
		mt_quiet(r.status == 64, "case %zu exits %d", i, r.status);
		ck_assert_str_eq(r.out, "");
		mt_quiet(!strncmp(r.err, said[i], strlen(said[i])),
			 "case %zu says '%s'", i, r.err);
		mt_quiet_ptr_nonnull(strstr(r.err, "usage: memtrace report TRACE"));
		mt_test_run_release(&r);
	}
	free(dir);
}
END_TEST

START_TEST(test_report_shows_source_lines_of_the_demo_workload)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "demo.jsonl");
	char *program = demo_program();
	char want[4096];
	mt_test_run_t r;
	const struct {
		const char *function, *text;
	} frames[] = {
		{ "parse_config at ", "table = calloc(" },
		{ "xstrdup at ", "char *p = malloc(n);" },
		{ "format_line at ", "char *line = malloc(64);" },
		{ "main at ", "parse_config(&name, &path);" },
	};

	trace_program(program, trace);
	mt_test_memtrace_in(&r, NULL, "report", trace, NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	/* main's frame is the line of its call to parse_config, not the
	 * next one, where the return address points. */
	for (size_t i = 0; i < sizeof(frames) / sizeof(frames[0]); i++) {
		snprintf(want, sizeof(want), "/tests/workloads/wl_demo.c:%u in %s",
			 demo_line_of(frames[i].text), program);
		mt_quiet(line_with(r.out, frames[i].function, want),
			 "no frame '%s...%s' in:\n%.3000s", frames[i].function,
			 want, r.out);
	}
	mt_test_run_release(&r);
	free(program);
	free(trace);
}
END_TEST

/* Trace a copy of the demo workload, then spoil the copy with how (NULL:
 * delete it); the report must still run and show parse_config by symbol
 * and offset in the copy, with no source line. */
static void assert_fallback(const char *const *how)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "demo.jsonl");
	char *program = demo_program(), *copy = mt_test_path(dir, "wl_demo_copy");
	char in[4096];
	mt_test_run_t r;

	copy_file(program, copy, 1);
	if (how) {
		char *argv[8];
		size_t n = 0;

		for (; how[n]; n++)
			argv[n] = (char *)how[n];
		argv[n++] = copy;
		argv[n] = NULL;
		mt_test_run(&r, argv, NULL);
		mt_quiet(r.status == 0, "%s exits %d: %s", how[0], r.status, r.err);
		mt_test_run_release(&r);
	}
	trace_program(copy, trace);
	if (!how)
		mt_quiet_int_eq(unlink(copy), 0);
	mt_test_memtrace_in(&r, NULL, "report", trace, NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	snprintf(in, sizeof(in), " in %s", copy);
	mt_quiet(line_with(r.out, "parse_config+0x", in),
		 "no fallback frame in:\n%.3000s", r.out);
	mt_quiet(!strstr(r.out, "wl_demo.c:"),
		 "a source line from nowhere:\n%.3000s", r.out);
	mt_test_run_release(&r);

	mt_test_memtrace_in(&r, NULL, "flamegraph", "--folded", trace, NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet_ptr_nonnull(strstr(r.out, ";main;parse_config 1\n"));
	mt_test_run_release(&r);
	free(copy);
	free(program);
	free(trace);
}

START_TEST(test_report_falls_back_when_the_module_is_gone)
{
	assert_fallback(NULL);
}
END_TEST

START_TEST(test_report_falls_back_when_the_module_is_stripped)
{
	static const char *const strip[] = { "/usr/bin/strip", "--strip-debug", NULL };

	assert_fallback(strip);
}
END_TEST

/* Trace tests/workloads/wl_cxx_names into dir/names.jsonl: five Widgets
 * from app::make_widget(int) through operator new. */
static char *trace_cxx_names(const char *dir)
{
	char *program = mt_test_workload("wl_cxx_names");
	char *trace = mt_test_path(dir, "names.jsonl");

	trace_program(program, trace);
	free(program);
	return trace;
}

START_TEST(test_report_demangles_cxx_names)
{
	char *dir = mt_test_scratch(), *trace = trace_cxx_names(dir);
	mt_test_run_t r;

	mt_test_memtrace_in(&r, NULL, "report", trace, NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	mt_quiet(line_with(r.out, "       operator new(unsigned long)", " in /"),
		 "no operator new in:\n%.3000s", r.out);
	mt_quiet(line_with(r.out, "       app::make_widget(int) at ",
			   "/tests/workloads/wl_cxx_names.cpp:"),
		 "no app::make_widget(int) in:\n%.3000s", r.out);
	mt_quiet(!strstr(r.out, "_Znwm") && !strstr(r.out, "_ZN3app"),
		 "a mangled name in:\n%.3000s", r.out);
	mt_test_run_release(&r);
	free(trace);
}
END_TEST

/* wl_inline's malloc (line 19) is in app::dup_line(), always inlined
 * into main: the frame shows the inlined call at its line, then main at
 * the line that calls it (30), not "main at" the malloc's line. */
START_TEST(test_report_shows_an_inlined_call_with_its_call_site)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *prog = mt_test_workload("wl_inline");
	mt_test_run_t r;

	trace_program(prog, trace);
	mt_test_memtrace_in(&r, NULL, "report", trace, NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet(line_with(r.out, "       app::dup_line(char const*) at ",
			   "/tests/workloads/wl_inline.cpp:19 (inlined) in /"),
		 "no inlined app::dup_line in:\n%.3000s", r.out);
	mt_quiet(line_with(r.out, "       main at ",
			   "/tests/workloads/wl_inline.cpp:30 in /"),
		 "no call site of app::dup_line in:\n%.3000s", r.out);
	mt_test_run_release(&r);
	free(prog);
	free(trace);
}
END_TEST

/* An -O2 -g workload of tests/workloads/o2/, traced; the caller frees. */
static char *trace_o2(const char *dir, const char *name, char **prog)
{
	char *trace = mt_test_path(dir, "t.jsonl");

	ck_assert_int_ne(asprintf(prog, "%s/workloads/o2/%s",
				  mt_test_build_dir(), name), -1);
	trace_program(*prog, trace);
	return trace;
}

/*
 * Every frame of prog's own module in trace, as `addr2line -f -i -C`
 * lists the address before its return address, must be in the report
 * level by level, consecutive: "NAME at FILE:LINE (inlined) in MODULE"
 * for each inlined call, innermost first, then the frame's own function.
 * The shell says which block is missing.
 */
static void report_matches_addr2line(const char *trace, const char *prog)
{
	char *dir = mt_test_scratch(), *report = mt_test_path(dir, "r.txt");
	char *argv[] = { "/bin/sh", "-c",
		"set -e; mod=$1; trace=$2; rep=$3; n=0\n"
		"\"$4\" report --top 1000 \"$trace\" > \"$rep\"\n"
		"for off in $(grep '\"kind\":\"frame\"' \"$trace\" |"
		"  grep \"\\\"module\\\":\\\"$mod\\\"\" |"
		"  sed 's/.*\"module_offset\":\"\\(0x[0-9a-f]*\\)\".*/\\1/'); do\n"
		"  want=$(addr2line -f -i -C -e \"$mod\" $(printf '0x%x' $((off - 1))) |"
		"    paste - - | sed 's/ (discriminator [0-9]*)//' |"
		"    awk -F'\\t' -v m=\"$mod\" '{ l[NR] = \"       \" $1 \" at \" $2 }"
		"      END { for (i = 1; i <= NR; i++) print l[i] (i < NR ? \" (inlined)\" : \"\") \" in \" m }')\n"
		"  case $want in *'?\?'*) continue;; esac\n"
		"  n=$((n + 1))\n"
		"  grep -qF -- \"$want\" \"$rep\" || { echo \"report lacks:\"; echo \"$want\"; exit 1; }\n"
		"  awk -v w=\"$want\" 'BEGIN { k = split(w, L, \"\\n\") }"
		"    { a[NR] = $0 } END { for (i = 1; i + k - 1 <= NR; i++) {"
		"      for (j = 1; j <= k && a[i + j - 1] == L[j]; j++); if (j > k) exit 0 }"
		"      exit 1 }' \"$rep\" || { echo \"not in one run:\"; echo \"$want\"; exit 1; }\n"
		"done\n"
		"[ $n -gt 0 ] || { echo no frames of $mod; exit 1; }\n",
		"sh", (char *)prog, (char *)trace, report, NULL, NULL };
	char *memtrace = NULL;
	mt_test_run_t r;

	ck_assert_int_ne(asprintf(&memtrace, "%s/memtrace", mt_test_build_dir()), -1);
	argv[7] = memtrace;
	mt_test_run(&r, argv, NULL);
	mt_quiet(r.status == 0, "report and addr2line differ: %s%s", r.out, r.err);
	mt_test_run_release(&r);
	free(memtrace);
	free(report);
}

/* inner -> middle -> main, all always_inline at -O2: three levels, each
 * with its own name and line, as addr2line -i gives them. */
START_TEST(test_report_shows_every_level_of_an_inline_chain_as_addr2line)
{
	char *dir = mt_test_scratch(), *prog = NULL;
	char *trace = trace_o2(dir, "wl_inl3", &prog);
	mt_test_run_t r;

	report_matches_addr2line(trace, prog);
	mt_test_memtrace_in(&r, NULL, "report", trace, NULL);
	mt_quiet(line_with(r.out, "       middle at ", "wl_inl3.c:22 (inlined) in /"),
		 "no middle level in:\n%.3000s", r.out);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, NULL, "flamegraph", "--folded", trace, NULL);
	mt_quiet(strstr(r.out, ";main;middle;inner ") != NULL,
		 "no main;middle;inner in the folded stacks:\n%.3000s", r.out);
	mt_test_run_release(&r);
	free(prog);
	free(trace);
}
END_TEST

/* The STL inlined into an -O2 program: every level as addr2line -i -C. */
START_TEST(test_report_shows_an_optimised_stl_program_as_addr2line)
{
	char *dir = mt_test_scratch(), *prog = NULL;
	char *trace = trace_o2(dir, "wl_stl", &prog);

	report_matches_addr2line(trace, prog);
	free(prog);
	free(trace);
}
END_TEST

/* Each "     site: " label of a report, counted; *distinct set when no
 * two are equal. */
static size_t site_labels(const char *out, const char *with, int *distinct,
			  size_t *matching)
{
	const char *p = out;
	char *seen[256];
	size_t n = 0;

	*distinct = 1;
	*matching = 0;
	while ((p = strstr(p, "\n     site: ")) && n < 256) {
		const char *end = strchr(p + 1, '\n');
		char *label = strndup(p + 12, end ? (size_t)(end - p - 12) : strlen(p + 12));
		int dup = 0;

		for (size_t i = 0; i < n; i++)
			dup |= !strcmp(seen[i], label);
		if (!dup) {
			*matching += strstr(label, with) != NULL;
			seen[n++] = label;
		} else {
			free(label);
		}
		p += 12;
	}
	for (size_t i = 0; i < n; i++)
		free(seen[i]);
	return n;
}

/* The STL program's sites are named by its own lines, each apart from
 * the others, never by operator new nor the containers' internals. */
START_TEST(test_report_names_stl_sites_by_the_programs_own_lines)
{
	char *dir = mt_test_scratch(), *prog = NULL;
	char *trace = trace_o2(dir, "wl_stl", &prog);
	mt_test_run_t r;
	int distinct;
	size_t matching, n;

	mt_test_memtrace_in(&r, NULL, "report", "--top", "1000", trace, NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet(line_with(r.out, "     site: app::build", "wl_stl.cpp:20"),
		 "no site at the key's line in:\n%.4000s", r.out);
	mt_quiet(line_with(r.out, "     site: app::build", "wl_stl.cpp:21"),
		 "no site at the push_back's line in:\n%.4000s", r.out);
	mt_quiet(line_with(r.out, "     site: app::names", "wl_stl.cpp:31"),
		 "no site at the emplace_back's line in:\n%.4000s", r.out);
	mt_quiet(!strstr(r.out, "site: operator new") && !strstr(r.out, "site: std::"),
		 "a site named by the allocator in:\n%.4000s", r.out);
	/* Three sites share app::build's line 21 (the map's node, the
	 * vector's first and its grown buffer): three labels. */
	n = site_labels(r.out, "wl_stl.cpp:21", &distinct, &matching);
	mt_quiet(n > 3 && matching >= 2, "%zu labels, %zu at line 21:\n%.4000s",
		 n, matching, r.out);
	mt_test_run_release(&r);
	/* Within one list no label repeats. */
	mt_test_memtrace_in(&r, NULL, "report", "--top", "1000", trace, NULL);
	{
		const char *calls = strstr(r.out, "\nCalls:");
		const char *temp = calls ? strstr(calls, "\nTemporary:") : NULL;
		char *list = calls ? strndup(calls, temp ? (size_t)(temp - calls) : strlen(calls)) : NULL;
		size_t sites = 0;

		ck_assert_ptr_nonnull(list);
		for (const char *p = list; (p = strstr(p, "\n  #")); p++)
			sites++;
		n = site_labels(list, "", &distinct, &matching);
		mt_quiet(n == sites, "%zu sites, %zu distinct labels:\n%s", sites, n, list);
		free(list);
	}
	mt_test_run_release(&r);
	free(prog);
	free(trace);
}
END_TEST

/* --alloc-fn passes over a wrapper named by it: wl_inl3's inner() is
 * one, and its site is named by middle(), or by main() past both. */
START_TEST(test_report_passes_over_an_alloc_fn)
{
	char *dir = mt_test_scratch(), *prog = NULL;
	char *trace = trace_o2(dir, "wl_inl3", &prog);
	mt_test_run_t r;

	mt_test_memtrace_in(&r, NULL, "report", trace, NULL);
	mt_quiet(line_with(r.out, "     site: inner at ", "wl_inl3.c:13"),
		 "no site named by inner in:\n%.3000s", r.out);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, NULL, "report", "--alloc-fn", "^inner$", trace, NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet(line_with(r.out, "     site: middle at ", "wl_inl3.c:22"),
		 "--alloc-fn inner: no site named by middle in:\n%.3000s", r.out);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, NULL, "report", "--alloc-fn", "^inner$",
			    "--alloc-fn", "middle", trace, NULL);
	mt_quiet(line_with(r.out, "     site: main at ", "wl_inl3.c:31"),
		 "--alloc-fn inner, middle: no site named by main in:\n%.3000s", r.out);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, NULL, "report", "--alloc-fn", "(", trace, NULL);
	mt_quiet(r.status == 64 && strstr(r.err, "--alloc-fn"),
		 "a bad pattern: %d %s", r.status, r.err);
	mt_test_run_release(&r);
	free(prog);
	free(trace);
}
END_TEST

/* The build id `readelf -n` prints for the ELF file at path. */
static char *readelf_build_id(const char *path)
{
	char *argv[] = { "/bin/sh", "-c",
			 "readelf -n \"$1\" | sed -n 's/.*Build ID: //p'", "sh",
			 (char *)path, NULL };
	mt_test_run_t r;
	char *id, *nl;

	mt_test_run(&r, argv, NULL);
	mt_quiet(r.status == 0 && r.out_len > 1, "readelf -n %s: %d: %s", path,
		 r.status, r.err);
	id = strdup(r.out);
	if ((nl = strchr(id, '\n')))
		*nl = '\0';
	mt_test_run_release(&r);
	return id;
}

/* Every frame event of the program's own module carries the build id of
 * the file that ran, as readelf prints it. */
START_TEST(test_trace_frames_carry_their_modules_build_id)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "demo.jsonl");
	char *program = demo_program(), *copy = mt_test_path(dir, "wl_demo_copy");
	char *id, *text, want_module[4096], want_id[256];
	int frames = 0;

	copy_file(program, copy, 1);
	trace_program(copy, trace);
	id = readelf_build_id(copy);
	text = mt_test_read(trace, NULL);
	snprintf(want_module, sizeof(want_module), "\"module\":\"%s\"", copy);
	snprintf(want_id, sizeof(want_id), "\"build_id\":\"%s\"", id);
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');

		if (nl)
			*nl = '\0';
		if (strstr(line, "\"kind\":\"frame\"") && strstr(line, want_module)) {
			mt_quiet(strstr(line, want_id) != NULL,
				 "no %s in %s", want_id, line);
			frames++;
		}
		line = nl ? nl + 1 : NULL;
	}
	mt_quiet(frames > 0, "no frame of %s in the trace", copy);
	free(text);
	free(id);
	free(copy);
	free(program);
	free(trace);
}
END_TEST

/* The program traced, then replaced by another build (another program
 * with another build id): its frames keep the trace's names, with no
 * source line from the new file, flagged "(rebuilt since the run)". */
START_TEST(test_report_flags_a_module_rebuilt_since_the_run)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "demo.jsonl");
	char *program = demo_program(), *copy = mt_test_path(dir, "wl_demo_copy");
	char *other = mt_test_workload("wl_inline");
	char in[4096];
	mt_test_run_t r;

	copy_file(program, copy, 1);
	trace_program(copy, trace);
	mt_test_memtrace_in(&r, NULL, "report", trace, NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet(line_with(r.out, "parse_config at ", "wl_demo.c:") &&
			 !strstr(r.out, "rebuilt since the run"),
		 "the untouched program is not read:\n%.3000s", r.out);
	mt_test_run_release(&r);

	mt_quiet_int_eq(unlink(copy), 0);
	copy_file(other, copy, 1);
	mt_test_memtrace_in(&r, NULL, "report", trace, NULL);
	mt_quiet_int_eq(r.status, 0);
	snprintf(in, sizeof(in), " in %s (rebuilt since the run)", copy);
	mt_quiet(line_with(r.out, "parse_config+0x", in),
		 "no flagged frame in:\n%.3000s", r.out);
	mt_quiet(!strstr(r.out, "wl_demo.c:") && !strstr(r.out, "wl_inline.cpp:"),
		 "a source line from the new file:\n%.3000s", r.out);
	mt_test_run_release(&r);
	free(other);
	free(copy);
	free(program);
	free(trace);
}
END_TEST

START_TEST(test_flamegraph_demangles_cxx_names)
{
	char *dir = mt_test_scratch(), *trace = trace_cxx_names(dir);
	mt_test_run_t r;

	mt_test_memtrace_in(&r, NULL, "flamegraph", "--folded", trace, NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet_ptr_nonnull(strstr(r.out, ";main;app::make_widget(int);"
					   "operator new(unsigned long) 5\n"));
	mt_quiet(!strstr(r.out, "_Z"), "a mangled name in:\n%.3000s", r.out);
	mt_test_run_release(&r);
	free(trace);
}
END_TEST

/* ---- frames named only by a symbol that contains them ---- */

#define STRIP "/usr/bin/strip"

/* A copy of libwl_strippable.so in dir (stripped with --strip-unneeded
 * when strip is set: .dynsym alone is left, without hidden_alloc), and
 * the trace of wl_stripped running it; *lib is the copy.  NULL when strip
 * is wanted and absent: the test says so and passes. */
static char *trace_strippable(const char *test, const char *dir, int strip,
			      char **lib)
{
	char *so = mt_test_workload("libwl_strippable.so");
	char *program = mt_test_workload("wl_stripped");
	char *trace = mt_test_path(dir, "stripped.jsonl");
	char preload[4096], output[4096];
	char *const env[] = { preload, output, NULL };
	mt_test_run_t r;

	*lib = mt_test_path(dir, "libwl_strippable.so");
	if (strip && access(STRIP, X_OK) != 0) {
		mt_test_skip(test, "no %s", STRIP);
		free(so);
		free(program);
		free(trace);
		return NULL;
	}
	copy_file(so, *lib, 0);
	if (strip) {
		char *argv[] = { STRIP, "--strip-unneeded", *lib, NULL };

		mt_test_run(&r, argv, NULL);
		mt_quiet(r.status == 0, "strip exits %d: %s", r.status, r.err);
		mt_test_run_release(&r);
	}
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s/libmtpreload.so",
		 mt_test_build_dir());
	snprintf(output, sizeof(output), "MEMTRACE_OUTPUT=%s", trace);
	{
		char *argv[] = { program, *lib, NULL };

		mt_test_run(&r, argv, env);
		mt_quiet(r.status == 0, "wl_stripped exits %d: %s", r.status, r.err);
		mt_test_run_release(&r);
	}
	free(so);
	free(program);
	return trace;
}

/* The report of trace: hidden_alloc's frame as "0x... in LIB", right above
 * wl_strippable_run's, and never the far-away wl_strippable_first. */
static void assert_named_by_address(const char *trace, const char *lib)
{
	char want[4096];
	mt_test_run_t r;
	const char *at;

	mt_test_memtrace_in(&r, NULL, "report", trace, NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	snprintf(want, sizeof(want), " in %s\n       wl_strippable_run+0x", lib);
	at = strstr(r.out, want);
	mt_quiet(at != NULL, "no '%s' in:\n%.3000s", want, r.out);
	while (at && at > r.out && at[-1] != '\n')
		at--;
	mt_quiet(at && !strncmp(at, "       0x", 9), "not an address:\n%.3000s", r.out);
	mt_quiet(!strstr(r.out, "wl_strippable_first"),
		 "a far-away symbol in:\n%.3000s", r.out);
	mt_test_run_release(&r);
}

START_TEST(test_trace_names_no_symbol_that_ends_before_the_frame)
{
	char *dir = mt_test_scratch(), *lib, *trace, *text, want[4096];
	int found = 0;

	trace = trace_strippable(__func__, dir, 1, &lib);
	if (trace) {
		text = mt_test_read(trace, NULL);
		snprintf(want, sizeof(want), "\"module\":\"%s\"", lib);
		for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
			if (strstr(line, "\"kind\":\"frame\"") && strstr(line, want) &&
			    !strstr(line, "\"symbol\"") && strstr(line, "\"module_offset\""))
				found++;
		mt_quiet_int_eq(found, 1);
		free(text);
		text = mt_test_read(trace, NULL);
		mt_quiet(!strstr(text, "wl_strippable_first"),
			 "a far-away symbol in:\n%.3000s", text);
		free(text);
	}
	free(trace);
	free(lib);
}
END_TEST

START_TEST(test_report_names_a_static_function_of_a_stripped_library_by_address)
{
	char *dir = mt_test_scratch(), *lib, *trace;

	trace = trace_strippable(__func__, dir, 1, &lib);
	if (trace)
		assert_named_by_address(trace, lib);
	free(trace);
	free(lib);
}
END_TEST

/* A trace from a preload that named a frame by the nearest symbol below
 * it, however far (older memtrace, libunwind): the report drops that
 * name where the module's symbols show it ends before the frame. */
START_TEST(test_report_drops_a_trace_symbol_that_ends_before_the_frame)
{
	char *dir = mt_test_scratch(), *lib, *trace, *text, *old;
	char want[4096];
	size_t len;

	trace = trace_strippable(__func__, dir, 1, &lib);
	if (trace) {
		char *at, *path = mt_test_path(dir, "old.jsonl");
		size_t n;

		text = mt_test_read(trace, &len);
		snprintf(want, sizeof(want), "\"module\":\"%s\"", lib);
		/* The frame without a symbol: give it the far-away one. */
		for (at = text; (at = strstr(at, want)); at++) {
			char *start = at;

			while (start > text && start[-1] != '\n')
				start--;
			if (!strstr(start, "\"symbol\"") ||
			    strstr(start, "\"symbol\"") > at)
				break;
		}
		mt_quiet_ptr_nonnull(at);
		old = malloc(len + 128);
		mt_quiet_ptr_nonnull(old);
		n = (size_t)(at - text);
		memcpy(old, text, n);
		n += (size_t)sprintf(old + n, "\"symbol\":\"wl_strippable_first\","
					      "\"offset\":\"0x2d\",");
		memcpy(old + n, at, len - (size_t)(at - text));
		n += len - (size_t)(at - text);
		mt_test_write(path, old, n);
		assert_named_by_address(path, lib);
		free(old);
		free(text);
		free(path);
	}
	free(trace);
	free(lib);
}
END_TEST

START_TEST(test_report_keeps_the_name_of_a_function_its_symbol_contains)
{
	char *dir = mt_test_scratch(), *lib, *trace;
	mt_test_run_t r;

	trace = trace_strippable(__func__, dir, 0, &lib);
	mt_test_memtrace_in(&r, NULL, "report", trace, NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet(line_with(r.out, "       hidden_alloc at ", lib),
		 "no hidden_alloc in:\n%.3000s", r.out);
	mt_quiet(line_with(r.out, "       wl_strippable_run at ", lib),
		 "no wl_strippable_run in:\n%.3000s", r.out);
	mt_quiet(line_with(r.out, "       main at ", "wl_stripped.c:"),
		 "no main in:\n%.3000s", r.out);
	mt_test_run_release(&r);
	free(trace);
	free(lib);
}
END_TEST

/* Every site's share of the peak, its temporary allocations and its calls,
 * summed, are the totals (the calls: allocations + resizes + remaps); and
 * the fixture's sites have the figures worked out by hand in
 * fixtures/report/README.md. */
START_TEST(test_report_site_figures_sum_to_the_totals)
{
	char *app = mt_test_fixture("report/app.jsonl");
	char *dir = mt_test_scratch(), *demo = mt_test_path(dir, "demo.jsonl");
	char *program = demo_program();
	const char *traces[] = { app, demo };
	static const struct {
		uint64_t stack, at_peak, temporary, calls;
	} want[] = {
		{ 1, 100, 0, 2 }, { 2, 60, 0, 1 }, { 3, 6000, 1, 3 }, { 4, 0, 2, 2 },
		{ 5, 1000, 1, 1 },
	};

	trace_program(program, demo);
	for (size_t t = 0; t < 2; t++) {
		mt_analysis_t a;
		uint64_t peak, temporary, calls;
		size_t pos = 0;
		uint64_t key;
		void *v;

		mt_quiet_int_eq(mt_analysis_run(&a, traces[t]), MT_OK);
		ck_assert(mt_integrity_complete(&a.integrity));
		peak = mt_heap_site_at_peak(&a.heap, &a.heap.no_stack);
		temporary = a.heap.no_stack.temporary_allocations;
		calls = mt_heap_site_calls(&a.heap, NULL);
		while (mt_map_iter(&a.heap.stacks, &pos, &key, &v)) {
			const mt_stack_t *s = *(mt_stack_t **)v;
			const mt_site_t *site = mt_heap_stack_site(&a.heap, s);

			peak += mt_heap_site_at_peak(&a.heap, site);
			temporary += site->temporary_allocations;
			calls += mt_heap_site_calls(&a.heap, s);
			if (t == 0)
				for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
					if (want[i].stack == s->id) {
						mt_quiet_uint_eq(mt_heap_site_at_peak(&a.heap, site),
								 want[i].at_peak);
						mt_quiet_uint_eq(site->temporary_allocations,
								 want[i].temporary);
						mt_quiet_uint_eq(mt_heap_site_calls(&a.heap, s),
								 want[i].calls);
					}
		}
		mt_quiet_uint_gt(a.heap.peak_live_bytes, 0);
		mt_quiet_uint_eq(peak, a.heap.peak_live_bytes);
		mt_quiet_uint_eq(temporary, a.heap.temporary_allocations);
		mt_quiet_uint_eq(calls, a.heap.allocations + a.heap.resizes +
					a.heap.remaps);
		if (t == 0)
			mt_quiet_uint_eq(mt_heap_site_at_peak(&a.heap, &a.heap.no_stack), 500);
		mt_analysis_release(&a);
	}
	free(program);
	free(demo);
	free(app);
}
END_TEST

/* A site's calls count the resizes and remaps made from it, as heaptrack
 * counts a realloc: read_line's blocks are all made by realloc(NULL, n)
 * and grown (2 allocations, 1 resize, 2 remaps), and grow only reallocs
 * a block made elsewhere (0 allocations, 2 calls); fixtures/report/README.md
 * works them out. */
START_TEST(test_report_counts_a_sites_reallocs_as_calls)
{
	char *dir = report_dir();
	const char *calls;
	mt_test_run_t r;

	mt_test_memtrace_in(&r, dir, "report", "realloc.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	mt_quiet_ptr_nonnull(strstr(r.out, "     stack 1: 5 calls, 1 temporary, 640 B allocated"));
	mt_quiet_ptr_nonnull(strstr(r.out, "     stack 3: 2 calls, 1 temporary, 2.9 KiB allocated"));
	mt_quiet_ptr_nonnull(strstr(r.out, "     stack 2: 1 call, 0 temporary, 32 B allocated"));
	mt_quiet_ptr_nonnull(strstr(r.out, "  #1 1 temporary allocation of 2 calls\n"
					   "     site: grow+0x40 in churn\n"
					   "     stack 3: "));
	/* The list by calls ranks them so, grow among them. */
	calls = strstr(r.out, "\nCalls: ");
	mt_quiet_ptr_nonnull(calls);
	mt_quiet_ptr_nonnull(strstr(calls,
		"  #1 5 calls to allocation functions\n"
		"     site: read_line+0x20 in churn\n"
		"     stack 1: 5 calls, 1 temporary, 640 B allocated, 128 B at the peak, 128 B leaked\n"
		"       read_line+0x20 in /nonexistent/memtrace-fixture/churn\n"
		"       main+0x10 in /nonexistent/memtrace-fixture/churn\n"
		"  #2 2 calls to allocation functions\n"
		"     site: grow+0x40 in churn\n"
		"     stack 3: 2 calls, 1 temporary, 2.9 KiB allocated, 2.0 KiB at the peak, 0 B leaked\n"
		"       grow+0x40 in /nonexistent/memtrace-fixture/churn\n"
		"       main+0x10 in /nonexistent/memtrace-fixture/churn\n"
		"  #3 1 call to allocation functions\n"
		"     site: make_buf+0x30 in churn\n"
		"     stack 2: 1 call,"));
	/* The totals are the summary's: reallocs stay apart there. */
	mt_quiet_ptr_nonnull(strstr(r.out, "  allocations             3\n"
					   "  reallocations           5 (2 in place, 3 moved)\n"));
	mt_test_run_release(&r);
	free(dir);
}
END_TEST

/* ---- flamegraph ---- */

START_TEST(test_flamegraph_golden_for_each_metric)
{
	GOLDEN(0, "app.flamegraph-allocations.txt", "flamegraph", "--folded", "app.jsonl");
	GOLDEN(0, "app.flamegraph-allocations.txt", "flamegraph", "--folded", "app.jsonl",
	       "--metric", "allocations");
	GOLDEN(0, "app.flamegraph-bytes.txt", "flamegraph", "--folded", "app.jsonl", "--metric", "bytes");
	GOLDEN(0, "app.flamegraph-leaked.txt", "flamegraph", "--folded", "app.jsonl", "--metric", "leaked");
	GOLDEN(0, "app.flamegraph-peak.txt", "flamegraph", "--folded", "app.jsonl", "--metric", "peak");
	GOLDEN(1, "killed.flamegraph-allocations.txt", "flamegraph", "--folded", "killed.jsonl", "--strict");
}
END_TEST

/* Sum a folded output's figures, checking each line's form. */
static uint64_t folded_total(const char *out)
{
	uint64_t total = 0;

	for (const char *line = out; *line;) {
		const char *end = strchr(line, '\n'), *space;
		char *copy;

		mt_quiet(end != NULL, "a line without its newline");
		copy = strndup(line, (size_t)(end - line));
		space = strrchr(copy, ' ');
		mt_quiet(space && space > copy && space[1], "bad line '%s'", copy);
		for (const char *d = space + 1; *d; d++)
			mt_quiet(isdigit((unsigned char)*d), "bad figure in '%s'", copy);
		for (const char *c = copy; c < space; c++)
			mt_quiet((unsigned char)*c >= 0x20, "a control byte in '%s'", copy);
		total += strtoull(space + 1, NULL, 10);
		free(copy);
		line = end + 1;
	}
	return total;
}

START_TEST(test_flamegraph_totals_are_the_summary_totals)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "demo.jsonl");
	char *program = demo_program(), *summary;
	const char *const metric[][2] = {
		{ "allocations", "allocations" }, { "bytes", "bytes_allocated" },
		{ "leaked", "live_bytes" }, { "peak", "peak_live_bytes" },
	};

	trace_program(program, trace);
	summary = summary_of(trace);
	/* The workload reallocs, so the calls are more than its allocations. */
	mt_quiet_uint_gt(summary_field(summary, "resizes") +
			 summary_field(summary, "remaps"), 0);
	for (size_t i = 0; i < 4; i++) {
		mt_test_run_t r;
		uint64_t want = summary_field(summary, metric[i][1]);

		/* Allocations weigh calls: a realloc is one. */
		if (i == 0)
			want += summary_field(summary, "resizes") +
				summary_field(summary, "remaps");
		mt_test_memtrace_in(&r, NULL, "flamegraph", "--folded", trace, "--metric", metric[i][0], NULL);
		mt_quiet_int_eq(r.status, 0);
		mt_quiet_uint_eq(folded_total(r.out), want);
		/* Outermost first: every stack of the workload starts at _start. */
		mt_quiet(!strncmp(r.out, "_start;", 7), "%s", r.out);
		mt_test_run_release(&r);
	}
	free(summary);
	free(program);
	free(trace);
}
END_TEST

/* --metric allocations weighs a stack by its calls, reallocs included, as
 * the report's calls: grow, which only reallocs, is in the graph, and
 * read_line weighs its 2 allocations and 3 reallocs. */
START_TEST(test_flamegraph_allocations_counts_a_sites_reallocs_as_calls)
{
	char *dir = report_dir();
	mt_test_run_t r;

	mt_test_memtrace_in(&r, dir, "flamegraph", "--folded", "realloc.jsonl", "--metric",
			    "allocations", NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "main;grow 2\nmain;make_buf 1\nmain;read_line 5\n");
	mt_test_run_release(&r);
	free(dir);
}
END_TEST

START_TEST(test_flamegraph_rejects_an_unknown_metric)
{
	char *dir = report_dir();
	mt_test_run_t r;

	mt_test_memtrace_in(&r, dir, "flamegraph", "app.jsonl", "--metric", "weight", NULL);
	mt_quiet_int_eq(r.status, 64);
	ck_assert_str_eq(r.out, "");
	ck_assert(!strncmp(r.err, "memtrace: --metric is allocations, bytes, leaked "
				  "or peak, not 'weight'\n", 68));
	mt_test_run_release(&r);
	free(dir);
}
END_TEST

START_TEST(test_flamegraph_of_trace_without_allocations_is_empty)
{
	GOLDEN(0, "empty.flamegraph-allocations.txt", "flamegraph", "--folded", "empty.jsonl");
}
END_TEST

/* ---- plot ---- */

START_TEST(test_plot_golden_of_each_trace)
{
	GOLDEN(0, "app.plot.svg", "plot", "app.jsonl");
	GOLDEN(0, "killed.plot.svg", "plot", "killed.jsonl");
	GOLDEN(0, "empty.plot.svg", "plot", "empty.jsonl");
}
END_TEST

static void assert_well_formed(const char *path)
{
	size_t len;
	char *svg = mt_test_read(path, &len);
	const char *why;

	mt_quiet(svg != NULL, "cannot read %s", path);
	why = xml_check(svg, len);
	mt_quiet(why == NULL, "%s is not well-formed XML: %s", path, why);
	mt_quiet(strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\"") != NULL,
		 "%s is not SVG", path);
	if (access("/usr/bin/xmllint", X_OK) == 0) {
		char *argv[] = { "/usr/bin/xmllint", "--noout", (char *)path, NULL };
		mt_test_run_t r;

		mt_test_run(&r, argv, NULL);
		mt_quiet(r.status == 0, "xmllint: %s", r.err);
		mt_test_run_release(&r);
	}
	free(svg);
}

START_TEST(test_plot_is_well_formed_xml)
{
	static const char *const goldens[] = {
		"report/expected/app.plot.svg", "report/expected/killed.plot.svg",
		"report/expected/empty.plot.svg",
	};
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "demo.jsonl");
	char *program = demo_program(), *svg, *path;
	size_t len;

	for (size_t i = 0; i < 3; i++) {
		path = mt_test_fixture(goldens[i]);
		assert_well_formed(path);
		free(path);
	}
	trace_program(program, trace);
	svg = plot_of(trace, dir, "heap.svg", &len);
	path = mt_test_path(dir, "heap.svg");
	assert_well_formed(path);
	/* The checker itself tells bad XML. */
	mt_quiet_ptr_nonnull(xml_check("<svg><g></svg>", 14));
	mt_quiet_ptr_nonnull(xml_check("<svg a=\"1\" a=\"2\"/>", 18));
	mt_quiet_ptr_nonnull(xml_check("<svg>&nbsp;</svg>", 17));
	mt_quiet_ptr_nonnull(xml_check("<svg/><svg/>", 12));
	mt_quiet_ptr_nonnull(xml_check("<svg x=1/>", 10));
	mt_quiet_ptr_null(xml_check("<?xml version=\"1.0\"?>\n<svg a='&amp;'><!-- c --></svg>\n", 53));
	free(path);
	free(svg);
	free(program);
	free(trace);
}
END_TEST

START_TEST(test_plot_curve_peaks_at_peak_live_bytes)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "demo.jsonl");
	char *program = demo_program();
	const char *fixtures[] = { "report/app.jsonl", "report/killed.jsonl" };
	char *svg, *summary;
	size_t len;

	trace_program(program, trace);
	summary = summary_of(trace);
	svg = plot_of(trace, dir, "heap.svg", &len);
	assert_curve_peaks_at(svg, summary_field(summary, "peak_live_bytes"));
	/* A time axis: the demo workload stamps every event. */
	mt_quiet_ptr_nonnull(strstr(svg, ">time since the trace started</text>"));
	free(svg);
	free(summary);
	for (size_t i = 0; i < 2; i++) {
		char *path = mt_test_fixture(fixtures[i]);

		summary = summary_of(path);
		svg = plot_of(path, dir, "fixture.svg", &len);
		assert_curve_peaks_at(svg, summary_field(summary, "peak_live_bytes"));
		free(svg);
		free(summary);
		free(path);
	}
	free(program);
	free(trace);
}
END_TEST

START_TEST(test_plot_is_self_contained)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "demo.jsonl");
	char *program = demo_program(), *svg;
	static const char *const never[] = {
		"<script", "<style", "href", "url(", "<image", "<foreignObject",
		"@import", "<use", "javascript:", "onload",
	};
	const char *http;
	size_t len;

	trace_program(program, trace);
	svg = plot_of(trace, dir, "heap.svg", &len);
	for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++)
		mt_quiet(!strstr(svg, never[i]), "the SVG holds '%s'", never[i]);
	/* The one URI is the namespace's, which is a name, never fetched. */
	http = strstr(svg, "http");
	mt_quiet_ptr_nonnull(http);
	ck_assert(!strncmp(http - 7, "xmlns=\"http://www.w3.org/2000/svg\"", 34));
	mt_quiet_ptr_null(strstr(http + 1, "http"));
	free(svg);
	free(program);
	free(trace);
}
END_TEST

/* A long trace: 100000 blocks in a ramp up to a peak in the middle, then
 * down, with churn.  The SVG's curves have a bounded number of points,
 * and the peak is still exact. */
START_TEST(test_plot_series_is_bounded_on_a_long_trace)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "long.jsonl");
	char *svg, *summary;
	FILE *f = fopen(trace, "w");
	uint64_t seq = 1;
	points_t line;
	size_t len;
	const int n = 100000;

	mt_quiet_ptr_nonnull(f);
	fprintf(f, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"trace.start\"}\n", seq++);
	fprintf(f, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"allocator\",\"allocator_id\":0}\n", seq++);
	for (int i = 0; i < n; i++) {
		fprintf(f, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"alloc\",\"allocator_id\":0,"
			   "\"ptr\":\"0x%x\",\"size\":%d,\"fn\":\"malloc\",\"tid\":1,\"t\":%" PRIu64 "}\n",
			seq, 0x100000 + i * 16, 8 + (i * 7919) % 97, seq * 10);
		seq++;
		if (i % 3 == 0) {
			fprintf(f, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"free\",\"allocator_id\":0,"
				   "\"ptr\":\"0x%x\",\"tid\":1,\"t\":%" PRIu64 "}\n",
				seq, 0x100000 + i * 16, seq * 10);
			seq++;
		}
		if (i == n / 2)
			for (int k = n / 2; k >= 0; k--)
				if (k % 3)
					fprintf(f, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"free\","
						   "\"allocator_id\":0,\"ptr\":\"0x%x\",\"tid\":1,"
						   "\"t\":%" PRIu64 "}\n",
						seq, 0x100000 + k * 16, seq * 10), seq++;
	}
	fprintf(f, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"trace.stop\"}\n", seq);
	mt_quiet_int_eq(fclose(f), 0);

	summary = summary_of(trace);
	svg = plot_of(trace, dir, "long.svg", &len);
	assert_curve_peaks_at(svg, summary_field(summary, "peak_live_bytes"));
	svg_points(svg, "live-bytes", &line);
	/* (0, 0), then at most two steps of two points a bucket, and the end. */
	mt_quiet_uint_le(line.n, 4 * MT_PLOT_BUCKETS + 3);
	ck_assert_uint_lt(len, 300000);
	points_free(&line);
	free(summary);
	free(svg);
	free(trace);
}
END_TEST

START_TEST(test_plot_axis_is_seq_without_times)
{
	char *dir = report_dir();
	mt_test_run_t r;

	mt_test_memtrace_in(&r, dir, "plot", "killed.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet_ptr_nonnull(strstr(r.out, ">event sequence number (the trace has no "
			     "time for every event)</text>"));
	mt_quiet_ptr_nonnull(strstr(r.out, ">CAVEATED trace (missing_stop_event): "
			     "the curve shows only what it recorded</text>"));
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, dir, "plot", "app.jsonl", NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet_ptr_nonnull(strstr(r.out, ">time since the trace started</text>"));
	mt_test_run_release(&r);
	free(dir);
}
END_TEST

/* A trace of span_ns: one block allocated at the start, freed at the end. */
static void write_span_trace(const char *path, uint64_t span_ns)
{
	FILE *f = fopen(path, "w");

	mt_quiet(f != NULL, "cannot write %s", path);
	fprintf(f,
		"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"pid\":1,\"exe\":\"/x\",\"t\":0}\n"
		"{\"v\":1,\"seq\":2,\"kind\":\"allocator\",\"allocator_id\":0,\"name\":\"libc\"}\n"
		"{\"v\":1,\"seq\":3,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x10\","
		"\"size\":4096,\"fn\":\"malloc\",\"tid\":1,\"t\":1}\n"
		"{\"v\":1,\"seq\":4,\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"0x10\","
		"\"fn\":\"free\",\"tid\":1,\"t\":%" PRIu64 "}\n"
		"{\"v\":1,\"seq\":5,\"kind\":\"trace.stop\",\"reason\":\"exit\",\"dropped\":0,"
		"\"t\":%" PRIu64 "}\n", span_ns, span_ns);
	mt_quiet_int_eq(fclose(f), 0);
}

/* The time axis's labels, "|"-joined, of a plot. */
static void x_tick_labels(const char *svg, char *out, size_t cap)
{
	const char *tag = "y=\"409.0\" text-anchor=\"middle\">";
	size_t n = 0;

	out[0] = 0;
	for (const char *p = svg; (p = strstr(p, tag)); ) {
		const char *label = p + strlen(tag), *end = strchr(label, '<');

		n += (size_t)snprintf(out + n, cap - n, "%s%.*s", n ? "|" : "",
				      (int)(end - label), label);
		ck_assert_uint_lt(n, cap);
		p = end;
	}
}

/* One unit for the whole time axis, the largest the span holds, and a
 * decimal only where a tick has one: over 800 ns, 3 ms, 4.1 s and 25
 * minutes. */
START_TEST(test_plot_time_axis_has_one_unit_and_no_false_precision)
{
	static const struct {
		uint64_t span;
		const char *labels;
	} cases[] = {
		{ 800, "0 ns|100 ns|200 ns|300 ns|400 ns|500 ns|600 ns|700 ns|800 ns" },
		{ 3000000, "0 ms|0.5 ms|1 ms|1.5 ms|2 ms|2.5 ms|3 ms" },
		{ 4100000000ull, "0 s|1 s|2 s|3 s|4 s" },
		{ 1500000000000ull, "0 s|200 s|400 s|600 s|800 s|1000 s|1200 s|1400 s" },
	};
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "span.jsonl");
	char got[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		mt_test_run_t r;

		write_span_trace(trace, cases[i].span);
		mt_test_memtrace_in(&r, NULL, "plot", trace, NULL);
		mt_quiet_int_eq(r.status, 0);
		x_tick_labels(r.out, got, sizeof(got));
		mt_quiet(!strcmp(got, cases[i].labels), "span %" PRIu64 " ns: '%s', want '%s'",
			 cases[i].span, got, cases[i].labels);
		mt_test_run_release(&r);
	}
	free(trace);
}
END_TEST

/* ---- rendering in Chromium, where it is installed ---- */

typedef int (*uncompress_fn)(unsigned char *, unsigned long *,
			     const unsigned char *, unsigned long);

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
	int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);

	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/*
 * Decode an 8-bit RGB or RGBA PNG (what a screenshot is) into RGB pixels,
 * with zlib's uncompress(), looked up at run time so the suite does not
 * link zlib for this one test.
 */
static unsigned char *png_rgb(const unsigned char *png, size_t len,
			      uint32_t *w, uint32_t *h)
{
	void *z = dlopen("libz.so.1", RTLD_NOW);
	uncompress_fn uncompress_;
	unsigned char *idat = NULL, *raw, *rgb;
	size_t nidat = 0, pos = 8;
	unsigned long rawlen;
	int channels = 0;

	mt_quiet(z != NULL, "cannot load zlib to read the PNG: %s", dlerror());
	uncompress_ = (uncompress_fn)(uintptr_t)dlsym(z, "uncompress");
	mt_quiet_ptr_nonnull(uncompress_);
	mt_quiet(len > 33 && !memcmp(png, "\x89PNG\r\n\x1a\n", 8), "not a PNG");
	while (pos + 12 <= len) {
		uint32_t n = be32(png + pos);
		const unsigned char *type = png + pos + 4, *data = png + pos + 8;

		mt_quiet_uint_le(pos + 12 + n, len);
		if (!memcmp(type, "IHDR", 4)) {
			*w = be32(data);
			*h = be32(data + 4);
			mt_quiet(data[8] == 8 && (data[9] == 2 || data[9] == 6) &&
				 data[12] == 0, "a PNG this test does not read "
				 "(depth %d, colour type %d, interlace %d)",
				 data[8], data[9], data[12]);
			channels = data[9] == 6 ? 4 : 3;
		} else if (!memcmp(type, "IDAT", 4)) {
			idat = realloc(idat, nidat + n);
			mt_quiet_ptr_nonnull(idat);
			memcpy(idat + nidat, data, n);
			nidat += n;
		}
		pos += 12 + n;
	}
	ck_assert_int_ne(channels, 0);
	rawlen = (unsigned long)(*h) * (1 + (unsigned long)(*w) * channels);
	raw = malloc(rawlen);
	rgb = malloc((size_t)*w * *h * 3);
	ck_assert(raw && rgb);
	mt_quiet_int_eq(uncompress_(raw, &rawlen, idat, nidat), 0);
	mt_quiet_uint_eq(rawlen, (unsigned long)(*h) * (1 + (unsigned long)(*w) * channels));
	for (uint32_t y = 0; y < *h; y++) {
		size_t stride = (size_t)*w * channels;
		unsigned char *row = raw + y * (stride + 1) + 1;
		unsigned char *prev = y ? row - stride - 1 : NULL;
		int filter = row[-1];

		for (size_t i = 0; i < stride; i++) {
			int a = i >= (size_t)channels ? row[i - channels] : 0;
			int b = prev ? prev[i] : 0;
			int c = prev && i >= (size_t)channels ? prev[i - channels] : 0;

			switch (filter) {
			case 0: break;
			case 1: row[i] += a; break;
			case 2: row[i] += b; break;
			case 3: row[i] += (a + b) / 2; break;
			case 4: row[i] += paeth(a, b, c); break;
			default: ck_abort_msg("PNG filter %d", filter);
			}
		}
		for (uint32_t x = 0; x < *w; x++)
			memcpy(rgb + ((size_t)y * *w + x) * 3, row + (size_t)x * channels, 3);
	}
	free(raw);
	free(idat);
	dlclose(z);
	return rgb;
}

static void plot_renders_in_chromium(void)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "demo.jsonl");
	char *program = demo_program(), *svg = NULL, *png = mt_test_path(dir, "heap.png");
	char *svg_path = mt_test_path(dir, "heap.svg"), *profile = mt_test_path(dir, "profile");
	char shot[4096], url[4096], user_data[4096], home[4096];
	char *argv[] = { CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
			 "--hide-scrollbars", "--window-size=880,460", user_data,
			 shot, url, NULL };
	char *env[] = { home, NULL };
	unsigned char *rgb, *data;
	uint32_t w = 0, h = 0;
	size_t len, ink = 0, blue = 0, red = 0;
	mt_test_run_t r;

	trace_program(program, trace);
	free(plot_of(trace, dir, "heap.svg", &len));
	snprintf(shot, sizeof(shot), "--screenshot=%s", png);
	snprintf(url, sizeof(url), "file://%s", svg_path);
	snprintf(user_data, sizeof(user_data), "--user-data-dir=%s", profile);
	snprintf(home, sizeof(home), "HOME=%s", dir);
	mt_test_run(&r, argv, env);
	mt_quiet(r.status == 0, "chromium exits %d: %s", r.status, r.err);
	mt_test_run_release(&r);
	data = (unsigned char *)mt_test_read(png, &len);
	mt_quiet(data != NULL, "chromium wrote no %s", png);
	rgb = png_rgb(data, len, &w, &h);
	mt_quiet_uint_ge(w, 880);
	mt_quiet_uint_ge(h, 460);
	/* Not blank: text, axes and curves ink a good part of the page, and
	 * the heap's blue line and the peak's red marker are there. */
	for (size_t i = 0; i < (size_t)w * h; i++) {
		const unsigned char *p = rgb + i * 3;

		ink += p[0] < 200 || p[1] < 200 || p[2] < 200;
		blue += abs(p[0] - 0x1f) < 40 && abs(p[1] - 0x5f) < 40 && abs(p[2] - 0xa8) < 40;
		red += abs(p[0] - 0xd6) < 40 && abs(p[1] - 0x27) < 40 && abs(p[2] - 0x28) < 40;
	}
	mt_quiet(ink > (size_t)w * h / 100, "only %zu inked pixels", ink);
	mt_quiet(blue > 200, "only %zu pixels of the heap's line", blue);
	mt_quiet(red > 20, "only %zu pixels of the peak's marker", red);
	free(rgb);
	free(data);
	free(svg);
	free(profile);
	free(svg_path);
	free(png);
	free(program);
	free(trace);
}

/* make check does not install Chromium; make browser-check does. */
START_TEST(test_plot_renders_in_chromium)
{
	if (access(CHROMIUM, X_OK) != 0) {
		MT_TEST_SKIP("%s is not installed (make browser-check installs it)", CHROMIUM);
		return;
	}
	plot_renders_in_chromium();
}
END_TEST

/* ---- flamegraph's SVG ---- */

/* The flame graph of trace by metric (NULL: the default) into dir/name;
 * returns the SVG (malloc'd). */
static char *flame_svg_of(const char *trace, const char *dir, const char *name,
			  const char *metric)
{
	char *out = mt_test_path(dir, name), *svg;
	mt_test_run_t r;
	size_t len;

	if (metric)
		mt_test_memtrace_in(&r, NULL, "flamegraph", trace, "--metric", metric,
				    "-o", out, NULL);
	else
		mt_test_memtrace_in(&r, NULL, "flamegraph", trace, "-o", out, NULL);
	mt_quiet(r.status == 0, "flamegraph exits %d: %s", r.status, r.err);
	mt_test_run_release(&r);
	svg = mt_test_read(out, &len);
	mt_quiet(svg != NULL, "flamegraph wrote no %s", out);
	free(out);
	return svg;
}

/* xmllint --noout path must pass: the document is well-formed XML. */
static void assert_xmllint_passes(const char *path)
{
	char *argv[] = { "/usr/bin/xmllint", "--noout", (char *)path, NULL };
	mt_test_run_t r;

	mt_quiet(access(argv[0], X_OK) == 0, "xmllint is missing (scripts/install-deps "
					     "installs libxml2-utils)");
	mt_test_run(&r, argv, NULL);
	mt_quiet(r.status == 0, "xmllint %s: %s", path, r.err);
	mt_test_run_release(&r);
}

/* A frame of a flame graph: its name (XML as written), level, width. */
typedef struct {
	char *name;
	unsigned depth;
	double width;
} svg_frame_t;

/* The frames of svg, in document order; *n their count. */
static svg_frame_t *svg_frames(const char *svg, size_t *n)
{
	svg_frame_t *f = NULL;
	double root_y = -1;
	size_t cap = 0;

	*n = 0;
	for (const char *p = svg; (p = strstr(p, "<g class=\"f\"><title>")); ) {
		const char *name = p + strlen("<g class=\"f\"><title>");
		const char *end = strstr(name, "</title>"), *paren = end;
		const char *rect = strstr(name, "<rect ");
		double x, y, w;

		mt_quiet(end && rect, "a frame without its title or rect: %.200s", p);
		while (paren > name && strncmp(paren, " (", 2))
			paren--;
		mt_quiet(sscanf(rect, "<rect x=\"%lf\" y=\"%lf\" width=\"%lf\"", &x, &y, &w) == 3,
			 "a rect without x, y, width: %.100s", rect);
		if (root_y < 0)
			root_y = y; /* the root comes first */
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			f = realloc(f, cap * sizeof(*f));
			ck_assert_ptr_nonnull(f);
		}
		f[*n].name = strndup(name, (size_t)(paren - name));
		f[*n].depth = (unsigned)((root_y - y) / 16 + 0.5);
		f[*n].width = w;
		(*n)++;
		p = end;
	}
	return f;
}

static void svg_frames_free(svg_frame_t *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(f[i].name);
	free(f);
}

/*
 * Every frame of the flame graph is a frame of the folded stacks, at its
 * level, and as wide as its share of their total: at each level, the
 * frames of one name together are as wide as the folded lines whose frame
 * at that level has that name, over the total, times the graph's 1180
 * pixels; and every name at every level of the folded lines has a frame.
 */
START_TEST(test_flamegraph_svg_frames_and_widths_are_the_folded_totals)
{
	static const char *const metrics[] = { "allocations", "bytes", "leaked", "peak" };
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "demo.jsonl");
	char *program = demo_program();

	trace_program(program, trace);
	for (size_t m = 0; m < 4; m++) {
		char *svg = flame_svg_of(trace, dir, "f.svg", metrics[m]);
		size_t nframes, nkeys = 0;
		svg_frame_t *frames = svg_frames(svg, &nframes);
		/* The folded lines' sums by level and name. */
		svg_frame_t want[512];
		uint64_t total = 0;
		mt_test_run_t r;

		mt_test_memtrace_in(&r, NULL, "flamegraph", "--folded", trace, "--metric",
				    metrics[m], NULL);
		mt_quiet_int_eq(r.status, 0);
		total = folded_total(r.out);
		mt_quiet_uint_gt(total, 0);
		for (const char *line = r.out; *line; line = strchr(line, '\n') + 1) {
			const char *space = line + strcspn(line, "\n");
			uint64_t v;
			unsigned depth = 1;

			while (*space != ' ')
				space--;
			v = strtoull(space + 1, NULL, 10);
			for (const char *f = line; f < space; depth++) {
				size_t len = strcspn(f, "; ");
				size_t k = 0;

				/* The demo's names hold no space. */
				while (k < nkeys && !(want[k].depth == depth &&
						      strlen(want[k].name) == len &&
						      !strncmp(want[k].name, f, len)))
					k++;
				if (k == nkeys) {
					ck_assert_uint_lt(nkeys, 512);
					want[nkeys++] = (svg_frame_t){ strndup(f, len), depth, 0 };
				}
				want[k].width += (double)v;
				f += len + (f[len] == ';');
			}
		}
		mt_quiet(nframes > 0 && !strcmp(frames[0].name, "all") && frames[0].depth == 0,
			 "%s: the first frame is no root", metrics[m]);
		ck_assert_double_eq_tol(frames[0].width, 1180.0, 0.006);
		for (size_t k = 0; k < nkeys; k++) {
			double got = 0;
			unsigned count = 0;

			for (size_t i = 0; i < nframes; i++)
				if (frames[i].depth == want[k].depth &&
				    !strcmp(frames[i].name, want[k].name)) {
					got += frames[i].width;
					count++;
				}
			mt_quiet(count > 0, "%s: no frame %s at level %u", metrics[m],
				 want[k].name, want[k].depth);
			mt_quiet(fabs(got - want[k].width / (double)total * 1180.0) <= 0.006 * count,
				 "%s: %s at level %u is %.2f px wide, its figures %.0f of %" PRIu64,
				 metrics[m], want[k].name, want[k].depth, got, want[k].width, total);
		}
		/* No frame the folded lines do not have. */
		for (size_t i = 1; i < nframes; i++) {
			size_t k = 0;

			while (k < nkeys && !(want[k].depth == frames[i].depth &&
					      !strcmp(want[k].name, frames[i].name)))
				k++;
			mt_quiet(k < nkeys, "%s: frame %s at level %u is in no folded line",
				 metrics[m], frames[i].name, frames[i].depth);
		}
		for (size_t k = 0; k < nkeys; k++)
			free(want[k].name);
		svg_frames_free(frames, nframes);
		mt_test_run_release(&r);
		free(svg);
	}
	free(program);
	free(trace);
}
END_TEST

/* The root's tooltip gives the total in human units and 100 %; the
 * metric is in the title. */
START_TEST(test_flamegraph_svg_tooltips_give_the_figure_and_share)
{
	char *dir = report_dir(), *scratch = mt_test_scratch();
	char *trace = mt_test_path(dir, "app.jsonl");
	char *svg = flame_svg_of(trace, scratch, "a.svg", NULL);

	mt_quiet(strstr(svg, "<title>all (10 calls, 100.00%)</title>") &&
		 strstr(svg, "<title>xstrdup (3 calls, 30.00%)</title>") &&
		 strstr(svg, ">Allocation calls by stack: app.jsonl</text>"),
		 "allocations:\n%.3000s", svg);
	free(svg);
	svg = flame_svg_of(trace, scratch, "b.svg", "bytes");
	mt_quiet(strstr(svg, "<title>all (13.6 KiB, 13972 bytes, 100.00%)</title>") &&
		 strstr(svg, "<title>[no stack] (500 bytes, 3.58%)</title>"),
		 "bytes:\n%.3000s", svg);
	free(svg);
	free(trace);
	free(dir);
}
END_TEST

/* Well-formed XML, by the test's own checker and by xmllint, for every
 * metric of a real run, of the fixtures, and of a trace without
 * allocations (a graph that says so). */
START_TEST(test_flamegraph_svg_is_well_formed_xml)
{
	static const char *const metrics[] = { "allocations", "bytes", "leaked", "peak" };
	static const char *const fixtures[] = { "app.jsonl", "killed.jsonl", "empty.jsonl",
						"realloc.jsonl" };
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "demo.jsonl");
	char *program = demo_program(), *rdir = report_dir();
	char *path = mt_test_path(dir, "f.svg");

	trace_program(program, trace);
	for (size_t m = 0; m < 4; m++) {
		free(flame_svg_of(trace, dir, "f.svg", metrics[m]));
		assert_well_formed(path);
		assert_xmllint_passes(path);
	}
	for (size_t i = 0; i < 4; i++) {
		char *fixture = mt_test_path(rdir, fixtures[i]), *svg;

		svg = flame_svg_of(fixture, dir, "f.svg", NULL);
		assert_well_formed(path);
		assert_xmllint_passes(path);
		if (i == 2)
			mt_quiet(strstr(svg, ">no allocation call in this trace</text>") &&
				 !strstr(svg, "<g class=\"f\">"), "empty:\n%s", svg);
		free(svg);
		free(fixture);
	}
	free(path);
	free(rdir);
	free(program);
	free(trace);
}
END_TEST

/* Names with markup, quotes, "]]>", a lone surrogate: escaped, the
 * document well-formed, and the names whole in the tooltips. */
START_TEST(test_flamegraph_svg_escapes_hostile_names)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "hostile.jsonl");
	char *path = mt_test_path(dir, "h.svg"), *svg;
	static const char text[] =
		"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"pid\":1,\"exe\":\"/x\"}\n"
		"{\"v\":1,\"seq\":2,\"kind\":\"allocator\",\"allocator_id\":0,\"name\":\"libc\"}\n"
		"{\"v\":1,\"seq\":3,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x1\",\"symbol\":\"main\"}\n"
		"{\"v\":1,\"seq\":4,\"kind\":\"frame\",\"frame_id\":2,\"ip\":\"0x2\","
		"\"symbol\":\"a<b>&c\\\"d'e]]>f</title><script>x()</script>\"}\n"
		"{\"v\":1,\"seq\":5,\"kind\":\"frame\",\"frame_id\":3,\"ip\":\"0x3\","
		"\"symbol\":\"op<(std::vector<int>&)\\ud800\\ufffe\"}\n"
		"{\"v\":1,\"seq\":6,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[2,1]}\n"
		"{\"v\":1,\"seq\":7,\"kind\":\"stack\",\"stack_id\":2,\"frames\":[3,1]}\n"
		"{\"v\":1,\"seq\":8,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x10\","
		"\"size\":10,\"fn\":\"malloc\",\"stack\":1,\"tid\":1}\n"
		"{\"v\":1,\"seq\":9,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x20\","
		"\"size\":10,\"fn\":\"malloc\",\"stack\":2,\"tid\":1}\n"
		"{\"v\":1,\"seq\":10,\"kind\":\"trace.stop\"}\n";

	mt_test_write(trace, text, strlen(text));
	svg = flame_svg_of(trace, dir, "h.svg", NULL);
	assert_well_formed(path);
	assert_xmllint_passes(path);
	mt_quiet(strstr(svg, "<title>a&lt;b&gt;&amp;c&quot;d&apos;e]]&gt;f&lt;/title&gt;"
			     "&lt;script&gt;x()&lt;/script&gt; (1 call, 50.00%)</title>") &&
		 strstr(svg, "<title>op&lt;(std::vector&lt;int&gt;&amp;)\xef\xbf\xbd\xef\xbf\xbd "
			     "(1 call, 50.00%)</title>"),
		 "names:\n%.4000s", svg);
	free(svg);
	free(path);
	free(trace);
}
END_TEST

/* Bytes XML cannot hold become U+FFFD, one for each byte that is no
 * character; a label longer than its box keeps its first characters and
 * "..", counted in characters, not bytes. */
START_TEST(test_svg_text_replaces_what_xml_cannot_hold)
{
	static const struct {
		const char *in;
		size_t max;
		const char *out;
	} cases[] = {
		{ "plain", 0, "plain" },
		{ "<&>\"'", 0, "&lt;&amp;&gt;&quot;&apos;" },
		{ "a\xff" "b", 0, "a\xef\xbf\xbd" "b" },
		{ "\xc3(", 0, "\xef\xbf\xbd(" },
		{ "\xed\xa0\x80", 0, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
		{ "x\xef\xbf\xbey\xef\xbf\xbf", 0, "x\xef\xbf\xbdy\xef\xbf\xbd" },
		{ "tab\there\x01\x7f", 0, "tab\xef\xbf\xbdhere\xef\xbf\xbd\xef\xbf\xbd" },
		{ "\xe2\x82\xac\xe2\x82", 0, "\xe2\x82\xac\xef\xbf\xbd\xef\xbf\xbd" },
		{ "abcdefg", 5, "abc.." },
		{ "abcde", 5, "abcde" },
		{ "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 5,
		  "\xc3\xa9\xc3\xa9\xc3\xa9.." },
		{ "a<b<c<d", 4, "a&lt;.." },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		mt_buf_t b = MT_BUF_INIT;

		ck_assert_int_eq(mt_xml_add_text(&b, cases[i].in, strlen(cases[i].in),
						      cases[i].max), MT_OK);
		ck_assert_int_eq(mt_buf_add(&b, "", 1), MT_OK);
		mt_quiet(!strcmp(b.data, cases[i].out), "case %zu: '%s', want '%s'", i,
			 b.data, cases[i].out);
		mt_buf_release(&b);
	}
}
END_TEST

/* Its script and style are inline and it names nothing outside itself:
 * no link, no URL but the SVG namespace, no external entity. */
START_TEST(test_flamegraph_svg_is_self_contained)
{
	char *dir = report_dir(), *scratch = mt_test_scratch();
	char *trace = mt_test_path(dir, "app.jsonl");
	char *svg = flame_svg_of(trace, scratch, "a.svg", "peak");
	const char *ns = "<svg xmlns=\"http://www.w3.org/2000/svg\"";
	const char *at = strstr(svg, ns);

	mt_quiet(at != NULL, "not SVG");
	/* The namespace is the one URL: none before it, none after. */
	mt_quiet(strstr(svg, "http") == at + strlen("<svg xmlns=\""), "a URL before the namespace");
	mt_quiet(!strstr(at + strlen(ns), "http"), "a URL beyond the namespace");
	mt_quiet(!strstr(svg, "href") && !strstr(svg, "url(") && !strstr(svg, "<!ENTITY") &&
		 !strstr(svg, "src=") && !strstr(svg, "@import"),
		 "a reference to outside:\n%.2000s", svg);
	mt_quiet(strstr(svg, "<script><![CDATA[") && strstr(svg, "<style><![CDATA["),
		 "no inline script and style");
	free(svg);
	free(trace);
	free(dir);
}
END_TEST

/* ---- every allocation failure ---- */

/* Whether dir holds exactly the one file name. */
static int dir_holds_only(const char *dir, const char *name)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int others = 0, found = 0;

	mt_quiet_ptr_nonnull(d);
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!strcmp(de->d_name, name))
			found = 1;
		else
			others++;
	}
	closedir(d);
	return found && !others;
}

/*
 * Run `memtrace cmd TRACE -o OUT` in process under every allocation
 * failure (sticky: and every one after it): each must exit 4 saying so,
 * leave no output and no temporary file, and free all it took; the first
 * run that no failure reaches must write what an unfailed run writes.
 */
static void sweep(const char *cmd, const char *trace_src, int sticky)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "trace.jsonl");
	char *out = mt_test_path(dir, "out"), *ref, *got, errbuf[256];
	FILE *err = tmpfile();
	int saved = dup(2), rc;
	uint64_t calls_ref, n;
	int64_t before;
	size_t ref_len, got_len;

	copy_file(trace_src, trace, 0);
	mt_quiet_ptr_nonnull(err);
	fflush(stderr);
	mt_quiet_int_eq(dup2(fileno(err), 2), 2);
#define RUN()                                                                  \
	({                                                                     \
		char *argv_[] = { "memtrace", (char *)cmd, trace, "-o", out, NULL }; \
		mt_cli_main(5, argv_);                                         \
	})
	before = mt_mem_outstanding();
	mt_mem_fail_at(0, 0);
	rc = RUN();
	calls_ref = mt_mem_calls();
	mt_quiet_int_eq(rc, 0);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
	mt_quiet_uint_gt(calls_ref, 10);
	ref = mt_test_read(out, &ref_len);
	mt_quiet_ptr_nonnull(ref);
	mt_quiet_int_eq(unlink(out), 0);
	for (n = 1; n <= calls_ref + 1; n++) {
		uint64_t calls;

		mt_quiet_int_eq(ftruncate(fileno(err), 0), 0);
		mt_quiet_int_eq(fseek(err, 0, SEEK_SET), 0);
		before = mt_mem_outstanding();
		mt_mem_fail_at(n, sticky);
		rc = RUN();
		calls = mt_mem_calls();
		mt_mem_fail_at(0, 0);
		mt_quiet(mt_mem_outstanding() == before, "%s, N=%" PRIu64 ": %" PRId64
			 " blocks leaked", cmd, n, mt_mem_outstanding() - before);
		if (rc == 0) {
			mt_quiet(calls < n, "%s, N=%" PRIu64 ": a failure swallowed", cmd, n);
			got = mt_test_read(out, &got_len);
			mt_quiet_ptr_nonnull(got);
			ck_assert(got_len == ref_len && !memcmp(got, ref, ref_len));
			free(got);
			break;
		}
		mt_quiet(rc == MT_EXIT_NOMEM, "%s, N=%" PRIu64 ": exit %d", cmd, n, rc);
		memset(errbuf, 0, sizeof(errbuf));
		ck_assert_int_ge(pread(fileno(err), errbuf, sizeof(errbuf) - 1, 0), 0);
		mt_quiet(strstr(errbuf, "out of memory"), "%s, N=%" PRIu64 ": stderr '%s'",
			 cmd, n, errbuf);
		mt_quiet(dir_holds_only(dir, "trace.jsonl"),
			 "%s, N=%" PRIu64 ": an output was left behind", cmd, n);
	}
#undef RUN
	/* Every one of the unfailed run's allocations was made to fail. */
	mt_quiet(n == calls_ref + 1, "%s: the sweep ended at N=%" PRIu64
		 "; an unfailed run makes %" PRIu64, cmd, n, calls_ref);
	dup2(saved, 2);
	close(saved);
	fclose(err);
	free(ref);
	free(out);
	free(trace);
}

/* The demo workload's trace with libc's path spoiled: the workload's own
 * module is read with libdw under the failures, quickly. */
static char *demo_trace_without_libc(const char *dir)
{
	char *trace = mt_test_path(dir, "demo.jsonl"), *program = demo_program();
	char *spoiled = mt_test_path(dir, "demo-nolibc.jsonl"), *text, *p;
	size_t len;

	trace_program(program, trace);
	text = mt_test_read(trace, &len);
	mt_quiet_ptr_nonnull(text);
	while ((p = strstr(text, "\"module\":\"/usr/lib/")) ||
	       (p = strstr(text, "\"module\":\"/lib/")))
		memcpy(p + 10, "/no", 3);
	mt_test_write(spoiled, text, len);
	free(text);
	free(program);
	free(trace);
	return spoiled;
}

static void sweep_both(const char *cmd)
{
	char *fixture = mt_test_fixture("report/app.jsonl");
	char *dir = mt_test_scratch(), *demo = demo_trace_without_libc(dir);

	sweep(cmd, fixture, 0);
	sweep(cmd, fixture, 1);
	sweep(cmd, demo, 0);
	sweep(cmd, demo, 1);
	free(demo);
	free(fixture);
}

START_TEST(test_report_survives_every_allocation_failure)
{
	sweep_both("report");
}
END_TEST

START_TEST(test_flamegraph_survives_every_allocation_failure)
{
	sweep_both("flamegraph");
}
END_TEST

START_TEST(test_plot_survives_every_allocation_failure)
{
	sweep_both("plot");
}
END_TEST

START_TEST(test_commands_are_listed_in_the_usage)
{
	mt_test_run_t r;
	static const char *const cmds[] = { "report", "flamegraph", "plot" };

	mt_test_memtrace_in(&r, NULL, "--help", NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet_ptr_nonnull(strstr(r.out, "\n  report TRACE "));
	mt_quiet_ptr_nonnull(strstr(r.out, "\n  flamegraph TRACE "));
	mt_quiet_ptr_nonnull(strstr(r.out, "\n  plot TRACE "));
	mt_test_run_release(&r);
	for (size_t i = 0; i < 3; i++) {
		char want[64];

		mt_test_memtrace_in(&r, NULL, cmds[i], "--help", NULL);
		mt_quiet_int_eq(r.status, 0);
		snprintf(want, sizeof(want), "usage: memtrace %s TRACE", cmds[i]);
		mt_quiet(!strncmp(r.out, want, strlen(want)), "%s", r.out);
		mt_test_run_release(&r);
	}
}
END_TEST

/* ---- stacks cut at the depth limit, many deep stacks, a long run ---- */

/* A trace with stack_depth depth (none when 0) and one allocation from
 * each of nstacks stacks of frames frames each, frames from 1 (the
 * innermost) named f<id>; stack i uses frames i, i+1, ... so that no two
 * stacks fold alike.  Stack i has lens[i % nlens] frames. */
static void write_stacks_trace(const char *path, unsigned depth,
			       unsigned nstacks, const unsigned *lens,
			       unsigned nlens)
{
	FILE *f = fopen(path, "w");
	uint64_t seq = 1;
	unsigned nframes = nstacks + 64;

	mt_quiet_ptr_nonnull(f);
	if (depth)
		fprintf(f, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"trace.start\","
			   "\"stack_depth\":%u}\n", seq++, depth);
	else
		fprintf(f, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"trace.start\"}\n", seq++);
	fprintf(f, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"allocator\",\"allocator_id\":0}\n", seq++);
	for (unsigned id = 1; id <= nframes; id++)
		fprintf(f, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"frame\",\"frame_id\":%u,"
			   "\"ip\":\"0x%x\",\"symbol\":\"f%u\"}\n", seq++, id, 0x400000 + id * 16, id);
	for (unsigned i = 0; i < nstacks; i++) {
		unsigned len = lens[i % nlens];

		fprintf(f, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"stack\",\"stack_id\":%u,"
			   "\"frames\":[", seq++, i + 1);
		for (unsigned k = 0; k < len; k++)
			fprintf(f, "%s%u", k ? "," : "", 1 + (i + k * 7) % nframes);
		fprintf(f, "]}\n");
	}
	for (unsigned i = 0; i < nstacks; i++)
		fprintf(f, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"alloc\",\"allocator_id\":0,"
			   "\"ptr\":\"0x%x\",\"size\":%u,\"fn\":\"malloc\",\"stack\":%u,\"tid\":1}\n",
			seq++, 0x1000000 + i * 64, 16 + i % 32, i + 1);
	fprintf(f, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"trace.stop\"}\n", seq);
	mt_quiet_int_eq(fclose(f), 0);
}

/* The folded line stack i of write_stacks_trace() should give. */
static void expected_line(char *buf, size_t cap, unsigned i, unsigned len,
			  unsigned depth, unsigned nstacks)
{
	size_t n = 0;

	buf[0] = 0;
	if (depth && len == depth)
		n += (size_t)snprintf(buf + n, cap - n, "[truncated];");
	for (unsigned k = len; k-- > 0;)
		n += (size_t)snprintf(buf + n, cap - n, "f%u%s",
				      1 + (i + k * 7) % (nstacks + 64), k ? ";" : " 1");
	ck_assert_uint_lt(n, cap);
}

/* Whether out holds line as one of its lines. */
static int has_line(const char *out, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = out; (p = strstr(p, line)); p++)
		if ((p == out || p[-1] == '\n') && p[n] == '\n')
			return 1;
	return 0;
}

/* A stack of as many frames as trace.start's stack_depth was cut there
 * (the preload keeps the innermost ones): its root-most frame is
 * "[truncated]".  Shorter stacks are whole; without a stack_depth no
 * stack is marked. */
START_TEST(test_flamegraph_marks_stacks_cut_at_the_depth_limit)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "cut.jsonl");
	static const unsigned lens[] = { 4, 3, 1 };
	char want[256];

	for (unsigned depth = 0; depth <= 4; depth += 4) {
		mt_test_run_t r;
		unsigned marked = 0;

		write_stacks_trace(trace, depth, 6, lens, 3);
		mt_test_memtrace_in(&r, NULL, "flamegraph", "--folded", trace, NULL);
		mt_quiet_int_eq(r.status, 0);
		for (unsigned i = 0; i < 6; i++) {
			expected_line(want, sizeof(want), i, lens[i % 3], depth, 6);
			mt_quiet(has_line(r.out, want), "no line '%s' in:\n%s", want, r.out);
		}
		for (const char *p = r.out; (p = strstr(p, "[truncated]")); p++)
			marked++;
		/* Stacks 0 and 3 have 4 frames. */
		mt_quiet_uint_eq(marked, depth ? 2 : 0);
		mt_quiet_uint_eq(folded_total(r.out), 6);
		mt_test_run_release(&r);
	}
	free(trace);
}
END_TEST

/* 20,000 distinct stacks of 32 frames (and 31, under a stack_depth of 32)
 * from 20,064 frames: each folds to its own line, in order, with its
 * mark.  At this scale work per stack that grows with the number of
 * stacks or frames (a search over all of them) would show. */
START_TEST(test_flamegraph_folds_many_distinct_deep_stacks)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "deep.jsonl");
	static const unsigned lens[] = { 32, 31 };
	const unsigned n = 20000;
	char want[1024];
	mt_test_run_t r;
	size_t lines = 0;
	const char *prev = NULL;

	write_stacks_trace(trace, 32, n, lens, 2);
	mt_test_memtrace_in(&r, NULL, "flamegraph", "--folded", trace, NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet_uint_eq(folded_total(r.out), n);
	for (const char *p = r.out; *p; p = strchr(p, '\n') + 1) {
		/* Sorted bytewise, no two alike. */
		if (prev)
			mt_quiet(strcmp(prev, p) < 0, "lines out of order at '%.40s'", p);
		prev = p;
		lines++;
	}
	mt_quiet_uint_eq(lines, n);
	for (unsigned i = 0; i < n; i += 997) {
		expected_line(want, sizeof(want), i, lens[i % 2], 32, n);
		mt_quiet(has_line(r.out, want), "no line '%s'", want);
	}
	mt_test_run_release(&r);
	free(trace);
}
END_TEST

/* A run of 4.1 s in ns: the area under the live bytes is drawn in the
 * page's pixels, as the line is, and reaches the plot's right edge where
 * the line ends (Chromium stopped filling a path of raw nanoseconds at
 * 2.45 s of 4.1 s); no coordinate of either leaves the viewBox. */
START_TEST(test_plot_area_fills_the_whole_run)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "long.jsonl");
	FILE *f = fopen(trace, "w");
	const uint64_t span = 4100000000ull;
	uint64_t seq = 1;
	points_t area, line;
	double area_max = -1, line_max = -1;
	const char *tag;
	char *svg;
	size_t len;

	mt_quiet_ptr_nonnull(f);
	fprintf(f, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"trace.start\"}\n", seq++);
	fprintf(f, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"allocator\",\"allocator_id\":0}\n", seq++);
	for (unsigned i = 0; i <= 4000; i++)
		fprintf(f, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"alloc\",\"allocator_id\":0,"
			   "\"ptr\":\"0x%x\",\"size\":%u,\"fn\":\"malloc\",\"tid\":1,\"t\":%" PRIu64 "}\n",
			seq++, 0x100000 + i * 64, 32 + i % 50, span / 4000 * i);
	fprintf(f, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"trace.stop\"}\n", seq);
	mt_quiet_int_eq(fclose(f), 0);

	svg = plot_of(trace, dir, "long.svg", &len);
	mt_quiet_ptr_nonnull(strstr(svg, "viewBox=\"0 0 880 460\""));
	/* No transform could map figures onto the page. */
	mt_quiet_ptr_null(strstr(svg, " scale("));
	tag = svg_tag(svg, "live-bytes-area");
	mt_quiet_int_eq(strncmp(tag, "<polygon ", 9), 0);
	mt_quiet(svg_number(svg, "live-bytes-area", "data-x-end") == (double)span,
		 "data-x-end is %.0f", svg_number(svg, "live-bytes-area", "data-x-end"));
	svg_points(svg, "live-bytes-area", &area);
	svg_points(svg, "live-bytes", &line);
	mt_quiet_uint_gt(area.n, 2);
	for (size_t i = 0; i < area.n; i++) {
		mt_quiet(area.x[i] >= 0 && area.x[i] <= 880 && area.y[i] >= 0 &&
			 area.y[i] <= 460, "area point %g,%g is off the page",
			 area.x[i], area.y[i]);
		if (area.x[i] > area_max)
			area_max = area.x[i];
	}
	for (size_t i = 0; i < line.n; i++) {
		mt_quiet(line.x[i] >= 0 && line.x[i] <= 880 && line.y[i] >= 0 &&
			 line.y[i] <= 460, "line point %g,%g is off the page",
			 line.x[i], line.y[i]);
		if (line.x[i] > line_max)
			line_max = line.x[i];
	}
	mt_quiet(fabs(area_max - line_max) < 1 && fabs(area_max - PLOT_RIGHT) < 1,
		 "the area ends at x=%.2f, the line at %.2f, the plot at %.2f",
		 area_max, line_max, PLOT_RIGHT);
	/* The area is closed along the plot's bottom, from its left edge. */
	mt_quiet(fabs(area.x[0] - PLOT_LEFT) < 0.01 && fabs(area.y[0] - PLOT_BOTTOM) < 0.01,
		 "the area starts at %.2f,%.2f", area.x[0], area.y[0]);
	mt_quiet(fabs(area.x[area.n - 1] - PLOT_RIGHT) < 0.01 &&
		 fabs(area.y[area.n - 1] - PLOT_BOTTOM) < 0.01,
		 "the area ends at %.2f,%.2f", area.x[area.n - 1], area.y[area.n - 1]);
	points_free(&area);
	points_free(&line);
	free(svg);
	free(trace);
}
END_TEST

Suite *mt_suite_report(void)
{
	Suite *s = suite_create("report");
	TCase *report = tcase_create("report");
	TCase *flame = tcase_create("flamegraph");
	TCase *plot = tcase_create("plot");
	TCase *oom = tcase_create("every_allocation_failure");

	tcase_set_timeout(report, 120);
	tcase_add_test(report, test_report_golden_of_complete_trace);
	tcase_add_test(report, test_report_top_limits_each_list);
	tcase_add_test(report, test_report_says_caveated_before_any_figure);
	tcase_add_test(report, test_report_golden_of_trace_without_allocations);
	tcase_add_test(report, test_report_top_zero_gives_the_totals_alone);
	tcase_add_test(report, test_report_reads_standard_input);
	tcase_add_test(report, test_report_writes_its_output_file_whole);
	tcase_add_test(report, test_report_refuses_what_is_not_evidence);
	tcase_add_test(report, test_report_usage_errors_exit_64);
	tcase_add_test(report, test_report_shows_source_lines_of_the_demo_workload);
	tcase_add_test(report, test_report_falls_back_when_the_module_is_gone);
	tcase_add_test(report, test_report_falls_back_when_the_module_is_stripped);
	tcase_add_test(report, test_report_demangles_cxx_names);
	tcase_add_test(report, test_report_shows_an_inlined_call_with_its_call_site);
	tcase_add_test(report, test_report_shows_every_level_of_an_inline_chain_as_addr2line);
	tcase_add_test(report, test_report_shows_an_optimised_stl_program_as_addr2line);
	tcase_add_test(report, test_report_names_stl_sites_by_the_programs_own_lines);
	tcase_add_test(report, test_report_passes_over_an_alloc_fn);
	tcase_add_test(report, test_trace_frames_carry_their_modules_build_id);
	tcase_add_test(report, test_report_flags_a_module_rebuilt_since_the_run);
	tcase_add_test(report, test_trace_names_no_symbol_that_ends_before_the_frame);
	tcase_add_test(report, test_report_names_a_static_function_of_a_stripped_library_by_address);
	tcase_add_test(report, test_report_drops_a_trace_symbol_that_ends_before_the_frame);
	tcase_add_test(report, test_report_keeps_the_name_of_a_function_its_symbol_contains);
	tcase_add_test(report, test_report_site_figures_sum_to_the_totals);
	tcase_add_test(report, test_report_counts_a_sites_reallocs_as_calls);
	tcase_add_test(report, test_commands_are_listed_in_the_usage);
	suite_add_tcase(s, report);

	tcase_set_timeout(flame, 120);
	tcase_add_test(flame, test_flamegraph_golden_for_each_metric);
	tcase_add_test(flame, test_flamegraph_totals_are_the_summary_totals);
	tcase_add_test(flame, test_flamegraph_allocations_counts_a_sites_reallocs_as_calls);
	tcase_add_test(flame, test_flamegraph_demangles_cxx_names);
	tcase_add_test(flame, test_flamegraph_rejects_an_unknown_metric);
	tcase_add_test(flame, test_flamegraph_of_trace_without_allocations_is_empty);
	tcase_add_test(flame, test_flamegraph_marks_stacks_cut_at_the_depth_limit);
	tcase_add_test(flame, test_flamegraph_folds_many_distinct_deep_stacks);
	tcase_add_test(flame, test_flamegraph_svg_frames_and_widths_are_the_folded_totals);
	tcase_add_test(flame, test_flamegraph_svg_tooltips_give_the_figure_and_share);
	tcase_add_test(flame, test_flamegraph_svg_is_well_formed_xml);
	tcase_add_test(flame, test_flamegraph_svg_escapes_hostile_names);
	tcase_add_test(flame, test_svg_text_replaces_what_xml_cannot_hold);
	tcase_add_test(flame, test_flamegraph_svg_is_self_contained);
	suite_add_tcase(s, flame);

	tcase_set_timeout(plot, 180);
	tcase_add_test(plot, test_plot_golden_of_each_trace);
	tcase_add_test(plot, test_plot_is_well_formed_xml);
	tcase_add_test(plot, test_plot_curve_peaks_at_peak_live_bytes);
	tcase_add_test(plot, test_plot_is_self_contained);
	tcase_add_test(plot, test_plot_series_is_bounded_on_a_long_trace);
	tcase_add_test(plot, test_plot_axis_is_seq_without_times);
	tcase_add_test(plot, test_plot_time_axis_has_one_unit_and_no_false_precision);
	tcase_add_test(plot, test_plot_area_fills_the_whole_run);
	tcase_add_test(plot, test_plot_renders_in_chromium);
	suite_add_tcase(s, plot);

	tcase_set_timeout(oom, 300);
	tcase_add_test(oom, test_report_survives_every_allocation_failure);
	tcase_add_test(oom, test_flamegraph_survives_every_allocation_failure);
	tcase_add_test(oom, test_plot_survives_every_allocation_failure);
	suite_add_tcase(s, oom);
	return s;
}
