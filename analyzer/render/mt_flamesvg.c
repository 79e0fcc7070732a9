/*
 * mt_flamesvg: the flame graph as an SVG.  It must never name a frame the
 * folded stacks do not (it reads their lines back rather than walk the
 * stacks again), never write a byte that makes the document ill-formed
 * XML, and never refer to anything outside the document.
 */
#include "../render/mt_flamesvg.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
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

#define FRAME_H 16   /* a level's height; its box is one pixel less */
#define FONT_SIZE 12
#define TOP_H 48     /* the title and the controls */
#define BOTTOM_H 34  /* the line under the pointer and the search's share */
#define CHAR_W (FONT_SIZE * 0.59) /* Verdana's average, as the script's */

/* The page's script and style sheet (mt_html_assets.S). */
extern const char mt_flamesvg_script[];
extern const char mt_flamesvg_style[];

/* A frame of the merged stacks: its name in the folded text, its figure
 * (every line through it), its children as a list. */
typedef struct {
	const char *name;
	size_t len;
	uint64_t value;
	size_t first, last, next; /* children and the next sibling; 0: none */
	unsigned depth;
} node_t;

typedef struct {
	node_t *v;
	size_t n, cap;
	unsigned depth; /* the deepest level */
} tree_t;

/* The index of a new node under parent (0 for the root itself). */
static int tree_add(tree_t *t, size_t parent, const char *name, size_t len,
		    size_t *out)
{
	node_t *n;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		node_t *v = mt_mem_realloc(t->v, cap * sizeof(*v));

		if (!v)
			return MT_ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	n = &t->v[t->n];
	*n = (node_t){ name, len, 0, 0, 0, 0, 0 };
	if (t->n) {
		node_t *p = &t->v[parent];

		n->depth = p->depth + 1;
		if (p->last)
			t->v[p->last].next = t->n;
		else
			p->first = t->n;
		p->last = t->n;
		if (n->depth > t->depth)
			t->depth = n->depth;
	}
	*out = t->n++;
	return MT_OK;
}

/* parent's child named name, made when it has none. */
static int tree_child(tree_t *t, size_t parent, const char *name, size_t len,
		      size_t *out)
{
	/* The lines come sorted, so a child is most often the last one. */
	size_t last = t->v[parent].last;

	if (last && t->v[last].len == len && !memcmp(t->v[last].name, name, len)) {
		*out = last;
		return MT_OK;
	}
	for (size_t c = t->v[parent].first; c; c = t->v[c].next)
		if (t->v[c].len == len && !memcmp(t->v[c].name, name, len)) {
			*out = c;
			return MT_OK;
		}
	return tree_add(t, parent, name, len, out);
}

/* The folded lines of text (mt_flame_render()'s: "a;b;c 12\n") as a tree
 * under the root "all". */
static int tree_build(tree_t *t, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	size_t root;
	int rc;

	if ((rc = tree_add(t, 0, "all", 3, &root)))
		return rc;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *space;
		size_t at = root;
		uint64_t value;

		/* mt_flame ends every line, and never writes a newline or a
		 * ';' inside a name: a line is frames, a space, a figure. */
		assert(eol);
		for (space = eol; space > p && space[-1] != ' ';)
			space--;
		assert(space > p);
		value = strtoull(space, NULL, 10);
		t->v[root].value += value;
		for (const char *f = p; f < space - 1;) {
			const char *semi = memchr(f, ';', (size_t)(space - 1 - f));
			const char *fend = semi ? semi : space - 1;

			if ((rc = tree_child(t, at, f, (size_t)(fend - f), &at)))
				return rc;
			t->v[at].value += value;
			f = fend + 1;
		}
		p = eol + 1;
	}
	return MT_OK;
}

static int cmp_name(const node_t *a, const node_t *b)
{
	int c = memcmp(a->name, b->name, a->len < b->len ? a->len : b->len);

	return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* Sort every node's children by name (a merge sort of the lists, which
 * allocates nothing). */
