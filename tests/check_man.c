/*
 * check_man: what a command-line tool is expected to come with.  The man
 * pages (build/man, made by mt-mkman from the texts --help prints) name
 * every option their command's --help names, are exactly what mt-mkman
 * makes of their sources, and render without a warning; libmtpreload(7)
 * names every variable of docs/preload.md's Environment table; the bash
 * completion completes commands, options and trace files for memtrace,
 * and options and the program for memtrace-run; `memtrace version`, -V
 * and --version, `memtrace-run --version`; `memtrace help COMMAND`; and
 * `make install` puts the pages, the completion, the docs and the
 * example where man, bash and a reader look.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mt_test.h"
#include "../analyzer/cmd/mt_commands.h"

/* Run the shell command fmt... in the source tree, in the C locale, with
 * MEMTRACE and MEMTRACE_ANALYZER the build's memtrace (memtrace-run and
 * mt-mkman's page sources find it so). */
static void __attribute__((format(printf, 2, 3)))
sh(mt_test_run_t *r, const char *fmt, ...)
{
	char cmd[8192], memtrace[4096], analyzer[4200];
	char *env[] = { "LC_ALL=C", "MANWIDTH=80", memtrace, analyzer,
			/* mt-mkman frees nothing before it ends (make
			 * sanitize builds it with LeakSanitizer). */
			"ASAN_OPTIONS=detect_leaks=0",
			/* A make the suite runs under must not lend its
			 * jobserver to one a test starts. */
			"MAKEFLAGS=", "MFLAGS=", "MAKELEVEL=", NULL };
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	char *mt = mt_test_memtrace();
	int n;
	va_list ap;

	snprintf(memtrace, sizeof(memtrace), "MEMTRACE=%s", mt);
	snprintf(analyzer, sizeof(analyzer), "MEMTRACE_ANALYZER=%s", mt);
	free(mt);
	n = snprintf(cmd, sizeof(cmd), "cd '%s' && ", mt_test_source_dir());
	va_start(ap, fmt);
	vsnprintf(cmd + n, sizeof(cmd) - (size_t)n, fmt, ap);
	va_end(ap);
	mt_test_run(r, argv, env);
}

/* A page of build/man, or NULL. */
static char *read_page(const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/man/%s", mt_test_build_dir(), name);
	return mt_test_read(path, NULL);
}

/* A page's roff as the words a reader sees: fonts and "\&" dropped,
 * "\-" a '-', "\e" a '\'. */
static char *deroff(const char *s)
{
	char *d = malloc(strlen(s) + 1), *o = d;

	ck_assert(d != NULL);
	while (*s) {
		if (s[0] == '\\' && s[1] == 'f' && s[2]) {
			s += 3;
		} else if (s[0] == '\\' && s[1] == '&') {
			s += 2;
		} else if (s[0] == '\\' && (s[1] == '-' || s[1] == 'e')) {
			*o++ = s[1] == '-' ? '-' : '\\';
			s += 2;
		} else {
			*o++ = *s++;
		}
	}
	*o = '\0';
	return d;
}

/* Whether text holds word, not as the start of a longer option. */
static int has_word(const char *text, const char *word, size_t len)
{
	for (const char *p = text; (p = strstr(p, word)); p++)
		if (!isalnum((unsigned char)p[len]) && p[len] != '-' &&
		    (p == text || !isalnum((unsigned char)p[-1])))
			return 1;
	return 0;
}

/* Every option help names ("-o", "--max-peak": a word that begins with
 * one or two '-' after a space, a bracket or a bar) is in page (deroffed),
 * which page names.  Returns how many there were. */
