/*
 * check_sweep: the out-of-memory sweep for any program.  MEMTRACE_FAIL_AT=N
 * in the preload (the Nth traced allocation returns NULL with ENOMEM and
 * is recorded as an alloc.fail with "fail_at":N), and memtrace-run
 * --oom-sweep over tests/workloads/wl_oom_safe.c (checks every
 * allocation) and wl_oom_crash.c (writes through NULL when its 3rd
 * allocation fails, in load_table_unchecked).
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mt_test.h"
#include "mt_test_trace.h"

static void assert_status(const mt_test_run_t *r, int want)
{
	mt_quiet(r->status == want, "exit %d, want %d\nstdout:\n%s\nstderr:\n%s",
		 r->status, want, r->out, r->err);
}

/* Run a workload under the preload with trace dir/trace and fail_at
 * (NULL: MEMTRACE_FAIL_AT unset). */
static void run_failing(mt_test_run_t *r, const char *dir, const char *trace,
			const char *name, const char *fail_at, const char *arg)
{
	char pre[4096], out[4096], fail[256];
	char *prog = mt_test_workload(name), *path = mt_test_path(dir, trace);
	char *argv[] = { prog, (char *)arg, NULL };
	char *env[] = { pre, out, fail_at ? fail : NULL, NULL };

	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s/libmtpreload.so", mt_test_build_dir());
	snprintf(out, sizeof(out), "MEMTRACE_OUTPUT=%s", path);
	snprintf(fail, sizeof(fail), "MEMTRACE_FAIL_AT=%s", fail_at ? fail_at : "");
	/* The suite's own environment must not arm it. */
	unsetenv("MEMTRACE_FAIL_AT");
	mt_test_run(r, argv, env);
	free(prog);
	free(path);
}

/* The lines of a trace of kind alloc.fail, and how many. */
static int fails_in(const char *path, char *first, size_t cap)
{
	char *text = mt_test_read(path, NULL), *line, *save = NULL;
	int n = 0;

	mt_quiet(text != NULL, "no trace %s", path);
	if (first)
		first[0] = '\0';
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (strstr(line, "\"kind\":\"alloc.fail\"")) {
			if (!n && first)
				snprintf(first, cap, "%s", line);
			n++;
		}
	free(text);
	return n;
}

static void assert_check_complete(const char *path)
{
	char *mt = mt_test_memtrace();
	char *argv[] = { mt, "check", (char *)path, NULL };
	mt_test_run_t r;

	mt_test_run(&r, argv, NULL);
	assert_status(&r, 0);
	ck_assert_str_eq(r.out, "{\"status\":\"complete\",\"message\":null,\"caveats\":[]}\n");
	mt_test_run_release(&r);
	free(mt);
}

/* ================= MEMTRACE_FAIL_AT ================= */

START_TEST(test_fail_at_fails_the_nth_allocation_with_enomem)
{
	static const char *const fn[] = {
		"malloc", "calloc", "realloc", "strdup", "posix_memalign",
		"aligned_alloc", "memalign", "reallocarray",
	};
	/* What the trace's fn says: strdup allocates with malloc. */
	static const char *const traced_fn[] = {
		"malloc", "calloc", "realloc", "malloc", "posix_memalign",
		"aligned_alloc", "memalign", "reallocarray",
	};
	char *dir = mt_test_scratch();

	for (int n = 1; n <= 9; n++) {
		char at[16], trace[32], want[128], line[4096], *path;
		mt_test_run_t r;

		snprintf(at, sizeof(at), "%d", n);
		snprintf(trace, sizeof(trace), "t%d.jsonl", n);
		run_failing(&r, dir, trace, "wl_oom_safe", at, NULL);
		path = mt_test_path(dir, trace);
		if (n == 9) {
			/* Eight allocations: the ninth never comes. */
			assert_status(&r, 0);
			ck_assert_str_eq(r.err, "");
			mt_quiet_int_eq(fails_in(path, NULL, 0), 0);
		} else {
			/* 1, not 3: errno was ENOMEM (posix_memalign: its
			 * result). */
			assert_status(&r, 1);
			snprintf(want, sizeof(want), "wl_oom_safe: out of memory in %s\n",
				 fn[n - 1]);
			ck_assert_str_eq(r.err, want);
			mt_quiet_int_eq(fails_in(path, line, sizeof(line)), 1);
			snprintf(want, sizeof(want), "\"fn\":\"%s\",", traced_fn[n - 1]);
			mt_quiet(strstr(line, want), "%s lacks %s", line, want);
			snprintf(want, sizeof(want), ",\"fail_at\":%d,", n);
			mt_quiet(strstr(line, want), "%s lacks %s", line, want);
			mt_quiet(strstr(line, ",\"stack\":"), "no stack: %s", line);
		}
		assert_check_complete(path);
		mt_test_run_release(&r);
		free(path);
	}
}
END_TEST