static size_t sort_list(node_t *v, size_t head)
{
	size_t a = 0, b = 0, *tail, slow, fast, out = 0;

	if (!head || !v[head].next)
		return head;
	slow = head;
	fast = v[head].next;
	while (fast && v[fast].next) {
		slow = v[slow].next;
		fast = v[v[fast].next].next;
	}
	b = v[slow].next;
	v[slow].next = 0;
	a = sort_list(v, head);
	b = sort_list(v, b);
	tail = &out;
	while (a && b) {
		size_t *from = cmp_name(&v[a], &v[b]) <= 0 ? &a : &b;

		*tail = *from;
		tail = &v[*from].next;
		*from = v[*from].next;
	}
	*tail = a ? a : b;
	return out;
}

static void tree_sort(tree_t *t)
{
	for (size_t i = 0; i < t->n; i++) {
		size_t last;

		t->v[i].first = sort_list(t->v, t->v[i].first);
		for (last = t->v[i].first; last && t->v[last].next;)
			last = t->v[last].next;
		t->v[i].last = last;
	}
}

/* The colour of a frame named name: a hash of the name (FNV-1a) in greens
 * and blues, so that a frame keeps its colour from graph to graph; the
 * frames memtrace adds ("[no stack]", "[truncated]") in grey. */
static int add_colour(mt_buf_t *b, const char *name, size_t len)
{
	uint32_t h = 2166136261u;

	if (len && name[0] == '[')
		return mt_buf_add_str(b, "rgb(190,190,190)");
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	return mt_buf_addf(b, "rgb(%u,%u,%u)", 30 + (h & 0xff) * 60 / 255,
		    150 + ((h >> 8) & 0xff) * 80 / 255,
		    110 + ((h >> 16) & 0xff) * 130 / 255);
}

/* A figure in human units, as a tooltip shows it. */
static int add_figure(mt_buf_t *b, mt_flame_metric_t metric, uint64_t v)
{
	size_t mark = b->len;
	int rc;

	if (metric == MT_FLAME_ALLOCATIONS)
		return mt_units_add_count(b, v, "call", "calls");
	if (v < 1024)
		return mt_units_add_count(b, v, "byte", "bytes");
	if ((rc = mt_units_add_size(b, v)) || (rc = mt_buf_add_str(b, ", ")) ||
	    (rc = mt_units_add_count(b, v, "byte", "bytes")))
		mt_buf_truncate(b, mark);
	return rc;
}

typedef struct {
	const tree_t *t;
	mt_flame_metric_t metric;
	double scale; /* pixels a unit of the metric */
	unsigned height;
} layout_t;

/* Frame i at x, then its children left to right from x. */
static int add_frame(mt_buf_t *b, const layout_t *l, size_t i, double x)
{
	const node_t *n = &l->t->v[i];
	double w = (double)n->value * l->scale;
	double y = l->height - BOTTOM_H - (double)(n->depth + 1) * FRAME_H;
	uint64_t total = l->t->v[0].value;
	size_t fit = w > 6 ? (size_t)((w - 6) / CHAR_W) : 0;
	int rc;

	if (w < MT_FLAMESVG_MIN_WIDTH)
		return MT_OK;
	if ((rc = mt_buf_add_str(b, "<g class=\"f\"><title>")) ||
	    (rc = mt_xml_add_text(b, n->name, n->len, 0)) ||
	    (rc = mt_buf_add_str(b, " (")) ||
	    (rc = add_figure(b, l->metric, n->value)) ||
	    (rc = mt_buf_addf(b, ", %.2f%%)</title><rect x=\"%.2f\" y=\"%.1f\" "
			  "width=\"%.2f\" height=\"%d\" rx=\"2\" fill=\"",
		       (double)n->value * 100.0 / (double)total, x, y, w,
		       FRAME_H - 1)) ||
	    (rc = add_colour(b, n->name, n->len)) ||
	    (rc = mt_buf_addf(b, "\"/><text x=\"%.2f\" y=\"%.1f\">", x + 3,
		       y + FRAME_H - 5)))
		return rc;
	if (fit >= 3 && (rc = mt_xml_add_text(b, n->name, n->len, fit)))
		return rc;
	if ((rc = mt_buf_add_str(b, "</text></g>\n")))
		return rc;
	for (size_t c = n->first; c; c = l->t->v[c].next) {
		if ((rc = add_frame(b, l, c, x)))
			return rc;
		x += (double)l->t->v[c].value * l->scale;
	}
	return MT_OK;
}

