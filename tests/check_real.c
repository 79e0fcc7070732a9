/*
 * check_real: programs nobody here wrote, under the preload.
 *
 * python3, perl, git, sort, gcc compiling a file and a bash script that
 * forks, pipes and execs each run twice, untraced and with
 * LD_PRELOAD=libmtpreload.so, run directly (never through a shell, which
 * would be traced itself).  Their exit status, stdout and stderr (and the
 * object file gcc writes) must be the same both times, and every trace
 * the traced run leaves, one per process, must be complete.
 * scripts/install-deps installs these programs from Debian packages.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mt_test.h"
#include "mt_test_trace.h"

/* The program's absolute path, looked up on PATH; the test fails when it
 * is missing (scripts/install-deps installs it). */
static char *find_program(const char *name)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL;

	if (strchr(name, '/')) {
		mt_quiet(access(name, X_OK) == 0, "%s is not installed "
			 "(scripts/install-deps installs it)", name);
		return strdup(name);
	}
	copy = strdup(path && *path ? path : "/usr/bin:/bin");
	for (dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char *p = mt_test_path(dir, name);

		if (access(p, X_OK) == 0) {
			free(copy);
			return p;
		}
		free(p);
	}
	free(copy);
	ck_abort_msg("%s is not on PATH (scripts/install-deps installs it)", name);
	return NULL;
}

/* Every trace in dir is complete, but for at most killed traces of a
 * process killed by SIGKILL (memtrace check: missing_stop_event, cut to
 * whole lines); returns how many there are. */
static int assert_traces_complete_but(const char *dir, const char *what, int killed)
{
	char *mt = mt_test_memtrace();
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	mt_quiet_ptr_nonnull(d);
	while ((e = readdir(d))) {
		char *trace;
		mt_test_run_t r;

		if (e->d_name[0] == '.')
			continue;
		trace = mt_test_path(dir, e->d_name);
		{
			char *argv[] = { mt, "check", trace, NULL };

			mt_test_run(&r, argv, NULL);
		}
		if (r.status != 0 && killed > 0 && strstr(r.out, "\"missing_stop_event\"")) {
			killed--;
			mt_test_assert_trace_cut(trace);
		} else {
			mt_quiet(r.status == 0, "%s: trace %s is not complete: %s%s", what,
				 e->d_name, r.out, r.err);
		}
		mt_test_run_release(&r);
		free(trace);
		n++;
	}
	closedir(d);
	free(mt);
	return n;
}

/* Every trace in dir is complete; returns how many there are. */
static int assert_traces_complete(const char *dir, const char *what)
{
	return assert_traces_complete_but(dir, what, 0);
}

typedef struct {
	char *dir;    /* scratch directory of the test */
	char *traces; /* where the traced runs write: dir/traces */
} real_t;

static void real_init(real_t *t)
{
	t->dir = mt_test_scratch();
	t->traces = mt_test_path(t->dir, "traces");
	mt_quiet_int_eq(mkdir(t->traces, 0700), 0);
}

static void real_done(real_t *t)
{
	free(t->traces);
}

/*
 * Run plain (untraced) and traced (under the preload, one trace per
 * process in t->traces), each with the extra environment env, and hold
 * the second to the first: same status, stdout and stderr.  Returns the
 * status.
 */
static int run_both(real_t *t, char *const plain[], char *const traced[],
		    char *const env[], const char *what)
{
	char preload[4096], output[4096];
	char *tenv[16];
	mt_test_run_t a, b;
	int n = 0, status;

	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s/libmtpreload.so", mt_test_build_dir());
	snprintf(output, sizeof(output), "MEMTRACE_OUTPUT=%s/%s.%%p.jsonl", t->traces, what);
	for (; env && env[n]; n++)
		tenv[n] = env[n];
	tenv[n++] = preload;
	tenv[n++] = output;
	tenv[n] = NULL;
	mt_test_run(&a, plain, env);
	mt_test_run(&b, traced, tenv);
	mt_quiet(a.status == b.status, "%s: exit %d untraced, %d traced", what, a.status,
		 b.status);
	mt_quiet(a.out_len == b.out_len && !memcmp(a.out, b.out, a.out_len),
		 "%s: stdout differs:\n--- untraced\n%s--- traced\n%s", what, a.out, b.out);
	mt_quiet(a.err_len == b.err_len && !memcmp(a.err, b.err, a.err_len),
		 "%s: stderr differs:\n--- untraced\n%s--- traced\n%s", what, a.err, b.err);
	status = a.status;
	mt_test_run_release(&a);
	mt_test_run_release(&b);
	return status;
}