START_TEST(test_fail_at_unset_zero_or_bad_changes_nothing)
{
	static const char *const values[] = { NULL, "0", "", "3x", "-2" };
	char *dir = mt_test_scratch();

	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		mt_test_run_t r;
		char *path = mt_test_path(dir, "t.jsonl");
		int bad = values[i] && values[i][0] && strcmp(values[i], "0");

		run_failing(&r, dir, "t.jsonl", "wl_oom_crash", values[i], NULL);
		assert_status(&r, 0);
		mt_quiet_int_eq(fails_in(path, NULL, 0), 0);
		if (bad) {
			char want[256];

			snprintf(want, sizeof(want), "memtrace: MEMTRACE_FAIL_AT is not a "
				 "number of allocations: '%s'; no allocation is made "
				 "to fail\n", values[i]);
			ck_assert_str_eq(r.err, want);
		} else {
			ck_assert_str_eq(r.err, "");
		}
		mt_test_run_release(&r);
		free(path);
	}
}
END_TEST

/* Every trace in dir: how many, and how many hold a fail_at. */
static void count_traces(const char *dir, int *traces, int *failing)
{
	char cmd[4096];
	FILE *p;
	char name[4096];

	*traces = *failing = 0;
	snprintf(cmd, sizeof(cmd), "ls '%s'", dir);
	p = popen(cmd, "r");
	mt_quiet_ptr_nonnull(p);
	while (fgets(name, sizeof(name), p)) {
		char *path, *text;

		name[strcspn(name, "\n")] = '\0';
		if (!strstr(name, ".jsonl"))
			continue;
		path = mt_test_path(dir, name);
		text = mt_test_read(path, NULL);
		mt_quiet_ptr_nonnull(text);
		++*traces;
		*failing += strstr(text, "\"fail_at\":") != NULL;
		free(text);
		free(path);
	}
	pclose(p);
}

START_TEST(test_fail_at_is_for_the_process_it_was_set_for)
{
	/* wl_fork: the parent makes 2 allocations and forks a child that
	 * makes 3, then execs one that makes 4 and writes into each: had
	 * either inherited MEMTRACE_FAIL_AT=3, the exec'd one would crash
	 * and the parent exit 4. */
	char *dir = mt_test_scratch();
	int traces, failing;
	mt_test_run_t r;

	run_failing(&r, dir, "fork.jsonl", "wl_fork", "3", NULL);
	assert_status(&r, 0);
	ck_assert_str_eq(r.out, "fork done\n");
	mt_test_run_release(&r);
	/* The parent, the forked child, the child that execs and the image
	 * it execs: a trace each. */
	count_traces(dir, &traces, &failing);
	mt_quiet_int_eq(traces, 4);
	mt_quiet_int_eq(failing, 0);
	/* The parent's own first allocation does fail, and only it. */
	dir = mt_test_scratch();
	run_failing(&r, dir, "fork.jsonl", "wl_fork", "1", NULL);
	assert_status(&r, 0);
	mt_test_run_release(&r);
	count_traces(dir, &traces, &failing);
	mt_quiet_int_eq(traces, 4);
	mt_quiet_int_eq(failing, 1);
	{
		char *path = mt_test_path(dir, "fork.jsonl"), line[4096];

		mt_quiet_int_eq(fails_in(path, line, sizeof(line)), 1);
		mt_quiet_ptr_nonnull(strstr(line, "\"size\":2222,"));
		free(path);
	}
}
END_TEST

/* ================= memtrace-run --oom-sweep ================= */

/* The text of a whole zstd trace (the sweep writes DIR/oom.N.jsonl.zst),
 * NUL-terminated; anything but one or more whole zstd frames fails. */
