/*
 * mt_ci: JUnit XML and GitHub workflow commands of a gate's or a diff's
 * checks.  It must never let a byte of a trace's strings or a path reach
 * its output unescaped (a '<' would end the XML document's well-formedness,
 * a newline a workflow command), and never print or write anything itself.
 */
#include "../gates/mt_ci.h"

#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "../base/mt_error.h"
#include "../model/mt_heap.h"
#include "../model/mt_label.h"
#include "../../common/mt_utf8.h"

#define ADD(expr)                     \
	do {                          \
		if ((rc = (expr)))    \
			goto cleanup; \
	} while (0)

/* U+FFFD, for a byte that is not UTF-8 or a character XML cannot hold. */
static const char replacement[] = "\xef\xbf\xbd";

void mt_ci_init(mt_ci_t *c, const char *command)
{
	memset(c, 0, sizeof(*c));
	c->command = command;
	mt_srcline_init(&c->lines);
}

void mt_ci_release(mt_ci_t *c)
{
	for (size_t i = 0; i < c->ncases; i++) {
		mt_buf_release(&c->cases[i].name);
		mt_buf_release(&c->cases[i].message);
		mt_buf_release(&c->cases[i].site);
		mt_buf_release(&c->cases[i].file);
	}
	mt_buf_release(&c->suite);
	mt_buf_release(&c->verdict);
	mt_buf_release(&c->notes);
	mt_srcline_release(&c->lines);
}

mt_ci_case_t *mt_ci_add(mt_ci_t *c)
{
	mt_ci_case_t *k = &c->cases[c->ncases++];

	memset(k, 0, sizeof(*k));
	return k;
}

size_t mt_ci_failed(const mt_ci_t *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->ncases; i++)
		n += c->cases[i].failed != 0;
	return n;
}

/* ---- the site's source line ---- */

/* path relative to the working directory when it is under it: GitHub
 * places an annotation by the file's path in the repository, and a CI
 * job runs from its checkout. */
static const char *relative(const char *path)
{
	char cwd[PATH_MAX];
	size_t n;

	if (!getcwd(cwd, sizeof(cwd)) || !strcmp(cwd, "/"))
		return path;
	n = strlen(cwd);
	if (!strncmp(path, cwd, n) && path[n] == '/' && path[n + 1])
		return path + n + 1;
	return path;
}

int mt_ci_set_site(mt_ci_t *c, mt_ci_case_t *k, const mt_profile_t *p,
		   const mt_profile_site_t *s)
{
	const mt_heap_t *h = mt_profile_heap(p);
	mt_stack_t **stack;
	int rc = MT_OK;

	if (!h || !s->stack_id)
		return MT_OK;
	stack = mt_map_find(&h->stacks, s->stack_id);
	if (!stack)
		return MT_OK;
	/* The first level with a line in the program's own code (the
	 * site's label, mt_label), else the first with a line at all: a
	 * header of the STL inlined at the call is no place to act. */
	for (int own = 1, found = 0; own >= 0 && !found; own--)
		for (size_t i = 0; i < (*stack)->nframes && !found; i++) {
			uint64_t id = (*stack)->frames[i];
			const mt_frame_t *f = mt_map_find(&h->frames, id);
			mt_srcline_loc_t loc;

			if (!f)
				continue;
			ADD(mt_srcline_resolve(&c->lines, id, f, &loc));
			for (size_t j = 0; j < mt_srcline_nlevels(&loc); j++) {
				mt_srcline_level_t l = mt_srcline_level(&loc, j);

				if (!l.file || !l.line ||
				    (own && mt_label_is_machinery(NULL, f, &l)))
					continue;
				mt_buf_reset(&k->file);
				ADD(mt_buf_add_str(&k->file, relative(l.file)));
				k->line = l.line;
				found = 1;
				break;
			}
		}
cleanup:
	return rc;
}

/* ---- escaping ---- */

int mt_ci_add_xml(mt_buf_t *b, const char *s, size_t n, int attr)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	int rc = MT_OK;

	while (i < n) {
		size_t len = mt_utf8_len(u + i, n - i);
		const char *esc = NULL;

		if (!len) {
			ADD(mt_buf_add_str(b, replacement));
			i++;
			continue;
		}
		if (len == 3 && u[i] == 0xef && u[i + 1] == 0xbf &&
		    (u[i + 2] == 0xbe || u[i + 2] == 0xbf)) {
			/* U+FFFE and U+FFFF are UTF-8 but no XML character. */
			ADD(mt_buf_add_str(b, replacement));
			i += len;
			continue;
		}
		if (len == 1) {
			switch (u[i]) {
			case '&': esc = "&amp;"; break;
			case '<': esc = "&lt;"; break;
			case '>': esc = "&gt;"; break;
			case '"': esc = attr ? "&quot;" : NULL; break;
			case '\'': esc = attr ? "&apos;" : NULL; break;
			/* An attribute's reader turns a raw newline or tab into
			 * a space: as a reference it stays itself. */
			case '\n': esc = attr ? "&#10;" : NULL; break;
			case '\t': esc = attr ? "&#9;" : NULL; break;
			case '\r': esc = "&#13;"; break;
			default:
				if (u[i] < 0x20 || u[i] == 0x7f)
					esc = "?"; /* XML 1.0 has no such character */
				break;
			}
		}
		ADD(esc ? mt_buf_add_str(b, esc) : mt_buf_add(b, s + i, len));
		i += len;
	}