/* The same command both times. */
static int run_same(real_t *t, char *const argv[], char *const env[], const char *what)
{
	return run_both(t, argv, argv, env, what);
}

START_TEST(test_python3_runs_unchanged_and_its_trace_is_complete)
{
	real_t t;
	char *py = find_program("/usr/bin/python3");
	char *argv[] = { py, "-c",
			 "import json, collections, sys\n"
			 "d = {str(i): list(range(i % 7)) for i in range(5000)}\n"
			 "print(len(json.dumps(d, sort_keys=True)))\n"
			 "c = collections.Counter(str(i % 13) for i in range(20000))\n"
			 "print(sorted(c.items())[:3])\n"
			 "print('to stderr', file=sys.stderr)\n"
			 "sys.exit(4)\n",
			 NULL };

	real_init(&t);
	mt_quiet_int_eq(run_same(&t, argv, NULL, "python3"), 4);
	mt_quiet_int_eq(assert_traces_complete(t.traces, "python3"), 1);
	real_done(&t);
	free(py);
}
END_TEST

START_TEST(test_perl_runs_unchanged_and_its_trace_is_complete)
{
	real_t t;
	char *perl = find_program("perl");
	char *argv[] = { perl, "-e",
			 "my %h; $h{$_} = 'x' x ($_ % 100) for 1 .. 20000;"
			 "my @k = sort { $a <=> $b } keys %h;"
			 "print scalar(@k), ' ', length(join('', values %h)), \"\\n\";"
			 "warn \"done\\n\"; exit 7;",
			 NULL };

	real_init(&t);
	mt_quiet_int_eq(run_same(&t, argv, NULL, "perl"), 7);
	mt_quiet_int_eq(assert_traces_complete(t.traces, "perl"), 1);
	real_done(&t);
	free(perl);
}
END_TEST

START_TEST(test_sort_runs_unchanged_and_its_trace_is_complete)
{
	real_t t;
	char *sort = find_program("sort");
	char *input, *argv[] = { sort, "-n", NULL, NULL };
	FILE *f;
	unsigned x = 1;

	real_init(&t);
	input = mt_test_path(t.dir, "numbers.txt");
	f = fopen(input, "w");
	mt_quiet_ptr_nonnull(f);
	for (int i = 0; i < 50000; i++) {
		x = x * 1103515245u + 12345u;
		fprintf(f, "%u\n", x >> 8);
	}
	mt_quiet_int_eq(fclose(f), 0);
	argv[2] = input;
	mt_quiet_int_eq(run_same(&t, argv, NULL, "sort"), 0);
	ck_assert_int_ge(assert_traces_complete(t.traces, "sort"), 1);
	free(input);
	real_done(&t);
	free(sort);
}
END_TEST

START_TEST(test_gcc_compiles_the_same_object_and_every_trace_is_complete)
{
	real_t t;
	char *gcc = find_program("gcc");
	char *src, *a, *b, *da, *db;
	size_t la, lb;
	int n;

	real_init(&t);
	src = mt_test_path(t.dir, "unit.c");
	a = mt_test_path(t.dir, "plain.o");
	b = mt_test_path(t.dir, "traced.o");
	{
		static const char unit[] =
			"#include <stdio.h>\n"
			"static int sq(int x) { return x * x; }\n"
			"int main(void) { int s = 0;\n"
			"  for (int i = 0; i < 10; i++) s += sq(i);\n"
			"  printf(\"%d\\n\", s); return 0; }\n";

		mt_test_write(src, unit, sizeof(unit) - 1);
	}
	{
		char *plain[] = { gcc, "-O2", "-Wall", "-c", src, "-o", a, NULL };
		char *traced[] = { gcc, "-O2", "-Wall", "-c", src, "-o", b, NULL };

		mt_quiet_int_eq(run_both(&t, plain, traced, NULL, "gcc"), 0);
	}
	da = mt_test_read(a, &la);
	db = mt_test_read(b, &lb);
	mt_quiet_ptr_nonnull(da);
	mt_quiet_ptr_nonnull(db);
	mt_quiet(la == lb && !memcmp(da, db, la), "gcc wrote a different object traced");
	/* The driver, cc1 and as: each traced itself. */
	n = assert_traces_complete(t.traces, "gcc");
	ck_assert_int_ge(n, 3);
	free(da);
	free(db);
	free(src);
	free(a);
	free(b);
	real_done(&t);
	free(gcc);
}
END_TEST