static char *zstd_text(const char *path)
{
	static const unsigned char magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
	size_t len;
	char *raw = mt_test_read(path, &len);

	mt_quiet(raw != NULL, "no trace %s", path);
	mt_quiet(len >= sizeof(magic) && !memcmp(raw, magic, sizeof(magic)),
		 "%s is not zstd", path);
	free(raw);
	return mt_test_trace_text(path, NULL, 1);
}

typedef struct {
	char *dir, *out;
	mt_test_run_t r;
	double seconds;
} sweep_t;

/* memtrace-run ARGS... -o dir/out -- workload [arg]; NULL ends ARGS. */
static void run_sweep(sweep_t *s, const char *name, const char *arg, ...)
{
	char *script = mt_test_path(mt_test_source_dir(), "scripts/memtrace-run");
	char *prog = mt_test_workload(name);
	char an[4096], pre[4096];
	char *argv[32], *env[] = { an, pre, NULL };
	struct timespec t0, t1;
	int n = 0;
	va_list ap;

	s->dir = mt_test_scratch();
	s->out = mt_test_path(s->dir, "out");
	argv[n++] = script;
	va_start(ap, arg);
	while ((argv[n] = va_arg(ap, char *)) != NULL)
		n++;
	va_end(ap);
	argv[n++] = "-o";
	argv[n++] = s->out;
	argv[n++] = "--";
	argv[n++] = prog;
	if (arg)
		argv[n++] = (char *)arg;
	argv[n] = NULL;
	snprintf(an, sizeof(an), "MEMTRACE_ANALYZER=%s/memtrace", mt_test_build_dir());
	snprintf(pre, sizeof(pre), "MEMTRACE_PRELOAD=%s/libmtpreload.so",
		 mt_test_build_dir());
	unsetenv("MEMTRACE_FAIL_AT");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	mt_test_run(&s->r, argv, env);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s->seconds = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	free(script);
	free(prog);
}

#define SWEEP(s, name, arg, ...) run_sweep((s), (name), (arg), __VA_ARGS__, (char *)NULL)

static void sweep_release(sweep_t *s)
{
	mt_test_run_release(&s->r);
	free(s->out);
}

/* The names in the sweep's directory, sorted, one a line. */
static char *listing(const sweep_t *s)
{
	char cmd[4096], *out = calloc(1, 4096);
	FILE *p;
	size_t n;

	mt_quiet_ptr_nonnull(out);
	snprintf(cmd, sizeof(cmd), "ls -A '%s' 2>/dev/null | sort", s->out);
	p = popen(cmd, "r");
	mt_quiet_ptr_nonnull(p);
	n = fread(out, 1, 4095, p);
	out[n] = '\0';
	pclose(p);
	return out;
}

START_TEST(test_sweep_of_a_program_that_handles_every_failure_passes)
{
	sweep_t s;
	char want[4096];
	char *files;

	SWEEP(&s, "wl_oom_safe", NULL, "--oom-sweep");
	assert_status(&s.r, 0);
	snprintf(want, sizeof(want),
		 "memtrace-run: out-of-memory sweep of wl_oom_safe, 10 s per run; "
		 "traces in %s/oom.N.jsonl.zst\n"
		 "N=1 malloc of 64 B: exit 1 (error)\n"
		 "N=2 calloc of 128 B: exit 1 (error)\n"
		 "N=3 realloc of 4.0 KiB: exit 1 (error)\n"
		 "N=4 malloc of 40 B: exit 1 (error)\n"
		 "N=5 posix_memalign of 128 B: exit 1 (error)\n"
		 "N=6 aligned_alloc of 256 B: exit 1 (error)\n"
		 "N=7 memalign of 96 B: exit 1 (error)\n"
		 "N=8 reallocarray of 120 B: exit 1 (error)\n"
		 "N=9 no allocation 9 to fail: exit 0 (clean)\n"
		 "memtrace-run: 8 allocations of wl_oom_safe failed one at a time: "
		 "0 exited cleanly, 8 with an error, 0 crashed, 0 hung; the program "
		 "makes 8 allocations\n", s.out);
	ck_assert_str_eq(s.r.out, want);
	ck_assert_str_eq(s.r.err, "");
	/* Nothing kept of runs that neither crashed nor hung. */
	files = listing(&s);
	ck_assert_str_eq(files, "");
	free(files);
	sweep_release(&s);
}
END_TEST

