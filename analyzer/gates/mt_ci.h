/*
 * mt_ci: the verdicts of `gate` and `diff` in the forms CI systems read,
 * beside the text report: JUnit XML (`--junit FILE`) and GitHub Actions
 * workflow commands (`--format github`), as docs/ci-gates.md describes.
 *
 * A command fills an mt_ci_t with one case per check (a budget of gate, a
 * deciding figure of diff): its name, whether it failed, the sentence
 * that says what was measured against what, and for a failed one the site
 * that weighs most in it, with the source file and line of its innermost
 * frame whose line is known (mt_ci_set_site()).  mt_ci_junit() and
 * mt_ci_github() render it.
 *
 * Invariants: every byte of the input reaches the output escaped for it,
 * whatever it is (a symbol with '<' or '&', a path in bad UTF-8: XML gets
 * U+FFFD for a byte that is not UTF-8 and '?' for a control character it
 * cannot hold; a workflow command gets GitHub's %XX escapes); nothing
 * here writes a file or prints: the command writes the buffers (a JUnit
 * file through mt_output_replace(), whole or not at all).  MT_OK or
 * MT_ENOMEM from every function that can fail.
 */
#ifndef MT_CI_H
#define MT_CI_H

#include <stddef.h>
#include <stdint.h>

#include "../base/mt_buf.h"
#include "../gates/mt_profile.h"
#include "../model/mt_srcline.h"

/* gate has five budgets, diff two deciding figures. */
#define MT_CI_CASES_MAX 8

typedef struct {
	mt_buf_t name;    /* "--max-live", "live_bytes": the same every run */
	int failed;
	mt_buf_t message; /* one line: "--max-live 4096 (4.0 KiB): live_bytes is ..." */
	mt_buf_t site;    /* the failed check's heaviest site, or empty */
	mt_buf_t file;    /* its source file (relative to the working
			   * directory when under it), or empty */
	uint64_t line;
} mt_ci_case_t;

typedef struct {
	const char *command;   /* "gate" or "diff" */
	mt_buf_t suite;        /* "memtrace gate new.jsonl" */
	mt_buf_t verdict;      /* the text report's verdict line, no '\n' */
	mt_buf_t notes;        /* the text report's note lines, each with '\n' */
	uint64_t duration_ns;  /* the command's, for the suite's time */
	mt_ci_case_t cases[MT_CI_CASES_MAX];
	size_t ncases;

	/* private */
	mt_srcline_t lines;
} mt_ci_t;

/* An empty report of command ("gate", "diff"); mt_ci_release() must
 * follow. */
void mt_ci_init(mt_ci_t *c, const char *command);
void mt_ci_release(mt_ci_t *c);

/* The next case, empty (at most MT_CI_CASES_MAX: the caller's checks are
 * a fixed set). */
mt_ci_case_t *mt_ci_add(mt_ci_t *c);

/* How many cases failed. */
size_t mt_ci_failed(const mt_ci_t *c);

/*
 * The file and line of site s of profile p into k: those of the innermost
 * frame whose source line the module's debug information gives
 * (mt_srcline).  Nothing when p is a summary file (its site lines carry no
 * module offsets) or no frame has a line.
 */
int mt_ci_set_site(mt_ci_t *c, mt_ci_case_t *k, const mt_profile_t *p,
		   const mt_profile_site_t *s);

/*
 * A JUnit XML document: <testsuites> holding one <testsuite> (name, tests,
 * failures, errors, skipped, time) with one <testcase> per case (name,
 * classname "memtrace.COMMAND", time); a failed case has a <failure
 * message="..." type="..."> naming the check, the measured value, the
 * limit and the site, a passed one its sentence as <system-out>; the
 * notes are the suite's <system-out>.
 */
int mt_ci_junit(mt_buf_t *out, const mt_ci_t *c);

/*
 * GitHub Actions workflow commands, a line each: "::error file=F,line=L,
 * title=memtrace COMMAND NAME::MESSAGE" per failed case (without file and
 * line when unknown), "::warning title=memtrace COMMAND::NOTE" per note,
 * and when nothing failed "::notice title=memtrace COMMAND::VERDICT".
 */
int mt_ci_github(mt_buf_t *out, const mt_ci_t *c);

/* Append n bytes of s escaped for XML text (attr 0) or an attribute value
 * in double quotes (attr 1). */
int mt_ci_add_xml(mt_buf_t *b, const char *s, size_t n, int attr);

/* Append n bytes of s escaped for a workflow command's message (prop 0)
 * or a property's value (prop 1). */
int mt_ci_add_github(mt_buf_t *b, const char *s, size_t n, int prop);

#endif