cleanup:
	return rc;
}

int mt_ci_add_github(mt_buf_t *b, const char *s, size_t n, int prop)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	int rc = MT_OK;

	while (i < n) {
		size_t len = mt_utf8_len(u + i, n - i);
		const char *esc = NULL;

		if (!len) {
			ADD(mt_buf_add_str(b, replacement));
			i++;
			continue;
		}
		if (len == 1) {
			/* GitHub's escapes: '%', CR and LF in a message, ':'
			 * and ',' too in a property's value. */
			switch (u[i]) {
			case '%': esc = "%25"; break;
			case '\r': esc = "%0D"; break;
			case '\n': esc = "%0A"; break;
			case ':': esc = prop ? "%3A" : NULL; break;
			case ',': esc = prop ? "%2C" : NULL; break;
			default:
				/* A terminal escape in a log line is no text. */
				if (u[i] < 0x20 || u[i] == 0x7f)
					esc = "?";
				break;
			}
		}
		ADD(esc ? mt_buf_add_str(b, esc) : mt_buf_add(b, s + i, len));
		i += len;
	}
cleanup:
	return rc;
}

static int add_xml_buf(mt_buf_t *b, const mt_buf_t *s, int attr)
{
	return mt_ci_add_xml(b, s->data ? s->data : "", s->len, attr);
}

static int add_gh_buf(mt_buf_t *b, const mt_buf_t *s, int prop)
{
	return mt_ci_add_github(b, s->data ? s->data : "", s->len, prop);
}

/* The case's whole story on one line: its sentence, then the site and
 * where it is. */
static int add_full_message(mt_buf_t *b, const mt_ci_case_t *k)
{
	int rc = MT_OK;

	ADD(mt_buf_add(b, k->message.data ? k->message.data : "", k->message.len));
	if (k->site.len) {
		ADD(mt_buf_add_str(b, "; "));
		ADD(mt_buf_add(b, k->site.data, k->site.len));
	}
	if (k->file.len) {
		ADD(mt_buf_add_str(b, ", at "));
		ADD(mt_buf_add(b, k->file.data, k->file.len));
		ADD(mt_buf_add_str(b, ":"));
		ADD(mt_buf_add_u64(b, k->line));
	}
cleanup:
	return rc;
}

/* ---- JUnit ---- */

/* Seconds with three decimals, as JUnit's readers take a time. */
static int add_seconds(mt_buf_t *b, uint64_t ns)
{
	uint64_t ms = (ns + 500000) / 1000000;
	char frac[4];
	int rc;

	frac[0] = (char)('0' + ms % 1000 / 100);
	frac[1] = (char)('0' + ms % 100 / 10);
	frac[2] = (char)('0' + ms % 10);
	frac[3] = '\0';
	ADD(mt_buf_add_u64(b, ms / 1000));
	ADD(mt_buf_add_str(b, "."));
	ADD(mt_buf_add_str(b, frac));
cleanup:
	return rc;
}

static int add_counts(mt_buf_t *b, const mt_ci_t *c, int skipped)
{
	int rc;

	ADD(mt_buf_add_str(b, " tests=\""));
	ADD(mt_buf_add_u64(b, c->ncases));
	ADD(mt_buf_add_str(b, "\" failures=\""));
	ADD(mt_buf_add_u64(b, mt_ci_failed(c)));
	ADD(mt_buf_add_str(b, "\" errors=\"0\""));
	if (skipped)
		ADD(mt_buf_add_str(b, " skipped=\"0\""));
	ADD(mt_buf_add_str(b, " time=\""));
	ADD(add_seconds(b, c->duration_ns));
	ADD(mt_buf_add_str(b, "\""));
cleanup:
	return rc;
}

