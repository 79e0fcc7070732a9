/*
 * check_docs: every command output shown in README.md and docs/ (every .md) is
 * what the command prints today, so an example cannot drift from the
 * program it describes.
 *
 * The rule the documents keep (docs/development.md states it for
 * authors): a block fenced with a bare ``` is an example.  Its lines that
 * start with "$ " are commands; the lines after each, up to the next
 * command, are what it prints, stdout and stderr together.  What a reader
 * types for their own program is fenced ```sh, data ```json, ```yaml,
 * ```xml or ```c, and anything else (usage lines, lists of messages)
 * ```text.  A bare fence whose first line is not a command fails the
 * test: no output goes unchecked by being fenced the wrong way.
 *
 * Each example runs with sh in a scratch directory of its own that holds
 * the example files (prepare()) and a link `build` to the build tree,
 * with the build tree and scripts/ first in PATH.  In the expected text a
 * line "..." (indented or not) stands for any number of lines.  Both sides are normalised
 * first (normalise()): the checkout's path reads ~/memtrace, the scratch
 * directory's path goes, and process ids, thread ids, times and
 * addresses, which change every run, read N.
 */
#include <dirent.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mt_test.h"

typedef struct {
	char **v;
	size_t n, cap;
} lines_t;

static void lines_push(lines_t *l, char *s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 32;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		ck_assert_ptr_nonnull(l->v);
	}
	l->v[l->n++] = s;
}

/* Split text into lines (no trailing empty line), trailing blanks cut. */
static lines_t split(const char *text)
{
	lines_t l = { 0 };
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t raw = nl ? (size_t)(nl - p) : strlen(p), len = raw;
		char *s = strndup(p, len);

		ck_assert_ptr_nonnull(s);
		while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
			s[--len] = '\0';
		lines_push(&l, s);
		p += raw + (nl ? 1 : 0);
	}
	return l;
}