static size_t assert_options_in_page(const char *help, const char *page,
				     const char *name)
{
	size_t count = 0;

	for (const char *p = help; *p; p++) {
		size_t len = 0;
		char opt[64];

		if (*p != '-' || (p > help && !strchr(" \n[|(", p[-1])))
			continue;
		if (p[1] == '-' && isalnum((unsigned char)p[2]))
			for (len = 2; isalnum((unsigned char)p[len]) || p[len] == '-'; len++)
				;
		else if (isalnum((unsigned char)p[1]) && !isalnum((unsigned char)p[2]))
			len = 2;
		if (!len || len >= sizeof(opt))
			continue;
		memcpy(opt, p, len);
		opt[len] = '\0';
		mt_quiet(has_word(page, opt, len), "%s does not name %s, which --help does",
			 name, opt);
		count++;
		p += len - 1;
	}
	return count;
}

/* ---- the pages ---- */

START_TEST(test_every_command_a_user_runs_has_a_page_with_every_option_of_its_help)
{
	for (size_t i = 0; i < mt_nuser_commands; i++) {
		const mt_cmd_t *cmd = mt_commands[i];
		char name[128], head[256];
		char *roff, *page;
		mt_test_run_t r;

		snprintf(name, sizeof(name), "memtrace-%s.1", cmd->name);
		roff = read_page(name);
		mt_quiet(roff != NULL, "no page %s", name);
		page = deroff(roff);
		snprintf(head, sizeof(head), ".SH NAME\nmemtrace-%s - %s\n",
			 cmd->name, cmd->summary);
		mt_quiet(strstr(page, head) != NULL, "%s's NAME is not '%s': %s",
			 name, head, page);
		mt_test_memtrace_in(&r, NULL, cmd->name, "--help", NULL);
		mt_quiet_int_eq(r.status, 0);
		assert_options_in_page(r.out, page, name);
		mt_test_run_release(&r);
		free(page);
		free(roff);
	}
	/* The plumbing gets none. */
	for (size_t i = mt_nuser_commands; i < mt_ncommands; i++) {
		char name[128], *page;

		snprintf(name, sizeof(name), "memtrace-%s.1", mt_commands[i]->name);
		page = read_page(name);
		mt_quiet(page == NULL, "plumbing %s has a page", mt_commands[i]->name);
	}
}
END_TEST

START_TEST(test_the_program_page_names_every_command_and_its_page)
{
	char *roff = read_page("memtrace.1"), *page;
	mt_test_run_t r;

	ck_assert(roff != NULL);
	page = deroff(roff);
	for (size_t i = 0; i < mt_ncommands; i++) {
		char see[128];

		mt_quiet(has_word(page, mt_commands[i]->name,
				  strlen(mt_commands[i]->name)),
			 "memtrace.1 does not name %s", mt_commands[i]->name);
		snprintf(see, sizeof(see), "memtrace-%s(1)", mt_commands[i]->name);
		mt_quiet((strstr(page, see) != NULL) == (i < mt_nuser_commands),
			 "memtrace.1 and %s", see);
	}
	mt_test_memtrace_in(&r, NULL, "--help", NULL);
	assert_options_in_page(r.out, page, "memtrace.1");
	mt_test_run_release(&r);
	free(page);
	free(roff);
}
END_TEST

START_TEST(test_the_memtrace_run_page_has_every_option_of_its_help)
{
	char *roff = read_page("memtrace-run.1"), *page;
	mt_test_run_t r;

	ck_assert(roff != NULL);
	page = deroff(roff);
	sh(&r, "scripts/memtrace-run --help");
	mt_quiet_int_eq(r.status, 0);
	mt_quiet_uint_ge(assert_options_in_page(r.out, page, "memtrace-run.1"), 15);
	mt_quiet_ptr_nonnull(strstr(page, "--version"));
	mt_test_run_release(&r);
	free(page);
	free(roff);
}
END_TEST

/* Each row of docs/preload.md's Environment table, "| `NAME` | `default`
 * | ...", is in libmtpreload(7)'s ENVIRONMENT with its default. */