static const char *const metric_title[] = {
	[MT_FLAME_ALLOCATIONS] = "Allocation calls",
	[MT_FLAME_BYTES] = "Bytes allocated",
	[MT_FLAME_LEAKED] = "Bytes leaked (live at the end)",
	[MT_FLAME_PEAK] = "Bytes live at the peak",
};

int mt_flamesvg_render(const mt_analysis_t *a, mt_flame_metric_t metric,
		       const char *name, mt_buf_t *out)
{
	mt_buf_t folded = MT_BUF_INIT;
	tree_t t = { 0 };
	layout_t l;
	size_t mark = out->len;
	const unsigned w = MT_FLAMESVG_WIDTH, xpad = MT_FLAMESVG_XPAD;
	int rc;

	ADD(mt_flame_render(a, metric, &folded));
	ADD(tree_build(&t, folded.data ? folded.data : "", folded.len));
	tree_sort(&t);
	l = (layout_t){ &t, metric, 0, 0 };
	l.height = TOP_H + (t.depth + 1) * FRAME_H + BOTTOM_H;
	if (t.v[0].value)
		l.scale = (double)(w - 2 * xpad) / (double)t.v[0].value;
	ADD(mt_buf_addf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
		      "width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\">\n",
		 w, l.height, w, l.height));
	ADD(mt_buf_add_str(out, "<style><![CDATA[\n"));
	ADD(mt_buf_add_str(out, mt_flamesvg_style));
	ADD(mt_buf_add_str(out, "]]></style>\n"));
	ADD(mt_buf_addf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" "
		      "fill=\"#f8fbfa\"/>\n", w, l.height));
	ADD(mt_buf_addf(out, "<text id=\"title\" x=\"%u\" y=\"24\" text-anchor=\"middle\">",
		 w / 2));
	ADD(mt_buf_add_str(out, metric_title[metric]));
	ADD(mt_buf_add_str(out, " by stack: "));
	ADD(mt_xml_add_text(out, name, strlen(name), 0));
	ADD(mt_buf_add_str(out, "</text>\n"));
	ADD(mt_buf_addf(out, "<text id=\"unzoom\" class=\"ctl hidden\" x=\"%u\" y=\"24\">"
		      "Reset zoom</text>\n", xpad));
	ADD(mt_buf_addf(out, "<text id=\"search\" class=\"ctl\" x=\"%u\" y=\"24\" "
		      "text-anchor=\"end\">Search</text>\n", w - xpad));
	ADD(mt_buf_addf(out, "<text id=\"details\" x=\"%u\" y=\"%u\"> </text>\n",
		 xpad, l.height - 12));
	ADD(mt_buf_addf(out, "<text id=\"matched\" x=\"%u\" y=\"%u\" "
		      "text-anchor=\"end\"> </text>\n", w - xpad, l.height - 12));
	if (!t.v[0].value) {
		ADD(mt_buf_addf(out, "<text x=\"%u\" y=\"%u\" text-anchor=\"middle\">",
			 w / 2, TOP_H + FRAME_H - 4));
		ADD(mt_buf_add_str(out, metric == MT_FLAME_ALLOCATIONS
			? "no allocation call in this trace"
			: "no byte by this figure in this trace"));
		ADD(mt_buf_add_str(out, "</text>\n"));
	}
	ADD(mt_buf_add_str(out, "<g id=\"frames\">\n"));
	if (t.v[0].value)
		ADD(add_frame(out, &l, 0, xpad));
	ADD(mt_buf_add_str(out, "</g>\n<script><![CDATA[\n"));
	ADD(mt_buf_add_str(out, mt_flamesvg_script));
	ADD(mt_buf_add_str(out, "]]></script>\n</svg>\n"));
cleanup:
	if (rc)
		mt_buf_truncate(out, mark);
	mt_mem_free(t.v);
	mt_buf_release(&folded);
	return rc;
}