static void lines_release(lines_t *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* Every occurrence of from in s replaced by to; s is freed. */
static char *replace_all(char *s, const char *from, const char *to)
{
	mt_test_bytes_t b = { 0 };
	size_t fl = strlen(from);
	const char *p = s, *q;

	if (fl == 0)
		return s;
	while ((q = strstr(p, from))) {
		mt_test_bytes_add(&b, p, (size_t)(q - p));
		mt_test_bytes_add(&b, to, strlen(to));
		p = q + fl;
	}
	mt_test_bytes_add(&b, p, strlen(p) + 1);
	free(s);
	return b.data;
}

/* Every match of the extended regex re in s replaced by to, in which
 * "\1" is the first group; s is freed. */
static char *replace_re(char *s, const char *re, const char *to)
{
	mt_test_bytes_t b = { 0 };
	regmatch_t m[2];
	regex_t r;
	const char *p = s;

	ck_assert_int_eq(regcomp(&r, re, REG_EXTENDED | REG_NEWLINE), 0);
	while (regexec(&r, p, 2, m, p == s ? 0 : REG_NOTBOL) == 0 && m[0].rm_eo > 0) {
		mt_test_bytes_add(&b, p, (size_t)m[0].rm_so);
		for (const char *t = to; *t; t++) {
			if (t[0] == '\\' && t[1] == '1' && m[1].rm_so >= 0) {
				mt_test_bytes_add(&b, p + m[1].rm_so, (size_t)(m[1].rm_eo - m[1].rm_so));
				t++;
			} else {
				mt_test_bytes_add(&b, t, 1);
			}
		}
		p += m[0].rm_eo;
	}
	mt_test_bytes_add(&b, p, strlen(p) + 1);
	regfree(&r);
	free(s);
	return b.data;
}

/* What changes from run to run, or from machine to machine, made equal
 * on both sides; everything else must match byte for byte. */
static char *normalise(char *s, const char *scratch)
{
	char *dir_slash;

	ck_assert_int_ge(asprintf(&dir_slash, "%s/", scratch), 0);
	s = replace_all(s, dir_slash, "");
	s = replace_all(s, scratch, ".");
	/* make sanitize's build tree is the documents' build/ too. */
	s = replace_all(s, mt_test_build_dir(), "~/memtrace/build");
	s = replace_all(s, mt_test_source_dir(), "~/memtrace");
	s = replace_re(s, "(pid|PID:?|parent) [0-9]+", "\\1 N");
	s = replace_re(s, "\"(pid|ppid|tid|t)\":[0-9]+", "\"\\1\":N");
	s = replace_re(s, "\"(ptr|ip)\":\"0x[0-9a-f]+\"", "\"\\1\":\"0xN\"");
	/* A frame without a symbol: its offset is the system library's. */
	s = replace_re(s, "0x[0-9a-f]+ in ([^ ]+)", "0xN in \\1");
	/* A pid in a trace's file name: t.4242.jsonl, t.4242.1.jsonl. */
	s = replace_re(s, "\\.[0-9]+\\.(jsonl|[0-9]+\\.jsonl)", ".N.\\1");
	/* How long a run took. */
	s = replace_re(s, "(duration +)[0-9.]+ [^ ]+", "\\1T");
	/* Where zstd's frames end depends on the library's version. */
	s = replace_re(s, "(at|after) byte [0-9]+", "\\1 byte N");
	free(dir_slash);
	return s;
}

/* Does expected[i..] match actual[j..]?  "..." matches any run of lines. */
static int match(const lines_t *e, size_t i, const lines_t *a, size_t j)
{
	for (; i < e->n; i++, j++) {
		if (!strcmp(e->v[i] + strspn(e->v[i], " "), "...")) {
			for (size_t k = j; k <= a->n; k++)
				if (match(e, i + 1, a, k))
					return 1;
			return 0;
		}
		if (j >= a->n || strcmp(e->v[i], a->v[j]))
			return 0;
	}
	return j == a->n;
}

/* The example files, made once in dir by tests/docs/prepare-examples
 * (its comment lists them). */
static void prepare(const char *dir)
{
	char *script = mt_test_path(mt_test_source_dir(), "tests/docs/prepare-examples");
	char *argv[] = { "/bin/sh", script, (char *)dir, (char *)mt_test_source_dir(),
			 (char *)mt_test_build_dir(), NULL };
	mt_test_run_t r;

	mt_test_run(&r, argv, NULL);
	mt_quiet(r.status == 0, "prepare-examples failed (%d): %s%s", r.status, r.out, r.err);
	mt_test_run_release(&r);
	free(script);
}

/* A heading, then at most 4000 bytes of text. */
static void add_text(mt_test_bytes_t *b, const char *heading, const char *text)
{
	size_t n = strlen(text);

	mt_test_bytes_add(b, heading, strlen(heading));
	mt_test_bytes_add(b, text, n < 4000 ? n : 4000);
}

typedef struct {
	const char *doc;   /* path in the checkout */
	size_t line;       /* of the opening fence */
	lines_t body;
} block_t;

/* Run one example's commands in a fresh directory holding the files;
 * append a report of each difference to errors. */
static void run_example(const block_t *b, const char *files, mt_test_bytes_t *errors)
{
	char *dir = mt_test_scratch(), *setup;
	char *argv[] = { "/bin/sh", "-c", NULL, NULL };
	char *env[] = { NULL, "LC_ALL=C", "TZ=UTC", "COLUMNS=80", NULL };
	size_t i = 0;
	mt_test_run_t r;

	ck_assert_int_ge(asprintf(&env[0], "PATH=%s:%s/scripts:/usr/bin:/bin",
				  mt_test_build_dir(), mt_test_source_dir()), 0);
	ck_assert_int_ge(asprintf(&setup, "cp -a '%s'/. '%s' && ln -s '%s' '%s/build'",
				  files, dir, mt_test_build_dir(), dir), 0);
	argv[2] = setup;
	mt_test_run(&r, argv, NULL);
	mt_quiet(r.status == 0, "cannot set up %s: %s", dir, r.err);
	mt_test_run_release(&r);
	free(setup);
	while (i < b->body.n) {
		mt_test_bytes_t cmd = { 0 }, want = { 0 };
		lines_t e, a;
		size_t first = i;
		char *got;

		/* A command, with its continuation lines. */
		mt_test_bytes_addf(&cmd, "cd '%s' && exec 2>&1 && ", dir);
		mt_test_bytes_add(&cmd, b->body.v[i] + 2, strlen(b->body.v[i] + 2));
		while (i + 1 < b->body.n && b->body.v[i][strlen(b->body.v[i]) - 1] == '\\') {
			i++;
			mt_test_bytes_add(&cmd, "\n", 1);
			mt_test_bytes_add(&cmd, b->body.v[i], strlen(b->body.v[i]));
		}
		mt_test_bytes_add(&cmd, "", 1);
		for (i++; i < b->body.n && strncmp(b->body.v[i], "$ ", 2); i++) {
			mt_test_bytes_add(&want, b->body.v[i], strlen(b->body.v[i]));
			mt_test_bytes_add(&want, "\n", 1);
		}
		mt_test_bytes_add(&want, "", 1);
		argv[2] = cmd.data;
		mt_test_run(&r, argv, env);
		got = normalise(strdup(r.out), dir);
		want.data = normalise(want.data, dir);
		e = split(want.data);
		a = split(got);
		if (!match(&e, 0, &a, 0)) {
			mt_test_bytes_addf(errors, "%s:%zu: the example's command prints what the "
					   "document does not show\n", b->doc, b->line + 1 + first);
			add_text(errors, "--- command ---\n", b->body.v[first] + 2);
			add_text(errors, "\n--- shown ---\n", want.data);
			add_text(errors, "--- printed (normalised) ---\n", got);
		}
		lines_release(&e);
		lines_release(&a);
		mt_test_run_release(&r);
		free(got);
		free(want.data);
		free(cmd.data);
	}
	free(env[0]);
}

/* The fenced blocks of one document; bare ones are examples. */
static void blocks_of(const char *doc, void (*fn)(const block_t *, void *), void *arg)
{
	char *full = mt_test_path(mt_test_source_dir(), doc);
	char *text = mt_test_read(full, NULL);
	lines_t l = split(text);
	block_t b = { doc, 0, { 0 } };
	int in = 0, bare = 0;
	size_t indent = 0;

	for (size_t i = 0; i < l.n; i++) {
		const char *s = l.v[i];
		size_t ind = strspn(s, " ");

		if (!strncmp(s + ind, "```", 3)) {
			if (!in) {
				in = 1;
				indent = ind;
				bare = s[ind + 3] == '\0';
				b.line = i + 1;
			} else {
				if (bare)
					fn(&b, arg);
				lines_release(&b.body);
				in = 0;
			}
			continue;
		}
		if (in && bare) {
			char *c = strdup(strlen(s) >= indent ? s + indent : "");

			ck_assert_ptr_nonnull(c);
			lines_push(&b.body, c);
		}
	}
	lines_release(&l);
	free(text);
	free(full);
}

/* README.md and docs/ (every .md), as paths in the checkout. */
static lines_t documents(void)
{
	char *dir = mt_test_path(mt_test_source_dir(), "docs");
	lines_t l = { 0 };
	DIR *d = opendir(dir);
	struct dirent *e;

	ck_assert_ptr_nonnull(d);
	lines_push(&l, strdup("README.md"));
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		char *p;

		if (n > 3 && !strcmp(e->d_name + n - 3, ".md")) {
			ck_assert_int_ge(asprintf(&p, "docs/%s", e->d_name), 0);
			lines_push(&l, p);
		}
	}
	closedir(d);
	free(dir);
	return l;
}

