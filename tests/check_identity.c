/*
 * check_identity: every view names the program a trace came from, as its
 * trace.start says (analyzer/model/mt_identity.h): report, html, tree (a
 * tree of programs by default, JSON with --json), memtrace-run --verbose,
 * and the exports' own fields (DHAT's cmd and pid, pprof's comment,
 * speedscope's name).  The programs are real: wl_fork, traced with
 * arguments a shell would quote, a child it forks and one that execs.  A
 * trace that names no program is named by its file, as before; a hostile
 * command line is cut and escaped.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mt_test.h"
#include "mt_test_trace.h"
#include "../common/mt_utf8.h"
#include "../analyzer/base/mt_buf.h"
#include "../analyzer/model/mt_identity.h"

/* wl_fork's run: its traces (MEMTRACE_OUTPUT t.%p.jsonl) and what each
 * view must say of them. */
typedef struct {
	char *dir;           /* a scratch directory: the test's */
	char *exe;           /* the workload's real path: /proc/self/exe's */
	char *root;          /* t.R.jsonl: the workload's own trace */
	char *child;         /* the child that exits */
	char *pre_exec;      /* the child that execs, before it does */
	char *exec;          /* the image it exec'd: t.E.1.jsonl */
	long root_pid, child_pid, exec_pid, test_pid;
	char command[PATH_MAX + 64];  /* what the views show for the root's program */
} fork_run_t;

/* The pid in a trace's name "t.PID.jsonl" or "t.PID.1.jsonl": the
 * preload's %p, not trace.start's. */
static long pid_of_name(const char *name)
{
	return strtol(name + 2, NULL, 10);
}

/* trace.start's ppid of the trace at path. */
static long ppid_of(const char *path)
{
	json_object *o = mt_test_trace_start(path);
	long v = (long)mt_test_json_i64(o, "ppid");

	json_object_put(o);
	return v;
}

static void fork_run(fork_run_t *f)
{
	char *wl = mt_test_workload("wl_fork"), *out, real[PATH_MAX];
	char *argv[] = { wl, "two words", "it's", NULL };
	char **names;
	size_t n;
	mt_test_run_t r;

	memset(f, 0, sizeof(*f));
	f->dir = mt_test_scratch();
	f->test_pid = (long)getpid();
	mt_quiet(realpath(wl, real) != NULL, "realpath %s", wl);
	f->exe = strdup(real);
	out = mt_test_path(f->dir, "t.%p.jsonl");
	mt_test_run_traced(&r, argv, out, NULL);
	mt_quiet(r.status == 0, "wl_fork ended with %d: %s", r.status, r.err);
	mt_test_run_release(&r);
	names = mt_test_traces(f->dir, &n);
	mt_quiet_int_eq(n, 4);
	/* Sorted by name: the exec'd image's "t.E.1.jsonl" is one of them. */
	for (size_t i = 0; i < n; i++) {
		char *path = mt_test_path(f->dir, names[i]);
		long pid = pid_of_name(names[i]);

		if (strstr(names[i] + 2, ".1.jsonl")) {
			f->exec = path;
			f->exec_pid = pid;
		} else if (ppid_of(path) == f->test_pid) {
			f->root = path;
			f->root_pid = pid;
		} else {
			/* The exec'd image's pid tells the two children
			 * apart; set below once it is known. */
			if (!f->child)
				f->child = path;
			else
				f->pre_exec = path;
		}
	}
	mt_quiet(f->root && f->exec && f->child && f->pre_exec,
		 "not the four traces of wl_fork in %s", f->dir);
	if (pid_of_name(strrchr(f->child, '/') + 1) == f->exec_pid) {
		char *t = f->child;

		f->child = f->pre_exec;
		f->pre_exec = t;
	}
	f->child_pid = pid_of_name(strrchr(f->child, '/') + 1);
	snprintf(f->command, sizeof(f->command), "%s 'two words' 'it'\\''s'",
		 f->exe);
	mt_test_traces_release(names, n);
	free(out);
	free(wl);
}