START_TEST(test_the_preload_page_has_every_variable_of_the_preload_doc)
{
	char *doc_path = mt_test_path(mt_test_source_dir(), "docs/preload.md");
	char *doc = mt_test_read(doc_path, NULL), *roff = read_page("libmtpreload.7");
	char *page, *env;
	const char *p;
	size_t rows = 0;

	ck_assert(doc != NULL && roff != NULL);
	page = deroff(roff);
	env = strstr(page, ".SH \"ENVIRONMENT\"");
	mt_quiet_ptr_nonnull(env);
	p = strstr(doc, "\n## Environment\n");
	mt_quiet_ptr_nonnull(p);
	for (p = strstr(p, "\n| `"); p && !strncmp(p, "\n| `", 4);
	     p = strchr(p + 1, '\n')) {
		const char *name = p + 4, *def;
		size_t len = strcspn(name, "`"), dlen;
		char want[256];

		snprintf(want, sizeof(want), ".TP\n%.*s\n", (int)len, name);
		mt_quiet(strstr(env, want) != NULL, "libmtpreload.7 has no %.*s",
			 (int)len, name);
		def = strstr(name, "| ") + 2;
		dlen = strcspn(def, " |");
		if (strncmp(def, "unset", 5)) {
			snprintf(want, sizeof(want), "(default %.*s)", (int)dlen - 2,
				 def + 1);
			mt_quiet(strstr(env, want) != NULL,
				 "libmtpreload.7 has no '%s' for %.*s", want,
				 (int)len, name);
		}
		rows++;
	}
	mt_quiet_uint_ge(rows, 7);
	mt_quiet_ptr_nonnull(strstr(page, "LD_PRELOAD"));
	free(page);
	free(roff);
	free(doc);
	free(doc_path);
}
END_TEST

/* build/man holds exactly what mt-mkman makes now of the table and of
 * man/'s sources: the pages cannot be older than what they say. */
START_TEST(test_the_pages_are_what_mkman_makes_of_their_sources)
{
	char *dir = mt_test_scratch();
	char built[4096];
	size_t pages = 0;
	DIR *d;
	struct dirent *e;
	mt_test_run_t r;

	sh(&r, "'%s/mt-mkman' pages '%s' man/*.txt", mt_test_build_dir(), dir);
	mt_quiet(r.status == 0, "mt-mkman exited %d: %s", r.status, r.err);
	mt_test_run_release(&r);
	snprintf(built, sizeof(built), "%s/man", mt_test_build_dir());
	d = opendir(dir);
	ck_assert(d != NULL);
	while ((e = readdir(d))) {
		char *made, *in_build, *path;

		if (e->d_name[0] == '.')
			continue;
		path = mt_test_path(dir, e->d_name);
		made = mt_test_read(path, NULL);
		free(path);
		path = mt_test_path(built, e->d_name);
		in_build = mt_test_read(path, NULL);
		mt_quiet(in_build != NULL, "build/man has no %s", e->d_name);
		mt_quiet(!strcmp(made, in_build), "build/man/%s is not what "
			 "mt-mkman makes of its source", e->d_name);
		free(path);
		free(made);
		free(in_build);
		pages++;
	}
	closedir(d);
	/* At least a page a user command, memtrace(1), libmtpreload(7). */
	mt_quiet_uint_ge(pages, mt_nuser_commands + 2);
	d = opendir(built);
	ck_assert(d != NULL);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			pages--;
	closedir(d);
	mt_quiet_uint_eq(pages, 0);
}
END_TEST

START_TEST(test_every_page_renders_without_a_warning)
{
	char built[4096];
	size_t pages = 0;
	DIR *d;
	struct dirent *e;
	mt_test_run_t r;

	snprintf(built, sizeof(built), "%s/man", mt_test_build_dir());
	d = opendir(built);
	ck_assert(d != NULL);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		sh(&r, "groff -man -Tutf8 -ww -z '%s/%s'", built, e->d_name);
		mt_quiet(r.status == 0 && !r.err[0], "groff on %s: %d %s",
			 e->d_name, r.status, r.err);
		mt_test_run_release(&r);
		pages++;
	}
	closedir(d);
	mt_quiet_uint_ge(pages, 4);
	/* man itself, as a reader runs it. */
	sh(&r, "man --warnings -l '%s/memtrace-gate.1'", built);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	mt_quiet_ptr_nonnull(strstr(r.out, "memtrace-gate - check a run against budgets"));
	mt_quiet_ptr_nonnull(strstr(r.out, "\n       --max-peak SIZE\n"));
	mt_test_run_release(&r);
}
END_TEST