typedef struct {
	const char *files;
	mt_test_bytes_t errors;
	int examples, failed;
} run_all_t;

static void check_bare(const block_t *b, void *arg)
{
	mt_test_bytes_t *errors = arg;

	if (b->body.n == 0 || strncmp(b->body.v[0], "$ ", 2))
		mt_test_bytes_addf(errors, "%s:%zu: a bare ``` block that is not an example "
				   "(its first line is no `$ ` command): fence it ```text, "
				   "```json or ```sh\n", b->doc, b->line);
}

static void run_block(const block_t *b, void *arg)
{
	run_all_t *all = arg;

	if (b->body.n == 0 || strncmp(b->body.v[0], "$ ", 2))
		return; /* check_bare's to report */
	size_t before = all->errors.len;

	all->examples++;
	run_example(b, all->files, &all->errors);
	all->failed += all->errors.len != before;
}

START_TEST(test_every_bare_block_in_the_docs_is_an_example)
{
	lines_t docs = documents();
	mt_test_bytes_t errors = { 0 };

	mt_test_bytes_add(&errors, "", 1);
	errors.len = 0;
	for (size_t i = 0; i < docs.n; i++)
		blocks_of(docs.v[i], check_bare, &errors);
	ck_assert_msg(errors.len == 0, "%s", errors.data);
	free(errors.data);
	lines_release(&docs);
}
END_TEST