static void fork_run_release(fork_run_t *f)
{
	free(f->exe);
	free(f->root);
	free(f->child);
	free(f->pre_exec);
	free(f->exec);
}

/* `memtrace ARGS...` with status 0: its stdout, malloc'd. */
#define MEMTRACE_OUT(...) memtrace_out((const char *const[]){ __VA_ARGS__, NULL })
static char *memtrace_out(const char *const args[])
{
	mt_test_run_t r;
	char *out;

	mt_test_memtrace_in_argv(&r, NULL, NULL, args);
	mt_quiet(r.status == 0, "memtrace %s %s: %d: %s", args[0], args[1],
		 r.status, r.err);
	out = strdup(r.out);
	mt_test_run_release(&r);
	return out;
}

START_TEST(test_report_names_the_program_its_arguments_and_pids)
{
	fork_run_t f;
	char want[16384], *out;

	fork_run(&f);
	out = MEMTRACE_OUT("report", f.root);
	snprintf(want, sizeof(want), "memtrace report of %s\nprogram: %s (pid %ld, parent %ld)\n\n",
		 f.root, f.command, f.root_pid, f.test_pid);
	mt_quiet(!strncmp(out, want, strlen(want)), "want:\n%s\ngot:\n%.600s", want, out);
	free(out);
	fork_run_release(&f);
}
END_TEST

START_TEST(test_html_titles_the_page_with_the_program)
{
	fork_run_t f;
	char want[16384], *page, *html;
	mt_test_run_t r;

	fork_run(&f);
	html = mt_test_path(f.dir, "r.html");
	mt_test_memtrace_in(&r, NULL, "html", f.root, "-o", html, NULL);
	mt_quiet(r.status == 0, "html: %d: %s", r.status, r.err);
	mt_test_run_release(&r);
	page = mt_test_read(html, NULL);
	mt_quiet_ptr_nonnull(page);
	snprintf(want, sizeof(want), "<title>memtrace: %s (pid %ld, parent %ld)</title>",
		 f.command, f.root_pid, f.test_pid);
	mt_quiet(strstr(page, want) != NULL, "no %s in the page", want);
	/* The page's data, which its heading shows: JSON, so the
	 * backslash of the quoted quote is escaped. */
	snprintf(want, sizeof(want),
		 "\"program\":\"%s 'two words' 'it'\\\\''s' (pid %ld, parent %ld)\"",
		 f.exe, f.root_pid, f.test_pid);
	mt_quiet(strstr(page, want) != NULL, "no %s in the page's data", want);
	free(page);
	free(html);
	fork_run_release(&f);
}
END_TEST

/* The tree of wl_fork, given its traces in any order: the workload, its
 * two children under it, the image one exec'd under that one. */
START_TEST(test_tree_shows_each_child_under_its_parent)
{
	fork_run_t f;
	char want[65536], *out;

	fork_run(&f);
	out = MEMTRACE_OUT("tree", f.exec, f.pre_exec, f.child, f.root);
	snprintf(want, sizeof(want),
		 "4 processes: 9 allocations, peak 31.5 KiB, complete\n"
		 "%s (pid %ld, parent %ld): 2 allocations, peak 4.3 KiB, complete  %s\n"
		 "  %s (pid %ld, parent %ld): 3 allocations, peak 9.8 KiB, complete  %s\n"
		 "  %s (pid %ld, parent %ld): 0 allocations, peak 0 B, complete  %s\n"
		 "    exec %s exec (pid %ld, parent %ld): 4 allocations, peak 17.4 KiB, complete  %s\n",
		 f.command, f.root_pid, f.test_pid, f.root,
		 f.command, f.child_pid, f.root_pid, f.child,
		 f.command, f.exec_pid, f.root_pid, f.pre_exec,
		 f.exe, f.exec_pid, f.root_pid, f.exec);
	ck_assert_str_eq(out, want);
	free(out);
	fork_run_release(&f);
}
END_TEST