/* ---- the bash completion ---- */

/* The completions of each word list, in dir: a line each, sorted. */
static void complete(mt_test_run_t *r, const char *dir, const char *calls)
{
	sh(r, "cd '%s' && exec bash -c '. \"$0\"; "
	      "t() { COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); "
	      "if [ \"$1\" = memtrace ]; then _memtrace; else _memtrace_run; fi; "
	      "printf \"%%s\\n\" \"${COMPREPLY[@]}\" | sort -u | tr \"\\n\" \" \"; echo; }; %s' "
	      "'%s/completion/memtrace'",
	   dir, calls, mt_test_build_dir());
	mt_quiet(r->status == 0, "bash exited %d: %s", r->status, r->err);
}

START_TEST(test_completion_gives_commands_options_and_trace_files)
{
	static const char *const files[] = { "a.jsonl", "b.jsonl.zst", "c.jsonl.gz",
					     "notes.txt" };
	char *dir = mt_test_scratch(), *sub = mt_test_path(dir, "runs");
	mt_test_run_t r;

	for (size_t i = 0; i < 4; i++) {
		char *path = mt_test_path(dir, files[i]);

		mt_test_write(path, "", 0);
		free(path);
	}
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	complete(&r, dir,
		 "t memtrace ga; t memtrace rep; t memtrace gate --max-p; "
		 "t memtrace report \"\"; t memtrace summary -o \"\"; "
		 "t memtrace diff --threshold \"\"; t memtrace help fl; t memtrace ver");
	ck_assert_str_eq(r.out,
			 "gate \n"
			 "repetition repetitions report \n"
			 "--max-peak \n"
			 "a.jsonl b.jsonl.zst c.jsonl.gz runs \n"
			 "a.jsonl b.jsonl.zst c.jsonl.gz notes.txt runs \n"
			 " \n"
			 "flamegraph \n"
			 "version \n");
	mt_test_run_release(&r);
	free(sub);
}
END_TEST

START_TEST(test_completion_gives_memtrace_run_options_and_the_program)
{
	char *dir = mt_test_scratch(), *sub = mt_test_path(dir, "out");
	mt_test_run_t r;

	ck_assert_int_eq(mkdir(sub, 0755), 0);
	complete(&r, dir,
		 "t memtrace-run --st; t memtrace-run --ver; t memtrace-run -o \"\"; "
		 "t memtrace-run -n 3 -- printen");
	ck_assert_str_eq(r.out,
			 "--stack-depth --strict \n"
			 "--verbose --version \n"
			 "out \n"
			 "printenv \n");
	mt_test_run_release(&r);
	free(sub);
}
END_TEST

/* ---- version and help ---- */

START_TEST(test_version_dash_v_and_dash_dash_version_print_the_version)
{
	static const char *const spellings[] = { "version", "-V", "--version" };
	char want[64];
	mt_test_run_t r;

	for (size_t i = 0; i < 3; i++) {
		mt_test_memtrace_in(&r, NULL, spellings[i], NULL);
		mt_quiet_int_eq(r.status, 0);
		ck_assert_str_eq(r.err, "");
		mt_quiet(!strncmp(r.out, "memtrace ", 9) && isdigit((unsigned char)r.out[9]),
			 "%s printed '%s'", spellings[i], r.out);
		if (!i)
			snprintf(want, sizeof(want), "memtrace-run %s", r.out + 9);
		mt_test_run_release(&r);
	}
	sh(&r, "scripts/memtrace-run --version");
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, want);
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_help_command_prints_that_command_usage)
{
	mt_test_run_t r;

	mt_test_memtrace_in(&r, NULL, "help", "gate", NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, mt_commands_find("gate")->usage);
	mt_test_run_release(&r);
	mt_test_memtrace_in(&r, NULL, "help", "frobnicate", NULL);
	mt_quiet_int_eq(r.status, 64);
	mt_quiet_ptr_nonnull(strstr(r.err, "unknown command 'frobnicate'"));
	mt_test_run_release(&r);
}
END_TEST