START_TEST(test_every_example_in_the_docs_prints_what_it_shows)
{
	lines_t docs = documents();
	run_all_t all = { mt_test_scratch(), { 0 }, 0, 0 };

	prepare(all.files);
	mt_test_bytes_add(&all.errors, "", 1);
	all.errors.len = 0;
	for (size_t i = 0; i < docs.n; i++)
		blocks_of(docs.v[i], run_block, &all);
	/* Check's messages are short: the differences go to stderr. */
	if (all.errors.len)
		fprintf(stderr, "%s", all.errors.data);
	ck_assert_msg(all.errors.len == 0, "%d examples differ from what their commands print "
		      "(stderr shows each)", all.failed);
	/* The README shows a report, docs/ci-gates.md a gate and a diff... */
	ck_assert_int_ge(all.examples, 10);
	free(all.errors.data);
	lines_release(&docs);
}
END_TEST

/* The matcher itself: "..." spans any number of lines, nothing else
 * differs, and what changes every run is equal once normalised. */
START_TEST(test_an_example_matches_only_what_it_shows)
{
	lines_t e = split("a\n...\nd\n"), a1 = split("a\nb\nc\nd\n"), a2 = split("a\nd\n"),
		a3 = split("a\nb\n"), a4 = split("a\nd\ne\n");
	char *s = normalise(strdup("pid 4242 \"tid\":17 \"ptr\":\"0xdeadbeef\" /scr/x 0x2724a in libc.so.6"), "/scr");

	ck_assert(match(&e, 0, &a1, 0));
	ck_assert(match(&e, 0, &a2, 0));
	ck_assert(!match(&e, 0, &a3, 0));
	ck_assert(!match(&e, 0, &a4, 0));
	ck_assert_str_eq(s, "pid N \"tid\":N \"ptr\":\"0xN\" x 0xN in libc.so.6");
	free(s);
	lines_release(&e);
	lines_release(&a1);
	lines_release(&a2);
	lines_release(&a3);
	lines_release(&a4);
}
END_TEST

Suite *mt_suite_docs(void)
{
	Suite *s = suite_create("docs");
	TCase *tc = tcase_create("examples");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_an_example_matches_only_what_it_shows);
	tcase_add_test(tc, test_every_bare_block_in_the_docs_is_an_example);
	tcase_add_test(tc, test_every_example_in_the_docs_prints_what_it_shows);
	suite_add_tcase(s, tc);
	return s;
}