START_TEST(test_git_commits_the_same_history_and_every_trace_is_complete)
{
	real_t t;
	char *git = find_program("git");
	char home[4096], *up, *tp, *ufile, *tfile;
	char *env[] = { home, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=A U Thor",
			"GIT_AUTHOR_EMAIL=author@example.com", "GIT_COMMITTER_NAME=C O Mitter",
			"GIT_COMMITTER_EMAIL=committer@example.com",
			"GIT_AUTHOR_DATE=1700000000 +0000", "GIT_COMMITTER_DATE=1700000000 +0000",
			NULL };
	/* Each step, on the untraced repository and on the traced one. */
	const char *steps[][6] = {
		{ "init", "-q", NULL },
		{ "add", "file.txt", NULL },
		{ "commit", "-q", "-m", "first", NULL },
		{ "log", "--format=%H %s", NULL },
		{ "cat-file", "-p", "HEAD^{tree}", NULL },
		{ "status", "--porcelain", "--untracked-files=all", NULL },
	};

	real_init(&t);
	snprintf(home, sizeof(home), "HOME=%s", t.dir);
	up = mt_test_path(t.dir, "plain");
	tp = mt_test_path(t.dir, "traced");
	mt_quiet_int_eq(mkdir(up, 0700), 0);
	mt_quiet_int_eq(mkdir(tp, 0700), 0);
	ufile = mt_test_path(up, "file.txt");
	tfile = mt_test_path(tp, "file.txt");
	mt_test_write(ufile, "one line\n", 9);
	mt_test_write(tfile, "one line\n", 9);
	for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
		char *plain[10] = { git, "-C", up }, *traced[10] = { git, "-C", tp };
		int i;

		for (i = 0; steps[s][i]; i++)
			plain[3 + i] = traced[3 + i] = (char *)steps[s][i];
		plain[3 + i] = traced[3 + i] = NULL;
		mt_quiet_int_eq(run_both(&t, plain, traced, env, "git"), 0);
	}
	ck_assert_int_ge(assert_traces_complete(t.traces, "git"), 6);
	free(ufile);
	free(tfile);
	free(up);
	free(tp);
	real_done(&t);
	free(git);
}
END_TEST

START_TEST(test_bash_script_that_forks_and_pipes_runs_unchanged_and_every_trace_is_complete)
{
	real_t t;
	char *bash = find_program("bash"), *script;
	static const char text[] =
		"set -e\n"
		"total=0\n"
		"for i in $(seq 1 50); do total=$((total + i)); done\n"
		"words=$(printf '%s\\n' alpha beta gamma | sort -r | tr '\\n' ' ')\n"
		"echo \"total=$total words=$words\"\n"
		"n=$(echo hello | wc -c)\n"
		"( cd / && pwd )\n"
		"declare -A seen; for w in a b a c b a; do seen[$w]=$(( ${seen[$w]:-0} + 1 )); done\n"
		"echo \"n=$n a=${seen[a]}\"\n"
		"echo 'to stderr' >&2\n"
		"exit 3\n";
	char *argv[] = { bash, NULL, NULL };
	int n;

	real_init(&t);
	script = mt_test_path(t.dir, "script.sh");
	mt_test_write(script, text, sizeof(text) - 1);
	argv[1] = script;
	mt_quiet_int_eq(run_same(&t, argv, NULL, "bash"), 3);
	/* bash, its subshells, and seq, sort, tr, wc that they exec. */
	n = assert_traces_complete(t.traces, "bash");
	ck_assert_int_ge(n, 6);
	free(script);
	real_done(&t);
	free(bash);
}
END_TEST