START_TEST(test_sweep_names_the_stack_of_the_allocation_that_crashes)
{
	sweep_t s;
	char want[4096], *trace, *log, *files, *text;

	SWEEP(&s, "wl_oom_crash", NULL, "--oom-sweep");
	assert_status(&s.r, 1);
	trace = mt_test_path(s.out, "oom.3.jsonl.zst");
	log = mt_test_path(s.out, "oom.3.log");
	snprintf(want, sizeof(want),
		 "N=1 malloc of 32 B: exit 1 (error)\n"
		 "N=2 malloc of 48 B: exit 1 (error)\n"
		 "N=3 malloc of 512 B: killed by SIGSEGV (crash)\n"
		 "    at load_table_unchecked (wl_oom_crash) < main (wl_oom_crash) < ");
	mt_quiet(strstr(s.r.out, want), "no crash at N=3 with its stack:\n%s",
		 s.r.out);
	snprintf(want, sizeof(want),
		 "    trace %s, output %s\n"
		 "N=4 malloc of 16 B: exit 1 (error)\n"
		 "N=5 malloc of 24 B: exit 1 (error)\n"
		 "N=6 no allocation 6 to fail: exit 0 (clean)\n"
		 "memtrace-run: 5 allocations of wl_oom_crash failed one at a time: "
		 "0 exited cleanly, 4 with an error, 1 crashed, 0 hung; the program "
		 "makes 5 allocations\n", trace, log);
	mt_quiet(strstr(s.r.out, want), "want\n%s\nin\n%s", want, s.r.out);
	/* The crashed run's trace is kept: whole, stopped by the signal. */
	files = listing(&s);
	ck_assert_str_eq(files, "oom.3.jsonl.zst\noom.3.log\n");
	text = zstd_text(trace);
	mt_quiet_ptr_nonnull(strstr(text, "\"kind\":\"trace.stop\",\"reason\":\"signal\""));
	assert_check_complete(trace);
	free(text);
	free(files);
	free(trace);
	free(log);
	sweep_release(&s);
}
END_TEST

START_TEST(test_sweep_counts_a_run_past_its_timeout_as_hung)
{
	sweep_t s;
	char *files;

	/* "hang": wl_oom_safe waits forever on a failure. */
	SWEEP(&s, "wl_oom_safe", "hang", "--oom-sweep", "--timeout", "1", "--max", "2");
	assert_status(&s.r, 1);
	mt_quiet(strstr(s.r.out, "N=1 malloc of 64 B: timed out after 1 s (hang)\n"
					"    at main (wl_oom_safe) < ") &&
		      strstr(s.r.out, "N=2 calloc of 128 B: timed out after 1 s (hang)\n"),
		      "no hang reported:\n%s", s.r.out);
	mt_quiet_ptr_nonnull(strstr(s.r.out, "0 crashed, 2 hung; stopped at --max 2\n"));
	/* A hang guard, not a timing: "timed out after 1 s" already says
	 * each watchdog ended its run.  This only catches a sweep stuck
	 * long past that (about 3 s here), by a margin no slow, busy or
	 * sanitized machine comes near. */
	mt_quiet(s.seconds < 30, "the sweep took %.1f s", s.seconds);
	files = listing(&s);
	ck_assert_str_eq(files, "oom.1.jsonl.zst\noom.1.log\noom.2.jsonl.zst\noom.2.log\n");
	free(files);
	sweep_release(&s);
}
END_TEST

START_TEST(test_sweep_stops_at_max)
{
	sweep_t s;

	SWEEP(&s, "wl_oom_safe", NULL, "--oom-sweep", "--max=3");
	assert_status(&s.r, 0);
	mt_quiet_ptr_nonnull(strstr(s.r.out, "N=3 realloc of 4.0 KiB: exit 1 (error)\n"
			     "memtrace-run: 3 allocations of wl_oom_safe failed "
			     "one at a time: 0 exited cleanly, 3 with an error, 0 "
			     "crashed, 0 hung; stopped at --max 3\n"));
	mt_quiet_ptr_null(strstr(s.r.out, "N=4"));
	sweep_release(&s);
}
END_TEST