int mt_ci_junit(mt_buf_t *b, const mt_ci_t *c)
{
	mt_buf_t full = MT_BUF_INIT;
	int rc = MT_OK;

	ADD(mt_buf_add_str(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			      "<testsuites"));
	ADD(add_counts(b, c, 0));
	ADD(mt_buf_add_str(b, ">\n  <testsuite name=\""));
	ADD(add_xml_buf(b, &c->suite, 1));
	ADD(mt_buf_add_str(b, "\""));
	ADD(add_counts(b, c, 1));
	ADD(mt_buf_add_str(b, ">\n"));
	for (size_t i = 0; i < c->ncases; i++) {
		const mt_ci_case_t *k = &c->cases[i];

		ADD(mt_buf_add_str(b, "    <testcase name=\""));
		ADD(add_xml_buf(b, &k->name, 1));
		ADD(mt_buf_add_str(b, "\" classname=\"memtrace."));
		ADD(mt_buf_add_str(b, c->command));
		/* The checks take no time of their own: the analysis is
		 * the suite's. */
		ADD(mt_buf_add_str(b, "\" time=\"0.000\">\n"));
		if (k->failed) {
			mt_buf_reset(&full);
			ADD(add_full_message(&full, k));
			ADD(mt_buf_add_str(b, "      <failure message=\""));
			ADD(add_xml_buf(b, &full, 1));
			ADD(mt_buf_add_str(b, "\" type=\""));
			ADD(mt_buf_add_str(b, !strcmp(c->command, "diff") ?
					      "regression" : "budget"));
			ADD(mt_buf_add_str(b, "\">"));
			ADD(add_xml_buf(b, &full, 0));
			ADD(mt_buf_add_str(b, "</failure>\n"));
		} else {
			ADD(mt_buf_add_str(b, "      <system-out>"));
			ADD(add_xml_buf(b, &k->message, 0));
			ADD(mt_buf_add_str(b, "</system-out>\n"));
		}
		ADD(mt_buf_add_str(b, "    </testcase>\n"));
	}
	if (c->notes.len) {
		ADD(mt_buf_add_str(b, "    <system-out>"));
		ADD(add_xml_buf(b, &c->notes, 0));
		ADD(mt_buf_add_str(b, "</system-out>\n"));
	}
	ADD(mt_buf_add_str(b, "  </testsuite>\n</testsuites>\n"));
cleanup:
	mt_buf_release(&full);
	return rc;
}

/* ---- GitHub ---- */

static int add_title(mt_buf_t *b, const mt_ci_t *c, const mt_buf_t *name)
{
	int rc;

	ADD(mt_buf_add_str(b, "title=memtrace "));
	ADD(mt_ci_add_github(b, c->command, strlen(c->command), 1));
	if (name) {
		ADD(mt_buf_add_str(b, " "));
		ADD(add_gh_buf(b, name, 1));
	}
	ADD(mt_buf_add_str(b, "::"));
cleanup:
	return rc;
}

int mt_ci_github(mt_buf_t *b, const mt_ci_t *c)
{
	mt_buf_t full = MT_BUF_INIT;
	int rc = MT_OK;

	for (size_t i = 0; i < c->ncases; i++) {
		const mt_ci_case_t *k = &c->cases[i];

		if (!k->failed)
			continue;
		ADD(mt_buf_add_str(b, "::error "));
		if (k->file.len) {
			ADD(mt_buf_add_str(b, "file="));
			ADD(add_gh_buf(b, &k->file, 1));
			ADD(mt_buf_add_str(b, ",line="));
			ADD(mt_buf_add_u64(b, k->line));
			ADD(mt_buf_add_str(b, ","));
		}
		ADD(add_title(b, c, &k->name));
		mt_buf_reset(&full);
		ADD(add_full_message(&full, k));
		ADD(add_gh_buf(b, &full, 0));
		ADD(mt_buf_add_str(b, "\n"));
	}
	for (size_t at = 0; at < c->notes.len;) {
		const char *line = c->notes.data + at;
		const char *nl = memchr(line, '\n', c->notes.len - at);
		size_t len = nl ? (size_t)(nl - line) : c->notes.len - at;

		size_t skip = len >= 6 && !memcmp(line, "note: ", 6) ? 6 : 0;

		/* A warning says it is a note. */
		ADD(mt_buf_add_str(b, "::warning "));
		ADD(add_title(b, c, NULL));
		ADD(mt_ci_add_github(b, line + skip, len - skip, 0));
		ADD(mt_buf_add_str(b, "\n"));
		at += len + 1;
	}
	if (!mt_ci_failed(c)) {
		ADD(mt_buf_add_str(b, "::notice "));
		ADD(add_title(b, c, NULL));
		ADD(add_gh_buf(b, &c->verdict, 0));
		ADD(mt_buf_add_str(b, "\n"));
	}
cleanup:
	mt_buf_release(&full);
	return rc;
}