/* ---- make install ---- */

START_TEST(test_make_install_puts_pages_completion_docs_and_examples)
{
	static const char *const files[] = {
		"share/man/man1/memtrace.1", "share/man/man1/memtrace-run.1",
		"share/man/man7/libmtpreload.7",
		"share/bash-completion/completions/memtrace",
		"share/bash-completion/completions/memtrace-run",
		"share/doc/memtrace/README.md", "share/doc/memtrace/docs/preload.md",
		"share/doc/memtrace/docs/format.md",
		"share/doc/memtrace/examples/mt_pool.c",
	};
	char *dir = mt_test_scratch(), *want;
	mt_test_run_t r;

	sh(&r, "exec make -s --no-print-directory install PREFIX='%s' BUILD='%s'",
	   dir, mt_test_build_dir());
	mt_quiet(r.status == 0, "make install exited %d: %s", r.status, r.err);
	mt_test_run_release(&r);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *path = mt_test_path(dir, files[i]);

		mt_quiet(mt_test_exists(path), "make install left out %s", files[i]);
		free(path);
	}
	for (size_t i = 0; i < mt_nuser_commands; i++) {
		char name[128], *path;

		snprintf(name, sizeof(name), "share/man/man1/memtrace-%s.1",
			 mt_commands[i]->name);
		path = mt_test_path(dir, name);
		mt_quiet(mt_test_exists(path), "make install left out %s", name);
		free(path);
	}
	/* man finds the page by its name from the prefix, and renders it. */
	sh(&r, "MANPATH='%s/share/man' man -w memtrace-gate && "
	       "MANPATH='%s/share/man' man --warnings memtrace-gate", dir, dir);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	want = mt_test_path(dir, "share/man/man1/memtrace-gate.1\n");
	mt_quiet(!strncmp(r.out, want, strlen(want)), "man -w said %s", r.out);
	mt_quiet_ptr_nonnull(strstr(r.out, "--require-complete"));
	mt_test_run_release(&r);
	free(want);
}
END_TEST

Suite *mt_suite_man(void)
{
	Suite *s = suite_create("man");
	TCase *pages = tcase_create("pages");
	TCase *completion = tcase_create("completion");
	TCase *cli = tcase_create("cli");
	TCase *install = tcase_create("install");

	tcase_add_test(pages, test_every_command_a_user_runs_has_a_page_with_every_option_of_its_help);
	tcase_add_test(pages, test_the_program_page_names_every_command_and_its_page);
	tcase_add_test(pages, test_the_memtrace_run_page_has_every_option_of_its_help);
	tcase_add_test(pages, test_the_preload_page_has_every_variable_of_the_preload_doc);
	tcase_add_test(pages, test_the_pages_are_what_mkman_makes_of_their_sources);
	tcase_add_test(pages, test_every_page_renders_without_a_warning);
	suite_add_tcase(s, pages);
	tcase_add_test(completion, test_completion_gives_commands_options_and_trace_files);
	tcase_add_test(completion, test_completion_gives_memtrace_run_options_and_the_program);
	suite_add_tcase(s, completion);
	tcase_add_test(cli, test_version_dash_v_and_dash_dash_version_print_the_version);
	tcase_add_test(cli, test_help_command_prints_that_command_usage);
	suite_add_tcase(s, cli);
	/* make install builds what is not yet built: give it time. */
	tcase_set_timeout(install, 300);
	tcase_add_test(install, test_make_install_puts_pages_completion_docs_and_examples);
	suite_add_tcase(s, install);
	return s;
}