/* --json: the tree's line, then a line per trace in the order given,
 * each with its pid, parent, exe and argv. */
START_TEST(test_tree_json_gives_each_process_its_pid_parent_and_argv)
{
	fork_run_t f;
	char *out, *save = NULL, *line;
	const char *paths[4];
	long pids[4], ppids[4];
	int n = 0;

	fork_run(&f);
	paths[0] = f.root, pids[0] = f.root_pid, ppids[0] = f.test_pid;
	paths[1] = f.child, pids[1] = f.child_pid, ppids[1] = f.root_pid;
	paths[2] = f.exec, pids[2] = f.exec_pid, ppids[2] = f.root_pid;
	paths[3] = f.pre_exec, pids[3] = f.exec_pid, ppids[3] = f.root_pid;
	out = MEMTRACE_OUT("tree", "--json", f.root, f.child, f.exec, f.pre_exec);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++) {
		json_object *o = json_tokener_parse(line), *argv;
		int i = n - 1;

		mt_quiet(o != NULL, "not JSON: %s", line);
		if (!n) {
			ck_assert_str_eq(mt_test_json_str(o, "schema"), "memtrace.tree/v1");
			json_object_put(o);
			continue;
		}
		mt_quiet(i < 4, "more lines than traces: %s", line);
		ck_assert_str_eq(mt_test_json_str(o, "schema"), "memtrace.process/v1");
		ck_assert_str_eq(mt_test_json_str(o, "trace"), paths[i]);
		mt_quiet_int_eq(mt_test_json_i64(o, "pid"), pids[i]);
		mt_quiet_int_eq(mt_test_json_i64(o, "ppid"), ppids[i]);
		ck_assert_str_eq(mt_test_json_str(o, "exe"), f.exe);
		argv = mt_test_json_member(o, "argv");
		mt_quiet(json_object_is_type(argv, json_type_array), "argv: %s", line);
		if (i == 2) {
			mt_quiet_int_eq(json_object_array_length(argv), 2);
			ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(argv, 1)),
					 "exec");
		} else {
			mt_quiet_int_eq(json_object_array_length(argv), 3);
			ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(argv, 1)),
					 "two words");
			ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(argv, 2)),
					 "it's");
		}
		json_object_put(o);
	}
	mt_quiet_int_eq(n, 5);
	free(out);
	fork_run_release(&f);
}
END_TEST

/* memtrace-run --verbose: each process's line names its program, pid and
 * parent, then its trace. */
START_TEST(test_run_verbose_names_each_process_of_the_tree)
{
	char *dir = mt_test_scratch(), *wl = mt_test_workload("wl_fork");
	char *script = mt_test_path(mt_test_source_dir(), "scripts/memtrace-run");
	char *argv[] = { script, "-v", "-o", dir, "--", wl, "two words", NULL };
	char real[PATH_MAX], want[16384];
	char **names;
	size_t n;
	long root = 0;
	mt_test_run_t r;

	mt_quiet(realpath(wl, real) != NULL, "realpath %s", wl);
	mt_test_run(&r, argv, NULL);
	mt_quiet(r.status == 0, "memtrace-run: %d: %s", r.status, r.err);
	names = mt_test_traces_ending(dir, ".jsonl.zst", &n);
	mt_quiet_int_eq(n, 4);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], "allocations.1.jsonl.zst")) {
			char *path = mt_test_path(dir, names[i]);
			json_object *o = mt_test_trace_start(path);

			root = (long)mt_test_json_i64(o, "pid");
			snprintf(want, sizeof(want),
				 "\n  %s 'two words' (pid %ld, parent %ld): 2 allocations, "
				 "peak 4.3 KiB, complete  allocations.1.jsonl.zst\n",
				 real, root, (long)mt_test_json_i64(o, "ppid"));
			mt_quiet(strstr(r.err, want) != NULL, "no\n%s\nin\n%s", want, r.err);
			json_object_put(o);
			free(path);
		}
	mt_quiet(root > 0, "no allocations.1.jsonl.zst in %s", dir);
	/* The children's: their pids are their traces' names'. */
	for (size_t i = 0; i < n; i++) {
		long pid;

		if (!strcmp(names[i], "allocations.1.jsonl.zst"))
			continue;
		pid = strtol(names[i] + strlen("allocations.1."), NULL, 10);
		snprintf(want, sizeof(want), " (pid %ld, parent %ld): ", pid, root);
		mt_quiet(strstr(r.err, want) != NULL, "no %s in\n%s", want, r.err);
		snprintf(want, sizeof(want), "  %s\n", names[i]);
		mt_quiet(strstr(r.err, want) != NULL, "no %s in\n%s", want, r.err);
	}
	mt_test_traces_release(names, n);
	mt_test_run_release(&r);
	free(script);
	free(wl);
}
END_TEST