/*
 * A real project's own test suite: CPython's tests of os, posix (spawn
 * with file actions that close descriptors 0 to 2), fork, wait4 and json
 * pass traced as they pass bare.  They look at what a tracer could change:
 * descriptor numbers, which descriptors are open, children and their wait
 * results, signals.  Output differs run to run (timings), so only the
 * verdict is compared.
 */
START_TEST(test_pythons_own_os_posix_and_fork_tests_pass_traced)
{
	real_t t;
	char *py = find_program("/usr/bin/python3"), *tests, *sh = find_program("sh");
	char script[4096];
	char *argv[] = { sh, "-c", script, NULL };
	char preload[4096], output[4096];
	char *tenv[] = { preload, output, NULL };
	mt_test_run_t a, b;

	if (MT_TEST_SANITIZED) {
		MT_TEST_SKIP("the preload is never sanitized: make check runs CPython's tests "
			     "traced (this is make sanitize)");
		free(py);
		free(sh);
		return;
	}
	real_init(&t);
	tests = mt_test_path(t.dir, "run");
	mt_quiet_int_eq(mkdir(tests, 0700), 0);
	snprintf(script, sizeof(script),
		 "cd '%s' && exec %s -m test test_os test_posix test_fork1 test_wait4 test_json",
		 tests, py);
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s/libmtpreload.so", mt_test_build_dir());
	snprintf(output, sizeof(output), "MEMTRACE_OUTPUT=%s/py.%%p.jsonl.zst", t.traces);
	mt_test_run(&b, argv, tenv);
	if (!(b.status == 0 && strstr(b.out, "Tests result: SUCCESS"))) {
		/* Bare first, then: a suite that fails here bare is no
		 * evidence against the preload. */
		mt_test_run(&a, argv, NULL);
		if (!(a.status == 0 && strstr(a.out, "Tests result: SUCCESS"))) {
			MT_TEST_SKIP("CPython's own tests fail here bare (exit %d)", a.status);
			mt_test_run_release(&a);
			mt_test_run_release(&b);
			goto done;
		}
		mt_test_run_release(&a);
	}
	mt_quiet(b.status == 0 && strstr(b.out, "Tests result: SUCCESS"),
		 "traced, python's tests fail (exit %d), bare they pass:\n%s%s", b.status,
		 b.out, b.err);
	/* test_os SIGKILLs a child it has just spawned: that one child's
	 * trace, if the kill came after its start, is cut without its stop. */
	ck_assert_int_ge(assert_traces_complete_but(t.traces, "python's tests", 1), 5);
	mt_test_run_release(&b);
	/* And under memtrace record, one collector the parent of the tree. */
	{
		char *mt = mt_test_memtrace(), *rec = mt_test_path(t.dir, "record");
		char *rargv[] = { mt, "record", "-o", rec, "--", sh, "-c", script, NULL };

		mt_test_run(&b, rargv, NULL);
		mt_quiet(b.status == 0 && strstr(b.out, "Tests result: SUCCESS"),
			 "under record, python's tests fail (exit %d):\n%s%s", b.status,
			 b.out, b.err);
		ck_assert_int_ge(assert_traces_complete_but(rec, "python's tests, recorded", 1), 5);
		mt_test_run_release(&b);
		free(rec);
		free(mt);
	}
done:
	free(tests);
	real_done(&t);
	free(py);
	free(sh);
}
END_TEST

Suite *mt_suite_real(void)
{
	Suite *s = suite_create("real");
	TCase *tc = tcase_create("programs");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_python3_runs_unchanged_and_its_trace_is_complete);
	tcase_add_test(tc, test_perl_runs_unchanged_and_its_trace_is_complete);
	tcase_add_test(tc, test_sort_runs_unchanged_and_its_trace_is_complete);
	tcase_add_test(tc, test_gcc_compiles_the_same_object_and_every_trace_is_complete);
	tcase_add_test(tc, test_git_commits_the_same_history_and_every_trace_is_complete);
	tcase_add_test(tc, test_bash_script_that_forks_and_pipes_runs_unchanged_and_every_trace_is_complete);
	suite_add_tcase(s, tc);
	tc = tcase_create("test suites");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_pythons_own_os_posix_and_fork_tests_pass_traced);
	suite_add_tcase(s, tc);
	return s;
}