START_TEST(test_sweep_quiet_prints_crashes_and_the_verdict_only)
{
	sweep_t s;

	SWEEP(&s, "wl_oom_crash", NULL, "--oom-sweep", "-q");
	assert_status(&s.r, 1);
	mt_quiet(!strncmp(s.r.out, "N=3 malloc of 512 B: killed by SIGSEGV (crash)\n"
					"    at load_table_unchecked (wl_oom_crash)", 82),
		      "quiet output:\n%s", s.r.out);
	mt_quiet_ptr_null(strstr(s.r.out, "(error)"));
	mt_quiet_ptr_nonnull(strstr(s.r.out, "\nmemtrace-run: 5 allocations of wl_oom_crash"));
	sweep_release(&s);
}
END_TEST

START_TEST(test_sweep_without_a_trace_cannot_judge)
{
	/* A preload that writes no trace stands for a static or set-user-ID
	 * program: the sweep cannot tell whether anything failed. */
	char *script = mt_test_path(mt_test_source_dir(), "scripts/memtrace-run");
	char *prog = mt_test_workload("wl_oom_safe"), *dir = mt_test_scratch();
	char *out = mt_test_path(dir, "out");
	char an[4096], pre[4096];
	char *argv[] = { script, "--oom-sweep", "-o", out, "--", prog, NULL };
	char *env[] = { an, pre, NULL };
	mt_test_run_t r;

	snprintf(an, sizeof(an), "MEMTRACE_ANALYZER=%s/memtrace", mt_test_build_dir());
	snprintf(pre, sizeof(pre), "MEMTRACE_PRELOAD=%s/workloads/libwl_early.so",
		 mt_test_build_dir());
	mt_test_run(&r, argv, env);
	assert_status(&r, 70);
	mt_quiet_ptr_nonnull(strstr(r.err, "memtrace-run: run 1 of the sweep left no trace"));
	mt_test_run_release(&r);
	free(out);
	free(prog);
	free(script);
}
END_TEST

START_TEST(test_sweep_usage_errors_run_nothing)
{
	static const char *const bad[][4] = {
		{ "--oom-sweep", "-n", "2", NULL },
		{ "--oom-sweep", "--strict", NULL },
		{ "--oom-sweep", "--max", "0", NULL },
		{ "--oom-sweep", "--max", "x", NULL },
		{ "--oom-sweep", "--timeout", "0", NULL },
		{ "--oom-sweep", "--timeout=1.5", NULL },
		{ "--max", "3", NULL },
		{ "--timeout", "3", NULL },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sweep_t s;
		char *files;

		SWEEP(&s, "wl_oom_safe", NULL, bad[i][0], bad[i][1], bad[i][2]);
		mt_quiet(s.r.status == 64, "%s %s: exit %d: %s", bad[i][0],
			 bad[i][1], s.r.status, s.r.err);
		/* One line, memtrace-run's own. */
		mt_quiet(!strncmp(s.r.err, "memtrace-run: ", 14) &&
			 strchr(s.r.err, '\n') == s.r.err + s.r.err_len - 1,
			 "%s", s.r.err);
		ck_assert_str_eq(s.r.out, "");
		files = listing(&s);
		ck_assert_str_eq(files, "");
		free(files);
		sweep_release(&s);
	}
}
END_TEST

Suite *mt_suite_sweep(void)
{
	Suite *s = suite_create("sweep");
	TCase *fail = tcase_create("fail_at");
	TCase *sweep = tcase_create("oom_sweep");

	tcase_add_test(fail, test_fail_at_fails_the_nth_allocation_with_enomem);
	tcase_add_test(fail, test_fail_at_unset_zero_or_bad_changes_nothing);
	tcase_add_test(fail, test_fail_at_is_for_the_process_it_was_set_for);
	tcase_set_timeout(sweep, 60);
	tcase_add_test(sweep, test_sweep_of_a_program_that_handles_every_failure_passes);
	tcase_add_test(sweep, test_sweep_names_the_stack_of_the_allocation_that_crashes);
	tcase_add_test(sweep, test_sweep_counts_a_run_past_its_timeout_as_hung);
	tcase_add_test(sweep, test_sweep_stops_at_max);
	tcase_add_test(sweep, test_sweep_quiet_prints_crashes_and_the_verdict_only);
	tcase_add_test(sweep, test_sweep_without_a_trace_cannot_judge);
	tcase_add_test(sweep, test_sweep_usage_errors_run_nothing);
	suite_add_tcase(s, fail);
	suite_add_tcase(s, sweep);
	return s;
}