START_TEST(test_dhat_export_gives_the_command_and_pid)
{
	fork_run_t f;
	json_object *d;
	char *out;

	fork_run(&f);
	out = MEMTRACE_OUT("export", "dhat", f.child);
	d = json_tokener_parse(out);
	mt_quiet(d != NULL, "not JSON: %.200s", out);
	ck_assert_str_eq(mt_test_json_str(d, "cmd"), f.command);
	mt_quiet_int_eq(mt_test_json_i64(d, "pid"), f.child_pid);
	json_object_put(d);
	free(out);
	fork_run_release(&f);
}
END_TEST

START_TEST(test_speedscope_export_is_named_for_the_program)
{
	fork_run_t f;
	json_object *d;
	char want[16384], *out;

	fork_run(&f);
	out = MEMTRACE_OUT("export", "speedscope", f.exec);
	d = json_tokener_parse(out);
	mt_quiet(d != NULL, "not JSON: %.200s", out);
	snprintf(want, sizeof(want), "%s exec (pid %ld, parent %ld)", f.exe,
		 f.exec_pid, f.root_pid);
	ck_assert_str_eq(mt_test_json_str(d, "name"), want);
	json_object_put(d);
	free(out);
	fork_run_release(&f);
}
END_TEST

/* pprof's comment, as `go tool pprof -comments` prints it. */
START_TEST(test_pprof_export_comments_the_program)
{
	fork_run_t f;
	char *pb, *home, want[16384];
	char script[512], env0[4096], env1[4096];
	char *env[] = { env0, env1, NULL };
	char *argv[] = { "/bin/sh", "-c", script, "sh", NULL, NULL };
	mt_test_run_t r;

	fork_run(&f);
	pb = mt_test_path(f.dir, "p.pb.gz");
	home = mt_test_path(f.dir, "gohome");
	mt_test_memtrace_in(&r, NULL, "export", "pprof", f.root, "-o", pb, NULL);
	mt_quiet(r.status == 0, "export pprof: %d: %s", r.status, r.err);
	mt_test_run_release(&r);
	/* go wants a home and a build cache it can write. */
	snprintf(script, sizeof(script),
		 "command -v go >/dev/null || { echo 'go is missing: "
		 "make deps installs golang-go' >&2; exit 127; }; "
		 "exec go tool pprof -comments \"$1\"");
	snprintf(env0, sizeof(env0), "HOME=%s", home);
	snprintf(env1, sizeof(env1), "GOCACHE=%s/cache", home);
	argv[4] = pb;
	mt_test_run(&r, argv, env);
	mt_quiet(r.status == 0, "go tool pprof -comments: %d: %s", r.status, r.err);
	snprintf(want, sizeof(want), "program: %s (pid %ld, parent %ld)\n",
		 f.command, f.root_pid, f.test_pid);
	ck_assert_str_eq(r.out, want);
	mt_test_run_release(&r);
	free(home);
	free(pb);
	fork_run_release(&f);
}
END_TEST

/* A trace whose trace.start names no program (a fixture: pid 7, no exe
 * nor argv) is named by its file, as every view named traces before. */
START_TEST(test_a_trace_that_names_no_program_is_named_by_its_file)
{
	char *path = mt_test_fixture("traces/missing_stop_killed.jsonl");
	char *out, want[4096];
	json_object *d;

	out = MEMTRACE_OUT("report", path);
	mt_quiet(!strstr(out, "\nprogram: "), "%.300s", out);
	snprintf(want, sizeof(want), "memtrace report of %s\n\n", path);
	mt_quiet(!strncmp(out, want, strlen(want)), "%.300s", out);
	free(out);
	out = MEMTRACE_OUT("export", "dhat", path);
	d = json_tokener_parse(out);
	ck_assert_str_eq(mt_test_json_str(d, "cmd"), path);
	mt_quiet_int_eq(mt_test_json_i64(d, "pid"), 7);
	json_object_put(d);
	free(out);
	out = MEMTRACE_OUT("export", "speedscope", path);
	d = json_tokener_parse(out);
	ck_assert_str_eq(mt_test_json_str(d, "name"), "missing_stop_killed.jsonl (pid 7)");
	json_object_put(d);
	free(out);
	out = MEMTRACE_OUT("tree", path);
	mt_quiet(strstr(out, "\nmissing_stop_killed.jsonl (pid 7): 2 allocations, "
			"peak 150 B, missing_stop_event\n") != NULL, "%s", out);
	free(out);
	free(path);
}
END_TEST

/* A command line made to break the views: markup in exe, a newline and
 * an escape in an argument, and more than a title's worth of two-byte
 * characters.  Each view keeps it on one line, cut on a character's
 * start with "...", and escaped for what it writes. */
START_TEST(test_a_hostile_command_line_is_cut_and_escaped)
{
	char line[8192], *out, *page, *html, *nl;
	int k;
	mt_test_file_t t;
	mt_test_run_t r;
	json_object *d;
	const char *name;
	size_t len;

	k = snprintf(line, sizeof(line),
		     "{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"pid\":9,"
		     "\"exe\":\"/x</title><script>\",\"argv\":[\"x\",\"a\\nb\\u001b[31m\",\"");
	for (int i = 0; i < 300; i++)
		k += snprintf(line + k, sizeof(line) - (size_t)k, "\xc3\xa9");
	k += snprintf(line + k, sizeof(line) - (size_t)k,
		      "\"]}\n{\"v\":1,\"seq\":2,\"kind\":\"allocator\",\"allocator_id\":0}\n"
		      "{\"v\":1,\"seq\":3,\"kind\":\"trace.stop\"}\n");
	mt_test_file_write(&t, line, (size_t)k);

	out = MEMTRACE_OUT("report", t.path);
	name = strstr(out, "\nprogram: ");
	mt_quiet(name != NULL, "%.400s", out);
	name += strlen("\nprogram: ");
	nl = strchr(name, '\n');
	len = (size_t)(nl - name);
	mt_quiet(!strncmp(name, "'/x</title><script>' 'a?b?[31m' ", 32), "%.*s", (int)len, name);
	mt_quiet(len > 20 && !strncmp(nl - 11, "... (pid 9)", 11), "%.*s", (int)len, name);
	mt_quiet(mt_utf8_valid(name, len), "cut inside a character: %.*s", (int)len, name);
	/* A title, not the whole command line. */
	mt_quiet(len <= 240 + strlen(" (pid 9)"), "%zu bytes: %.*s", len, (int)len, name);
	free(out);

	html = mt_test_path(t.dir, "r.html");
	mt_test_memtrace_in(&r, NULL, "html", t.path, "-o", html, NULL);
	mt_quiet(r.status == 0, "html: %d: %s", r.status, r.err);
	mt_test_run_release(&r);
	page = mt_test_read(html, NULL);
	mt_quiet(strstr(page, "<title>memtrace: '/x&lt;/title&gt;&lt;script&gt;' 'a?b?[31m' ") != NULL,
		 "%.400s", page);
	mt_quiet(strstr(page, "\"program\":\"'/x\\u003c/title>\\u003cscript>' ") != NULL,
		 "no program in the page's data");
	free(page);
	free(html);

	out = MEMTRACE_OUT("export", "speedscope", t.path);
	d = json_tokener_parse(out);
	mt_quiet(d != NULL, "not JSON: %.300s", out);
	mt_quiet(!strncmp(mt_test_json_str(d, "name"), "'/x</title><script>' 'a?b?[31m' ", 32),
		 "%s", mt_test_json_str(d, "name"));
	json_object_put(d);
	free(out);
	mt_test_file_done(&t);
}
END_TEST

/* An argv whose first argument alone passes what is kept names no
 * program: the text is the fallback, whole, with no "..." of a cut. */
START_TEST(test_an_argv_too_long_to_keep_leaves_the_fallback_whole)
{
	static char line[8192];
	mt_identity_t id;
	mt_buf_t b = MT_BUF_INIT;
	int k = snprintf(line, sizeof(line),
			 "{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"pid\":5,\"argv\":[\"");

	for (int i = 0; i < MT_IDENTITY_ARGS_MAX + 10; i++)
		line[k++] = 'a';
	k += snprintf(line + k, sizeof(line) - (size_t)k, "\"]}");
	ck_assert_int_eq(mt_identity_read(&id, line, (size_t)k), 0);
	ck_assert(!mt_identity_known(&id));
	ck_assert_int_eq(mt_identity_describe(&id, "t.jsonl", MT_IDENTITY_PIDS, &b), 0);
	ck_assert_str_eq(b.data, "t.jsonl (pid 5)");
	mt_buf_release(&b);
}
END_TEST

/* Every allocation of the analyzer failing in turn: each run of tree,
 * readable or --json, is out of memory (4) with no output, or whole. */
START_TEST(test_tree_survives_every_allocation_failure)
{
	char *demo = mt_test_fixture("demo.jsonl");
	char *complete = mt_test_fixture("traces/complete.jsonl");
	char *killed = mt_test_fixture("traces/missing_stop_killed.jsonl");
	const char *readable[] = { "tree", demo, complete, killed, NULL };
	const char *json[] = { "tree", "--json", demo, complete, killed, NULL };

	mt_test_sweep_allocation_failures(readable, "tree");
	mt_test_sweep_allocation_failures(json, "tree --json");
	free(killed);
	free(complete);
	free(demo);
}
END_TEST

Suite *mt_suite_identity(void)
{
	Suite *s = suite_create("identity");
	TCase *tc = tcase_create("identity");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_report_names_the_program_its_arguments_and_pids);
	tcase_add_test(tc, test_html_titles_the_page_with_the_program);
	tcase_add_test(tc, test_tree_shows_each_child_under_its_parent);
	tcase_add_test(tc, test_tree_json_gives_each_process_its_pid_parent_and_argv);
	tcase_add_test(tc, test_run_verbose_names_each_process_of_the_tree);
	tcase_add_test(tc, test_dhat_export_gives_the_command_and_pid);
	tcase_add_test(tc, test_speedscope_export_is_named_for_the_program);
	tcase_add_test(tc, test_pprof_export_comments_the_program);
	tcase_add_test(tc, test_a_trace_that_names_no_program_is_named_by_its_file);
	tcase_add_test(tc, test_a_hostile_command_line_is_cut_and_escaped);
	tcase_add_test(tc, test_an_argv_too_long_to_keep_leaves_the_fallback_whole);
	tcase_add_test(tc, test_tree_survives_every_allocation_failure);
	suite_add_tcase(s, tc);
	return s;
}
