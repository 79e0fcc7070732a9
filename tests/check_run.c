/*
 * check_run: scripts/memtrace-run end to end.  Each test runs the script on
 * a workload of tests/workloads/ and holds its rows (parsed with json-c),
 * its traces (zstd, decompressed here with libzstd), its exit status and
 * what it prints to what docs/memtrace-run.md promises.  The script is
 * pointed at the build under test through MEMTRACE_ANALYZER and
 * MEMTRACE_PRELOAD, except in the tests of how it finds its tools by
 * itself.
 */
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mt_test.h"
#include "mt_test_trace.h"

/* ---- paths ---- */

static char *script_path(void)
{
	char *dir = mt_test_path(mt_test_source_dir(), "scripts");
	char *p = mt_test_path(dir, "memtrace-run");

	free(dir);
	return p;
}

static char *build_file(const char *name)
{
	return mt_test_path(mt_test_build_dir(), name);
}

/* Before every test (in its own process): the tools of the build under
 * test, whatever the caller's environment says. */
static void use_build_tools(void)
{
	char *a = build_file("memtrace"), *p = build_file("libmtpreload.so");

	mt_quiet_int_eq(setenv("MEMTRACE_ANALYZER", a, 1), 0);
	mt_quiet_int_eq(setenv("MEMTRACE_PRELOAD", p, 1), 0);
	unsetenv("LD_PRELOAD");
	unsetenv("MEMTRACE_OUTPUT");
	unsetenv("MEMTRACE_STACK_DEPTH");
	free(a);
	free(p);
}

/* ---- running the script ---- */

typedef struct {
	char *dir;   /* the test's scratch directory */
	char *out;   /* <dir>/out: the -o DIR of most tests */
	char *stdout_path, *stderr_path;
	int status;  /* exit status, or 128 + signal */
	char *so, *se; /* what it wrote on stdout and stderr */
} run_t;

static void run_init(run_t *r)
{
	memset(r, 0, sizeof(*r));
	r->dir = mt_test_scratch();
	r->out = mt_test_path(r->dir, "out");
	r->stdout_path = mt_test_path(r->dir, "stdout");
	r->stderr_path = mt_test_path(r->dir, "stderr");
}

static void run_release(run_t *r)
{
	free(r->out);
	free(r->stdout_path);
	free(r->stderr_path);
	free(r->so);
	free(r->se);
}

/* Start argv in its own process group, in cwd (NULL: ours), stdin from
 * the file in (NULL: /dev/null), stdout and stderr to files of r. */
static pid_t start(run_t *r, const char *cwd, const char *in, char *const argv[])
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int i = open(in ? in : "/dev/null", O_RDONLY);
		int o = open(r->stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(r->stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (i < 0 || o < 0 || e < 0 || (cwd && chdir(cwd) != 0))
			_exit(125);
		setpgid(0, 0);
		/* Whatever our caller ignores, the script starts as from a shell. */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		dup2(i, 0);
		dup2(o, 1);
		dup2(e, 2);
		close(i);
		close(o);
		close(e);
		alarm(MT_TEST_RUN_TIMEOUT);
		execv(argv[0], argv);
		_exit(125);
	}
	return pid;
}

static void finish(run_t *r, pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		mt_quiet_int_eq(errno, EINTR);
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	free(r->so);
	free(r->se);
	r->so = mt_test_read(r->stdout_path, NULL);
	r->se = mt_test_read(r->stderr_path, NULL);
	mt_quiet_ptr_nonnull(r->so);
	mt_quiet_ptr_nonnull(r->se);
}

/* memtrace-run ARGS... (NULL-terminated), from cwd, stdin from in. */
static void run_in(run_t *r, const char *cwd, const char *in, ...)
{
	char *argv[32];
	int n = 0;
	va_list ap;

	argv[n++] = script_path();
	va_start(ap, in);
	while ((argv[n] = va_arg(ap, char *)) != NULL) {
		n++;
		ck_assert_int_lt(n, 31);
	}
	va_end(ap);
	finish(r, start(r, cwd, in, argv));
	free(argv[0]);
}

#define RUN(r, ...) run_in((r), NULL, NULL, __VA_ARGS__, (char *)NULL)

/* How many times needle occurs in haystack. */
static int count_lines_with(const char *haystack, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(haystack, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* ---- rows ---- */

typedef struct {
	json_object *row[16];
	int n;
} rows_t;

/* Parse every line of a JSONL file; the file must exist and every line
 * must be one JSON object. */
static void rows_read(rows_t *rows, const char *path)
{
	char *text = mt_test_read(path, NULL), *line, *save = NULL;

	mt_quiet(text != NULL, "%s is missing", path);
	memset(rows, 0, sizeof(*rows));
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		ck_assert_int_lt(rows->n, 16);
		rows->row[rows->n] = json_tokener_parse(line);
		mt_quiet(rows->row[rows->n] &&
				      json_object_is_type(rows->row[rows->n], json_type_object),
			      "not a JSON object in %s: %s", path, line);
		rows->n++;
	}
	free(text);
}

static void rows_release(rows_t *rows)
{
	for (int i = 0; i < rows->n; i++)
		json_object_put(rows->row[i]);
}

static void rows_in(rows_t *rows, const char *dir, const char *name)
{
	char *p = mt_test_path(dir, name);

	rows_read(rows, p);
	free(p);
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v;

	mt_quiet(json_object_object_get_ex(o, key, &v), "no field %s in %s",
		 key, json_object_to_json_string(o));
	return v;
}

static int64_t num(json_object *o, const char *key)
{
	json_object *v = get(o, key);

	mt_quiet(json_object_is_type(v, json_type_int), "%s is not an integer", key);
	return json_object_get_int64(v);
}

/* The string value of key, or NULL when it is null. */
static const char *str(json_object *o, const char *key)
{
	json_object *v = get(o, key);

	if (json_object_is_type(v, json_type_null))
		return NULL;
	mt_quiet(json_object_is_type(v, json_type_string), "%s is not a string", key);
	return json_object_get_string(v);
}

static int in_dir(const char *dir, const char *name)
{
	char *p = mt_test_path(dir, name);
	int e = mt_test_exists(p);

	free(p);
	return e;
}

/* How many entries of dir begin with prefix and end with suffix. */
static int count_entries(const char *dir, const char *prefix, const char *suffix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!strncmp(e->d_name, prefix, strlen(prefix)) &&
		    len >= strlen(suffix) && !strcmp(e->d_name + len - strlen(suffix), suffix))
			n++;
	}
	closedir(d);
	return n;
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* ---- traces: memtrace-run writes them zstd-compressed ---- */

static const unsigned char zstd_magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };

/* Whether the file at dir/name begins with the zstd frame magic. */
static int is_zstd(const char *dir, const char *name)
{
	char *p = mt_test_path(dir, name), *s;
	size_t len = 0;
	int z;

	s = mt_test_read(p, &len);
	z = s && len >= sizeof(zstd_magic) && !memcmp(s, zstd_magic, sizeof(zstd_magic));
	free(s);
	free(p);
	return z;
}

/* The text of a zstd trace, NUL-terminated: as much as decodes, so a trace
 * a collector is still writing gives its whole frames so far ("" before
 * its first).  NULL when the file is missing; anything but zstd fails. */
static char *trace_text(const char *path)
{
	size_t len;
	char *raw = mt_test_read(path, &len);

	if (!raw)
		return NULL;
	mt_quiet(len < sizeof(zstd_magic) || !memcmp(raw, zstd_magic, sizeof(zstd_magic)),
		 "%s is not zstd", path);
	free(raw);
	return mt_test_trace_text(path, NULL, 0);
}

/* Bad input: one line on stderr naming memtrace-run, nothing on stdout. */
static void assert_one_error_line(const run_t *r, int status, const char *words)
{
	mt_quiet(r->status == status, "status %d, not %d; stderr: %s",
		 r->status, status, r->se);
	ck_assert_str_eq(r->so, "");
	mt_quiet(count_lines(r->se) == 1 && !strncmp(r->se, "memtrace-run: ", 14),
		 "not one line on stderr: %s", r->se);
	mt_quiet(strstr(r->se, words), "stderr does not say '%s': %s", words, r->se);
}

/* ---- the tests ---- */

START_TEST(test_three_runs_write_three_rows_indexed_from_one_with_matching_counts)
{
	char *wl = mt_test_workload("wl_run_steady");
	run_t r;
	rows_t rows;

	run_init(&r);
	RUN(&r, "-n", "3", "-o", r.out, "--", wl);
	mt_quiet(r.status == 0, "status %d: %s", r.status, r.se);
	rows_in(&rows, r.out, "allocations.repetitions.jsonl");
	mt_quiet_int_eq(rows.n, 3);
	for (int i = 0; i < 3; i++) {
		json_object *row = rows.row[i], *s = get(row, "summary");

		ck_assert_str_eq(str(row, "schema"), "tiny.profiling.allocation-repetition/v1");
		mt_quiet_int_eq(num(row, "execution_index"), i + 1);
		mt_quiet_int_eq(num(row, "exit_code"), 0);
		ck_assert_str_eq(str(row, "state"), "summary_written");
		ck_assert_str_eq(str(s, "status"), "complete");
		mt_quiet_int_eq(num(s, "allocations"), 10);
		mt_quiet_int_eq(num(s, "frees"), 7);
		mt_quiet_int_eq(num(s, "live_bytes"), 3000);
		mt_quiet_int_eq(num(s, "peak_live_bytes"), 10000);
	}
	/* One trace per run, I from 1, zstd-compressed. */
	ck_assert(in_dir(r.out, "allocations.1.jsonl.zst"));
	ck_assert(in_dir(r.out, "allocations.2.jsonl.zst"));
	ck_assert(in_dir(r.out, "allocations.3.jsonl.zst"));
	ck_assert(!in_dir(r.out, "allocations.4.jsonl.zst"));
	ck_assert(is_zstd(r.out, "allocations.1.jsonl.zst"));
	ck_assert(is_zstd(r.out, "allocations.2.jsonl.zst"));
	ck_assert(is_zstd(r.out, "allocations.3.jsonl.zst"));
	/* No plain trace beside them: of allocations.*.jsonl, only the rows. */
	mt_quiet_int_eq(count_entries(r.out, "allocations.", ".jsonl"), 1);
	mt_quiet(!strstr(r.se, "warning"), "matching runs warned: %s", r.se);
	rows_release(&rows);
	run_release(&r);
	free(wl);
}
END_TEST

START_TEST(test_run_one_is_the_capture_and_its_row_is_appended)
{
	char *wl = mt_test_workload("wl_run_steady");
	char *trace = mt_test_path("out", "allocations.1.jsonl.zst");
	char *summary = mt_test_path("out", "summary.jsonl");
	run_t r;
	rows_t rows, caps;

	run_init(&r);
	/* Twice into the same DIR, with DIR relative to the working directory:
	 * the repetitions file is replaced, the capture row appended. */
	for (int k = 0; k < 2; k++) {
		run_in(&r, r.dir, NULL, "-n", "2", "-o", "out/", "--", wl, (char *)NULL);
		mt_quiet(r.status == 0, "status %d: %s", r.status, r.se);
	}
	rows_in(&rows, r.out, "allocations.repetitions.jsonl");
	mt_quiet_int_eq(rows.n, 2);
	rows_in(&caps, r.out, "captures.jsonl");
	mt_quiet_int_eq(caps.n, 2);
	for (int i = 0; i < caps.n; i++) {
		ck_assert_str_eq(str(caps.row[i], "kind"), "allocation_trace");
		ck_assert_str_eq(str(caps.row[i], "tool"), "lib/memtrace");
		ck_assert_str_eq(str(caps.row[i], "scope"), "direct");
		ck_assert_str_eq(str(caps.row[i], "capture_path"), trace);
		ck_assert_str_eq(str(caps.row[i], "summary_path"), summary);
		ck_assert_str_eq(str(caps.row[i], "state"), "summary_written");
		mt_quiet_ptr_null(str(caps.row[i], "caveat_kind"));
		mt_quiet_ptr_null(str(caps.row[i], "caveat_message"));
	}
	rows_release(&caps);
	/* summary.jsonl: the one summary line of run 1's trace. */
	rows_in(&caps, r.out, "summary.jsonl");
	mt_quiet_int_eq(caps.n, 1);
	ck_assert_str_eq(str(caps.row[0], "schema"), "memtrace.summary/v1");
	ck_assert_str_eq(str(caps.row[0], "status"), "complete");
	mt_quiet_int_eq(num(caps.row[0], "allocations"), 10);
	mt_quiet_int_eq(num(caps.row[0], "live_bytes"), 3000);
	rows_release(&caps);
	rows_release(&rows);
	run_release(&r);
	free(trace);
	free(summary);
	free(wl);
}
END_TEST

START_TEST(test_failing_workload_gives_workload_failed_rows_and_its_exit_status)
{
	char *wl = mt_test_workload("wl_exit"); /* _exit(3) */
	run_t r;
	rows_t rows;

	run_init(&r);
	RUN(&r, "-n", "2", "-o", r.out, "--", wl);
	mt_quiet_int_eq(r.status, 3);
	rows_in(&rows, r.out, "allocations.repetitions.jsonl");
	mt_quiet_int_eq(rows.n, 2);
	for (int i = 0; i < 2; i++) {
		mt_quiet_int_eq(num(rows.row[i], "execution_index"), i + 1);
		mt_quiet_int_eq(num(rows.row[i], "exit_code"), 3);
		ck_assert_str_eq(str(rows.row[i], "state"), "workload_failed");
		ck_assert(json_object_is_type(get(rows.row[i], "summary"), json_type_null));
	}
	/* Run 1 failed: as in the seed, no capture at all, and it says so. */
	ck_assert(!in_dir(r.out, "summary.jsonl"));
	ck_assert(!in_dir(r.out, "captures.jsonl"));
	mt_quiet(strstr(r.se, "run 1/2: exit 3, ") &&
		 strstr(r.se, ", workload_failed (its row has no summary)\n"), "%s", r.se);
	mt_quiet(strstr(r.se, "run 1 failed: no capture"), "%s", r.se);
	rows_release(&rows);
	run_release(&r);
	free(wl);
}
END_TEST

START_TEST(test_exit_status_is_the_first_non_zero_one)
{
	char *wl = mt_test_workload("wl_run_counter");
	run_t r;
	rows_t rows, caps;
	char *counter;

	run_init(&r);
	counter = mt_test_path(r.dir, "counter");
	/* Runs exit 0, 5 and 7. */
	RUN(&r, "-n", "3", "-o", r.out, "--", wl, counter, "0", "5", "7");
	mt_quiet(r.status == 5, "status %d: %s", r.status, r.se);
	rows_in(&rows, r.out, "allocations.repetitions.jsonl");
	mt_quiet_int_eq(rows.n, 3);
	ck_assert_str_eq(str(rows.row[0], "state"), "summary_written");
	mt_quiet_int_eq(num(rows.row[1], "exit_code"), 5);
	ck_assert_str_eq(str(rows.row[1], "state"), "workload_failed");
	mt_quiet_int_eq(num(rows.row[2], "exit_code"), 7);
	ck_assert_str_eq(str(rows.row[2], "state"), "workload_failed");
	/* Run 1 succeeded, so it is the capture. */
	rows_in(&caps, r.out, "captures.jsonl");
	mt_quiet_int_eq(caps.n, 1);
	ck_assert_str_eq(str(caps.row[0], "state"), "summary_written");
	mt_quiet(strstr(r.se, "warning: the runs differ in exit status"), "%s", r.se);
	rows_release(&caps);
	rows_release(&rows);
	run_release(&r);
	free(counter);
	free(wl);
}
END_TEST

START_TEST(test_runs_whose_counts_differ_are_warned_about)
{
	char *wl = mt_test_workload("wl_run_counter");
	run_t r;
	rows_t rows;
	char *counter;

	run_init(&r);
	counter = mt_test_path(r.dir, "counter");
	/* Run k makes k allocations of 100 bytes and exits 0. */
	RUN(&r, "-n", "3", "-o", r.out, "--", wl, counter);
	mt_quiet(r.status == 0, "status %d: %s", r.status, r.se);
	rows_in(&rows, r.out, "allocations.repetitions.jsonl");
	mt_quiet_int_eq(rows.n, 3);
	for (int i = 0; i < 3; i++)
		mt_quiet_int_eq(num(get(rows.row[i], "summary"), "allocations"), i + 1);
	mt_quiet(strstr(r.se, "warning: the runs differ in allocations (1 to 3), "
				   "peak live (100 B to 300 B), live at exit (100 B to 300 B)"),
		      "no warning naming what differs: %s", r.se);
	rows_release(&rows);
	run_release(&r);
	free(counter);
	free(wl);
}
END_TEST

/* The stderr line that starts with label, its words after the label. */
static void table_row(const char *err, const char *label, char *out, size_t cap)
{
	char pat[64];
	const char *p, *end;

	snprintf(pat, sizeof(pat), "\n  %s ", label);
	p = strstr(err, pat);
	mt_quiet(p != NULL, "no table row '%s' in: %s", label, err);
	p += strlen(pat);
	end = strchr(p, '\n');
	mt_quiet_ptr_nonnull(end);
	/* Squeeze the column padding to single spaces. */
	size_t n = 0;
	for (; p < end && n + 1 < cap; p++) {
		if (*p == ' ' && (n == 0 || out[n - 1] == ' '))
			continue;
		out[n++] = *p;
	}
	while (n && out[n - 1] == ' ')
		n--;
	out[n] = '\0';
}

START_TEST(test_progress_lines_and_table_read_as_documented)
{
	char *wl = mt_test_workload("wl_run_steady"), *wl2 = mt_test_workload("wl_run_counter");
	char *counter, row[256];
	run_t r;

	run_init(&r);
	RUN(&r, "-n", "2", "-o", r.out, "--", wl);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet(strstr(r.se, "run 1/2: exit 0, 10 allocations, peak 9.8 KiB, complete\n") &&
			      strstr(r.se, "run 2/2: exit 0, 10 allocations, peak 9.8 KiB, complete\n"),
		      "progress lines: %s", r.se);
	mt_quiet(strstr(r.se, "memtrace-run: 2 runs of wl_run_steady, 2 summarized"), "%s", r.se);
	mt_quiet(strstr(r.se, "min") && strstr(r.se, "median") && strstr(r.se, "max"),
		 "no table header: %s", r.se);
	table_row(r.se, "allocations", row, sizeof(row));
	ck_assert_str_eq(row, "10 10 10");
	table_row(r.se, "peak live", row, sizeof(row));
	ck_assert_str_eq(row, "9.8 KiB 9.8 KiB 9.8 KiB");
	table_row(r.se, "live at exit", row, sizeof(row));
	ck_assert_str_eq(row, "2.9 KiB 2.9 KiB 2.9 KiB");

	/* The median of 1, 2, 3 allocations is 2; sizes under 1 KiB in B. */
	counter = mt_test_path(r.dir, "counter");
	RUN(&r, "-n", "3", "-o", r.out, "--", wl2, counter);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet(strstr(r.se, "run 1/3: exit 0, 1 allocation, peak 100 B, complete\n"), "%s", r.se);
	table_row(r.se, "allocations", row, sizeof(row));
	ck_assert_str_eq(row, "1 2 3");
	table_row(r.se, "peak live", row, sizeof(row));
	ck_assert_str_eq(row, "100 B 200 B 300 B");
	run_release(&r);
	free(counter);
	free(wl2);
	free(wl);
}
END_TEST

START_TEST(test_workload_stdin_stdout_and_stderr_are_its_own)
{
	static const char input[] = "line one\nline two\n";
	char *wl = mt_test_workload("wl_run_steady"), *in;
	run_t r;

	run_init(&r);
	in = mt_test_path(r.dir, "stdin");
	mt_test_write(in, input, strlen(input));
	run_in(&r, NULL, in, "-n", "2", "-o", r.out, "--", wl, (char *)NULL);
	mt_quiet_int_eq(r.status, 0);
	/* stdout is the workload's alone: run 1 copies all of stdin, run 2
	 * (sharing the same open stdin) finds it at its end, and nothing of
	 * memtrace-run's is there. */
	ck_assert_str_eq(r.so, input);
	mt_quiet(strstr(r.se, "wl_run_steady: on stderr\n"), "%s", r.se);
	run_release(&r);
	free(in);
	free(wl);
}
END_TEST

START_TEST(test_quiet_prints_nothing_of_its_own)
{
	char *wl = mt_test_workload("wl_run_counter"), *counter;
	run_t r;
	rows_t rows;

	run_init(&r);
	counter = mt_test_path(r.dir, "counter");
	/* Even with runs that differ: no progress, no table, no warning. */
	RUN(&r, "--quiet", "-n", "2", "-o", r.out, "--", wl, counter);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.so, "");
	ck_assert_str_eq(r.se, "");
	rows_in(&rows, r.out, "allocations.repetitions.jsonl");
	mt_quiet_int_eq(rows.n, 2);
	rows_release(&rows);
	run_release(&r);
	free(counter);
	free(wl);
}
END_TEST

START_TEST(test_forking_workload_leaves_one_trace_per_process)
{
	char *wl = mt_test_workload("wl_fork");
	char *mt = build_file("memtrace");
	run_t r;
	rows_t rows;

	run_init(&r);
	/* Twice: the child traces of the first invocation are not left to be
	 * taken for the second one's. */
	for (int k = 0; k < 2; k++) {
		RUN(&r, "-n", "2", "-o", r.out, "--", wl);
		mt_quiet(r.status == 0, "status %d: %s", r.status, r.se);
	}
	ck_assert_str_eq(r.so, "fork done\nfork done\n");
	for (int i = 1; i <= 2; i++) {
		char prefix[64];
		DIR *d;
		struct dirent *e;
		int n = 0;

		snprintf(prefix, sizeof(prefix), "allocations.%d.", i);
		/* The parent's trace and one per image: the forked child,
		 * the child that execs (its trace ends with the exec) and the
		 * image it execs, each complete. */
		mt_quiet_int_eq(count_entries(r.out, prefix, ".jsonl.zst"), 4);
		mt_quiet_int_eq(count_entries(r.out, prefix, ".jsonl"), 0);
		d = opendir(r.out);
		mt_quiet_ptr_nonnull(d);
		while ((e = readdir(d)) != NULL) {
			char *path, *argv[4];
			mt_test_run_t c;

			if (strncmp(e->d_name, prefix, strlen(prefix)) ||
			    !strcmp(e->d_name + strlen(prefix), "jsonl.zst"))
				continue;
			n++;
			path = mt_test_path(r.out, e->d_name);
			argv[0] = mt;
			argv[1] = "check";
			argv[2] = path;
			argv[3] = NULL;
			mt_test_run(&c, argv, NULL);
			mt_quiet(c.status == 0, "%s: %s", e->d_name, c.out);
			mt_test_run_release(&c);
			free(path);
		}
		closedir(d);
		mt_quiet_int_eq(n, 3);
	}
	/* The line and the table cover the whole tree: the parent's 2
	 * allocations, the forked child's 3 and the exec'd image's 4; the
	 * peak is the sum of each process's own (4.3 + 9.8 + 17.4 KiB). */
	mt_quiet(strstr(r.se, "run 1/2: exit 0, 4 processes: 9 allocations, peak 31.5 KiB, "
		 "complete (allocations.1.jsonl.zst and 3 child traces)\n"), "%s", r.se);
	mt_quiet(strstr(r.se, "  allocations               9            9            9\n"),
		 "%s", r.se);
	/* The rows cover the tree as the line does: one per run. */
	rows_in(&rows, r.out, "allocations.repetitions.jsonl");
	mt_quiet_int_eq(rows.n, 2);
	mt_quiet_int_eq(num(get(rows.row[1], "summary"), "allocations"), 9);
	rows_release(&rows);
	run_release(&r);
	free(mt);
	free(wl);
}
END_TEST

/* A run's number n in a file of the run's rows or summary, as a string
 * of the line's first "key":n. */
static uint64_t field_in(const char *dir, const char *name, const char *key)
{
	char *p = mt_test_path(dir, name), *s = mt_test_read(p, NULL), *at;
	char pat[64];
	uint64_t v;

	mt_quiet(s != NULL, "%s is missing", p);
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	at = strstr(s, pat);
	mt_quiet(at != NULL, "no %s in %s", key, p);
	v = strtoull(at + strlen(pat), NULL, 10);
	free(s);
	free(p);
	return v;
}

/* The rows, the capture's summary and so a gate of it see what the line
 * sees, the whole tree; --top-only keeps the first process alone, in
 * the line and the rows alike. */
START_TEST(test_rows_and_gates_cover_the_whole_tree_unless_top_only)
{
	char *wl = mt_test_workload("wl_fork");
	char *mt = build_file("memtrace"), *summary;
	char *argv[] = { mt, "gate", NULL, "--max-allocations", "8", NULL };
	uint64_t tree_peak;
	mt_test_run_t g;
	run_t r;

	run_init(&r);
	RUN(&r, "-o", r.out, "--", wl);
	mt_quiet(r.status == 0, "status %d: %s", r.status, r.se);
	mt_quiet(strstr(r.se, "run 1/1: exit 0, 4 processes: 9 allocations, peak 31.5 KiB, "
		 "complete (allocations.1.jsonl.zst and 3 child traces)\n"), "%s", r.se);
	mt_quiet_int_eq(field_in(r.out, "allocations.repetitions.jsonl", "allocations"), 9);
	mt_quiet_int_eq(field_in(r.out, "summary.jsonl", "allocations"), 9);
	tree_peak = field_in(r.out, "summary.jsonl", "peak_live_bytes");
	mt_quiet(tree_peak >= 31 * 1024 && tree_peak < 32 * 1024,
		 "the tree's peak is %llu", (unsigned long long)tree_peak);
	mt_quiet_int_eq(field_in(r.out, "allocations.repetitions.jsonl",
				 "peak_live_bytes"), tree_peak);
	summary = mt_test_path(r.out, "summary.jsonl");
	argv[2] = summary;
	mt_test_run(&g, argv, NULL);
	mt_quiet(g.status == 1 && strstr(g.out, "allocations is 9, 1 over"),
		 "gate of the tree's summary: %d\n%s", g.status, g.out);
	mt_test_run_release(&g);

	RUN(&r, "--top-only", "-o", r.out, "--", wl);
	mt_quiet(r.status == 0, "status %d: %s", r.status, r.se);
	mt_quiet(strstr(r.se, "run 1/1: exit 0, 2 allocations, peak ") &&
		 !strstr(r.se, "processes"), "%s", r.se);
	mt_quiet_int_eq(field_in(r.out, "allocations.repetitions.jsonl", "allocations"), 2);
	mt_quiet_int_eq(field_in(r.out, "summary.jsonl", "allocations"), 2);
	mt_test_run(&g, argv, NULL);
	mt_quiet(g.status == 0, "gate of the first process: %d\n%s", g.status, g.out);
	mt_test_run_release(&g);
	RUN(&r, "--top-only", "--oom-sweep", "--", wl);
	mt_quiet_int_eq(r.status, 64);
	free(summary);
	run_release(&r);
	free(mt);
	free(wl);
}
END_TEST

/* A failed run has no row summary and no capture (the seed's rule), but
 * its line and the table still give its figures, from its traces. */
START_TEST(test_a_failed_run_still_gets_its_figures)
{
	char *wl = mt_test_workload("wl_exit"); /* _exit(3) */
	run_t r;

	run_init(&r);
	RUN(&r, "-n", "2", "-o", r.out, "--", wl);
	mt_quiet_int_eq(r.status, 3);
	mt_quiet(strstr(r.se, "run 1/2: exit 3, 5 allocations, peak 2.7 KiB, complete, "
			"workload_failed (its row has no summary)\n") &&
		 strstr(r.se, "memtrace-run: 2 runs of wl_exit, none left a summary, "
			"2 failed runs counted from their traces; rows in ") &&
		 strstr(r.se, "  allocations               5            5            5\n"
			"  peak live           2.7 KiB      2.7 KiB      2.7 KiB\n"),
		 "%s", r.se);
	ck_assert(!in_dir(r.out, "summary.jsonl"));
	run_release(&r);
	free(wl);
}
END_TEST

/* Two runs of a real pipeline in a bash, each summed over its tree, as a
 * CI job makes them: from two directories (a base and a branch), whose
 * paths bash keeps in its environment, so the runs differ by a few
 * bytes.  diff's default tolerance and a gate of each accept them; an
 * exact diff does not. */
START_TEST(test_two_runs_of_a_pipeline_pass_diff_and_gate)
{
	static const char pipeline[] = "cat /etc/passwd /etc/group | grep -v nologin | wc -l";
	char *bash = "/bin/bash", *mt = build_file("memtrace");
	char *dir = mt_test_scratch(), *a = mt_test_path(dir, "base");
	char *b = mt_test_path(dir, "new-from-the-branch-feature-with-a-long-name");
	char *sa, *sb;
	mt_test_run_t g;
	run_t r;

	if (access(bash, X_OK))
		MT_TEST_SKIP("no /bin/bash to run a pipeline in");
	run_init(&r);
	RUN(&r, "-o", a, "--", bash, "-c", pipeline);
	mt_quiet(r.status == 0, "status %d: %s", r.status, r.se);
	RUN(&r, "-o", b, "--", bash, "-c", pipeline);
	mt_quiet(r.status == 0, "status %d: %s", r.status, r.se);
	sa = mt_test_path(a, "summary.jsonl");
	sb = mt_test_path(b, "summary.jsonl");
	{
		char *d[] = { mt, "diff", sa, sb, NULL };
		char *exact[] = { mt, "diff", sa, sb, "--threshold", "0",
				  "--min-growth", "0", NULL };
		char *gate[] = { mt, "gate", sb, "--require-complete", NULL };

		mt_test_run(&g, exact, NULL);
		mt_quiet(g.status == 1, "the runs do not differ: %d\n%s", g.status, g.out);
		mt_test_run_release(&g);
		mt_test_run(&g, d, NULL);
		mt_quiet(g.status == 0, "diff: %d\n%s", g.status, g.out);
		mt_test_run_release(&g);
		mt_test_run(&g, gate, NULL);
		mt_quiet(g.status == 0, "gate: %d\n%s", g.status, g.out);
		mt_test_run_release(&g);
	}
	free(sa);
	free(sb);
	free(a);
	free(b);
	run_release(&r);
	free(mt);
}
END_TEST

/* Wait (at most 20 s) until path holds text. */
static void wait_for_text(const char *path, const char *text)
{
	for (int i = 0; i < 2000; i++) {
		char *s = mt_test_read(path, NULL);
		int found = s && strstr(s, text);

		free(s);
		if (found)
			return;
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
	ck_abort_msg("%s never held '%s'", path, text);
}

/* The pid in the trace.start line of a zstd trace. */
static pid_t trace_pid(const char *trace)
{
	char *s = NULL, *nl = NULL;
	json_object *start;
	pid_t pid;

	/* The collector writes the first line within a second (at most
	 * 20 s here), flushed as a whole frame. */
	for (int i = 0; i < 2000 && !nl; i++) {
		free(s);
		s = trace_text(trace);
		nl = s ? strchr(s, '\n') : NULL;
		if (!nl)
			nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
	mt_quiet(s != NULL, "%s is missing", trace);
	mt_quiet_ptr_nonnull(nl);
	*nl = '\0';
	start = json_tokener_parse(s);
	mt_quiet_ptr_nonnull(start);
	ck_assert_str_eq(str(start, "kind"), "trace.start");
	pid = (pid_t)num(start, "pid");
	json_object_put(start);
	free(s);
	return pid;
}

START_TEST(test_killed_workload_row_is_summary_written_with_missing_stop_event)
{
	char *wl = mt_test_workload("wl_kill"), *script = script_path(), *trace;
	run_t r;
	rows_t rows, caps;
	pid_t pid;

	run_init(&r);
	trace = mt_test_path(r.out, "allocations.1.jsonl.zst");
	{
		char *argv[] = { script, "-o", r.out, "--", wl, NULL };

		pid = start(&r, NULL, NULL, argv);
	}
	/* After "ready" the workload sleeps: kill it, and it alone. */
	wait_for_text(r.stdout_path, "ready\n");
	mt_quiet_int_eq(kill(trace_pid(trace), SIGKILL), 0);
	finish(&r, pid);
	mt_quiet(r.status == 128 + SIGKILL, "status %d: %s", r.status, r.se);
	rows_in(&rows, r.out, "allocations.repetitions.jsonl");
	mt_quiet_int_eq(rows.n, 1);
	ck_assert_str_eq(str(rows.row[0], "state"), "summary_written");
	mt_quiet_int_eq(num(rows.row[0], "exit_code"), 0);
	ck_assert_str_eq(str(get(rows.row[0], "summary"), "status"), "missing_stop_event");
	mt_quiet_int_eq(num(get(rows.row[0], "summary"), "allocations"), 100);
	rows_in(&caps, r.out, "captures.jsonl");
	mt_quiet_int_eq(caps.n, 1);
	ck_assert_str_eq(str(caps.row[0], "state"), "summary_written");
	ck_assert_str_eq(str(caps.row[0], "caveat_kind"), "missing_stop_event");
	ck_assert(in_dir(r.out, "summary.jsonl"));
	mt_quiet(strstr(r.se, "run 1/1: killed by SIGKILL, 100 allocations, peak 75.9 KiB, "
		 "missing_stop_event\n"), "%s", r.se);
	/* bash's own "Killed" report is not written on the workload's stderr. */
	mt_quiet(!strstr(r.se, "Killed"), "%s", r.se);
	rows_release(&caps);
	rows_release(&rows);
	run_release(&r);
	free(trace);
	free(script);
	free(wl);
}
END_TEST

/*
 * A shell that runs ls and then dies of SIGKILL: allocations.1.jsonl.zst is
 * bash's own trace, cut off by the kill, never ls's (ls once emptied it
 * through the name bash handed it); the row is that trace's, and the
 * run's line, which sums the tree, names it as the trace cut off.
 */
START_TEST(test_a_tree_whose_top_process_dies_names_the_trace_cut_off)
{
	char *trace, *start;
	run_t r;
	rows_t rows;

	if (access("/bin/bash", X_OK) != 0) {
		MT_TEST_SKIP("needs bash (/bin/bash: %s)", strerror(errno));
		return;
	}
	run_init(&r);
	RUN(&r, "-o", r.out, "--", "/bin/bash", "-c", "ls / >/dev/null; kill -9 $$");
	mt_quiet(r.status == 128 + SIGKILL, "status %d: %s", r.status, r.se);
	trace = mt_test_path(r.out, "allocations.1.jsonl.zst");
	start = trace_text(trace);
	mt_quiet(start && strstr(start, "\"exe\":\"/usr/bin/bash\"") &&
		 strstr(start, "\"exe\":\"/usr/bin/bash\"") < strchr(start, '\n'),
		 "allocations.1.jsonl.zst is not bash's: %.200s", start ? start : "(none)");
	rows_in(&rows, r.out, "allocations.repetitions.jsonl");
	mt_quiet_int_eq(rows.n, 1);
	ck_assert_str_eq(str(get(rows.row[0], "summary"), "status"), "missing_stop_event");
	/* bash's forked child, which execs, and ls, the image it execs:
	 * the tree is summed, and the trace that is not complete named. */
	mt_quiet(strstr(r.se, "missing_stop_event in allocations.1.jsonl.zst "
		 "(allocations.1.jsonl.zst and 2 child traces)\n") &&
		 strstr(r.se, "run 1/1: killed by SIGKILL, 3 processes: "),
		 "%s", r.se);
	rows_release(&rows);
	free(start);
	free(trace);
	run_release(&r);
}
END_TEST

/* --verbose: a line per process of the run's tree, under the run's
 * line; a run without children prints none. */
START_TEST(test_verbose_prints_a_line_per_process_of_the_tree)
{
	char *wl = mt_test_workload("wl_fork"), *demo = mt_test_workload("wl_demo");
	run_t r;

	run_init(&r);
	RUN(&r, "-v", "-o", r.out, "--", wl);
	mt_quiet(r.status == 0, "status %d: %s", r.status, r.se);
	mt_quiet(strstr(r.se, ": 2 allocations, peak 4.3 KiB, complete  "
			"allocations.1.jsonl.zst\n"),
		 "%s", r.se);
	mt_quiet_int_eq(count_lines_with(r.se, ": 3 allocations, peak 9.8 KiB, complete  "), 1);
	mt_quiet_int_eq(count_lines_with(r.se, ": 4 allocations, peak 17.4 KiB, complete  "), 1);
	mt_quiet_int_eq(count_lines_with(r.se, ": 0 allocations, peak 0 B, complete  "), 1);
	RUN(&r, "--verbose", "-o", r.out, "--", demo);
	mt_quiet(r.status == 0, "status %d: %s", r.status, r.se);
	mt_quiet(!strstr(r.se, "  allocations.1."), "%s", r.se);
	run_release(&r);
	free(demo);
	free(wl);
}
END_TEST

START_TEST(test_interrupt_records_the_run_it_stopped_and_ends)
{
	char *wl = mt_test_workload("wl_kill"), *script = script_path();
	run_t r;
	rows_t rows;
	pid_t pid;

	run_init(&r);
	{
		char *argv[] = { script, "-n", "3", "-o", r.out, "--", wl, NULL };

		pid = start(&r, NULL, NULL, argv);
	}
	/* Ctrl-C: SIGINT to the whole process group, script and workload. */
	wait_for_text(r.stdout_path, "ready\n");
	mt_quiet_int_eq(kill(-pid, SIGINT), 0);
	finish(&r, pid);
	mt_quiet(r.status == 128 + SIGINT, "status %d: %s", r.status, r.se);
	rows_in(&rows, r.out, "allocations.repetitions.jsonl");
	mt_quiet_int_eq(rows.n, 1);
	mt_quiet_int_eq(num(rows.row[0], "execution_index"), 1);
	ck_assert_str_eq(str(rows.row[0], "state"), "summary_written");
	ck_assert(!in_dir(r.out, "allocations.2.jsonl.zst"));
	mt_quiet(strstr(r.se, "memtrace-run: interrupted after run 1 of 3\n"), "%s", r.se);
	rows_release(&rows);
	run_release(&r);
	free(script);
	free(wl);
}
END_TEST

START_TEST(test_strict_turns_a_caveat_into_a_failure)
{
	char *wl = mt_test_workload("wl_run_noexit"); /* _exit(0): no trace.stop */
	run_t r;
	rows_t rows;

	run_init(&r);
	RUN(&r, "-o", r.out, "--", wl);
	mt_quiet(r.status == 0, "status %d: %s", r.status, r.se);
	mt_quiet(strstr(r.se, "run 1/1: exit 0, 2 allocations, peak 642 B, missing_stop_event\n"),
		 "%s", r.se);

	RUN(&r, "--strict", "-o", r.out, "--", wl);
	mt_quiet(r.status == 1, "status %d: %s", r.status, r.se);
	mt_quiet(strstr(r.se, "memtrace-run: --strict: run 1's trace is missing_stop_event\n"),
		 "%s", r.se);
	/* The rows are written all the same. */
	rows_in(&rows, r.out, "allocations.repetitions.jsonl");
	mt_quiet_int_eq(rows.n, 1);
	ck_assert_str_eq(str(rows.row[0], "state"), "summary_written");
	ck_assert_str_eq(str(get(rows.row[0], "summary"), "status"), "missing_stop_event");
	rows_release(&rows);

	/* A workload's own failure still comes first. */
	free(wl);
	wl = mt_test_workload("wl_exit");
	RUN(&r, "--strict", "-o", r.out, "--", wl);
	mt_quiet_int_eq(r.status, 3);

	/* And a complete trace passes --strict. */
	free(wl);
	wl = mt_test_workload("wl_run_steady");
	RUN(&r, "--strict", "-q", "-o", r.out, "--", wl);
	mt_quiet_int_eq(r.status, 0);
	run_release(&r);
	free(wl);
}
END_TEST

START_TEST(test_only_the_workload_is_traced)
{
	char *wl = mt_test_workload("wl_run_steady"), *cwd;
	run_t r;

	run_init(&r);
	cwd = mt_test_path(r.dir, "cwd");
	mt_quiet_int_eq(mkdir(cwd, 0700), 0);
	/* A traced helper would write memtrace.PID.jsonl.zst (the preload's
	 * default name) in the working directory, or more files in DIR. */
	run_in(&r, cwd, NULL, "-n", "2", "-o", "out", "--", wl, (char *)NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet_int_eq(count_entries(cwd, "", ""), 1);
	{
		char *out = mt_test_path(cwd, "out");

		mt_quiet_int_eq(count_entries(out, "", ""), 5);
		ck_assert(in_dir(out, "allocations.1.jsonl.zst"));
		ck_assert(in_dir(out, "allocations.2.jsonl.zst"));
		ck_assert(in_dir(out, "allocations.repetitions.jsonl"));
		ck_assert(in_dir(out, "summary.jsonl"));
		ck_assert(in_dir(out, "captures.jsonl"));
		free(out);
	}
	run_release(&r);
	free(cwd);
	free(wl);
}
END_TEST

START_TEST(test_stack_depth_reaches_the_workload)
{
	char *wl = mt_test_workload("wl_run_steady"), *trace, *text;
	run_t r;

	run_init(&r);
	RUN(&r, "--stack-depth", "0", "-o", r.out, "--", wl);
	mt_quiet_int_eq(r.status, 0);
	trace = mt_test_path(r.out, "allocations.1.jsonl.zst");
	text = trace_text(trace);
	mt_quiet_ptr_nonnull(text);
	mt_quiet(strstr(text, "\"stack_depth\":0"), "trace.start: %.300s", text);
	mt_quiet_ptr_null(strstr(text, "\"kind\":\"stack\""));
	free(text);

	RUN(&r, "--stack-depth=2", "-o", r.out, "--", wl);
	mt_quiet_int_eq(r.status, 0);
	text = trace_text(trace);
	mt_quiet_ptr_nonnull(text);
	mt_quiet(strstr(text, "\"stack_depth\":2"), "trace.start: %.300s", text);
	free(text);
	run_release(&r);
	free(trace);
	free(wl);
}
END_TEST

/* --sample B reaches the workload as MEMTRACE_SAMPLE: its trace says
 * its mean, and so does its summary row. */
START_TEST(test_sample_reaches_the_workload)
{
	char *wl = mt_test_workload("wl_run_steady"), *trace, *text, *sum, *sum_text;
	run_t r;

	run_init(&r);
	RUN(&r, "--sample", "64K", "-o", r.out, "--", wl);
	mt_quiet_int_eq(r.status, 0);
	trace = mt_test_path(r.out, "allocations.1.jsonl.zst");
	text = trace_text(trace);
	mt_quiet_ptr_nonnull(text);
	mt_quiet(strstr(text, "\"sample_bytes\":65536"), "trace.start: %.300s", text);
	sum = mt_test_path(r.out, "summary.jsonl");
	sum_text = mt_test_read(sum, NULL);
	mt_quiet(sum_text && strstr(sum_text, "],\"sample_bytes\":65536,\"allocations_stderr\":"),
		 "summary: %s", sum_text ? sum_text : "(none)");
	free(sum_text);
	free(sum);
	free(text);
	RUN(&r, "--sample", "0", "-o", r.out, "--", wl);
	assert_one_error_line(&r, 64, "--sample needs a number of bytes");
	RUN(&r, "--sample=4T", "-o", r.out, "--", wl);
	assert_one_error_line(&r, 64, "--sample needs a number of bytes");
	RUN(&r, "--oom-sweep", "--sample", "4K", "-o", r.out, "--", wl);
	assert_one_error_line(&r, 64, "--sample does not apply to --oom-sweep");
	run_release(&r);
	free(trace);
	free(wl);
}
END_TEST

START_TEST(test_no_command_is_a_usage_error)
{
	run_t r;

	run_init(&r);
	RUN(&r, "-n", "2", "-o", r.out);
	assert_one_error_line(&r, 64, "no command given");
	RUN(&r, "-o", r.out, "--");
	assert_one_error_line(&r, 64, "no command given");
	ck_assert(!mt_test_exists(r.out));
	run_release(&r);
}
END_TEST

START_TEST(test_fewer_than_one_run_is_a_usage_error)
{
	char *wl = mt_test_workload("wl_run_steady");
	run_t r;

	run_init(&r);
	RUN(&r, "-n", "0", "-o", r.out, "--", wl);
	assert_one_error_line(&r, 64, "at least 1 run");
	RUN(&r, "-n", "-1", "-o", r.out, "--", wl);
	assert_one_error_line(&r, 64, "-n");
	RUN(&r, "-n", "three", "-o", r.out, "--", wl);
	assert_one_error_line(&r, 64, "'three'");
	/* Nothing ran and nothing was written. */
	ck_assert(!mt_test_exists(r.out));
	run_release(&r);
	free(wl);
}
END_TEST

START_TEST(test_bad_options_are_usage_errors)
{
	char *wl = mt_test_workload("wl_run_steady");
	run_t r;

	run_init(&r);
	RUN(&r, "--frobnicate", "-o", r.out, "--", wl);
	assert_one_error_line(&r, 64, "unknown option '--frobnicate'");
	RUN(&r, "--stack-depth", "257", "-o", r.out, "--", wl);
	assert_one_error_line(&r, 64, "--stack-depth");
	RUN(&r, "-o", r.out, "-n");
	assert_one_error_line(&r, 64, "needs a value");
	RUN(&r, "-o", "", "--", wl);
	assert_one_error_line(&r, 64, "-o");
	ck_assert(!mt_test_exists(r.out));
	run_release(&r);
	free(wl);
}
END_TEST

START_TEST(test_unwritable_output_directory_fails_with_73)
{
	char *wl = mt_test_workload("wl_run_steady"), *file, *under;
	run_t r;

	run_init(&r);
	/* A regular file in the way: no one can create a directory there,
	 * not even root. */
	file = mt_test_path(r.dir, "file");
	mt_test_write(file, "x", 1);
	under = mt_test_path(file, "out");
	RUN(&r, "-o", under, "--", wl);
	assert_one_error_line(&r, 73, "cannot create the output directory");
	RUN(&r, "-o", file, "--", wl);
	assert_one_error_line(&r, 73, "not a directory");
	/* The workload never ran: its line on stderr is not there. */
	mt_quiet_ptr_null(strstr(r.se, "wl_run_steady"));
	run_release(&r);
	free(file);
	free(under);
	free(wl);
}
END_TEST

START_TEST(test_command_that_cannot_be_executed_fails_before_any_run)
{
	char *plain;
	run_t r;

	run_init(&r);
	plain = mt_test_path(r.dir, "plain");
	mt_test_write(plain, "#!/bin/sh\n", 10);
	mt_quiet_int_eq(chmod(plain, 0644), 0);
	RUN(&r, "-o", r.out, "--", "memtrace-no-such-command-anywhere");
	assert_one_error_line(&r, 127, "command not found");
	RUN(&r, "-o", r.out, "--", "/nonexistent/memtrace-workload");
	assert_one_error_line(&r, 127, "no such file");
	RUN(&r, "-o", r.out, "--", plain);
	assert_one_error_line(&r, 126, "not executable");
	RUN(&r, "-o", r.out, "--", r.dir);
	assert_one_error_line(&r, 126, "is a directory");
	/* A bash builtin or one of the script's own functions is no program
	 * to trace. */
	RUN(&r, "-o", r.out, "--", "shopt");
	assert_one_error_line(&r, 127, "command not found");
	RUN(&r, "-o", r.out, "--", "run_workload");
	assert_one_error_line(&r, 127, "command not found");
	ck_assert(!mt_test_exists(r.out));
	run_release(&r);
	free(plain);
}
END_TEST

START_TEST(test_percent_in_the_output_directory_reaches_the_preload_escaped)
{
	char *wl = mt_test_workload("wl_fork"), *pct, *bad;
	run_t r;

	run_init(&r);
	/* '%' is escaped for MEMTRACE_OUTPUT: the traces land in DIR itself,
	 * the parent's and one per image of its children. */
	pct = mt_test_path(r.dir, "out%d");
	RUN(&r, "-o", pct, "--", wl);
	mt_quiet(r.status == 0, "status %d: %s", r.status, r.se);
	ck_assert(in_dir(pct, "allocations.1.jsonl.zst"));
	mt_quiet_int_eq(count_entries(pct, "allocations.1.", ".jsonl.zst"), 4);
	/* A "%p" in the path would make the preload give every process the
	 * parent's file: refused before anything is made. */
	bad = mt_test_path(r.dir, "out%p");
	RUN(&r, "-o", bad, "--", wl);
	assert_one_error_line(&r, 73, "'%p'");
	ck_assert(!mt_test_exists(bad));
	run_release(&r);
	free(pct);
	free(bad);
	free(wl);
}
END_TEST

static void copy_file(const char *from, const char *to, mode_t mode)
{
	size_t len;
	char *data = mt_test_read(from, &len);

	mt_quiet(data != NULL, "cannot read %s", from);
	mt_test_write(to, data, len);
	mt_quiet_int_eq(chmod(to, mode), 0);
	free(data);
}

static char *make_dir(const char *parent, const char *name)
{
	char *p = mt_test_path(parent, name);

	mt_quiet_int_eq(mkdir(p, 0700), 0);
	return p;
}

START_TEST(test_tools_are_found_beside_the_script_installed_and_in_the_source_tree)
{
	char *wl = mt_test_workload("wl_run_steady"), *script = script_path();
	char *mt = build_file("memtrace"), *so = build_file("libmtpreload.so");
	char *prefix, *bin, *lib, *src, *scripts, *build, *p, *link;
	run_t r;
	rows_t rows;

	unsetenv("MEMTRACE_ANALYZER");
	unsetenv("MEMTRACE_PRELOAD");
	run_init(&r);

	/* Installed: PREFIX/bin/memtrace-run, PREFIX/bin/memtrace,
	 * PREFIX/lib/libmtpreload.so, reached through a symlink. */
	prefix = make_dir(r.dir, "prefix");
	bin = make_dir(prefix, "bin");
	lib = make_dir(prefix, "lib");
	p = mt_test_path(bin, "memtrace-run");
	copy_file(script, p, 0755);
	link = mt_test_path(r.dir, "memtrace-run-link");
	mt_quiet_int_eq(symlink(p, link), 0);
	free(p);
	p = mt_test_path(bin, "memtrace");
	copy_file(mt, p, 0755);
	free(p);
	p = mt_test_path(lib, "libmtpreload.so");
	copy_file(so, p, 0644);
	free(p);
	{
		char *argv[] = { link, "-o", r.out, "--", wl, NULL };

		finish(&r, start(&r, NULL, NULL, argv));
	}
	mt_quiet(r.status == 0, "status %d: %s", r.status, r.se);
	rows_in(&rows, r.out, "allocations.repetitions.jsonl");
	ck_assert_str_eq(str(rows.row[0], "state"), "summary_written");
	mt_quiet_int_eq(num(get(rows.row[0], "summary"), "allocations"), 10);
	rows_release(&rows);

	/* Source tree: scripts/memtrace-run with build/ beside scripts/. */
	src = make_dir(r.dir, "src");
	scripts = make_dir(src, "scripts");
	build = make_dir(src, "build");
	p = mt_test_path(scripts, "memtrace-run");
	copy_file(script, p, 0755);
	free(script);
	script = p;
	p = mt_test_path(build, "memtrace");
	copy_file(mt, p, 0755);
	free(p);
	p = mt_test_path(build, "libmtpreload.so");
	copy_file(so, p, 0644);
	{
		char *argv[] = { script, "-o", r.out, "--", wl, NULL };

		finish(&r, start(&r, NULL, NULL, argv));
	}
	mt_quiet(r.status == 0, "status %d: %s", r.status, r.se);
	rows_in(&rows, r.out, "allocations.repetitions.jsonl");
	ck_assert_str_eq(str(rows.row[0], "state"), "summary_written");
	rows_release(&rows);

	/* Without them: one line, status 69, nothing run. */
	mt_quiet_int_eq(unlink(p), 0);
	{
		char *argv[] = { script, "-o", r.out, "--", wl, NULL };

		finish(&r, start(&r, NULL, NULL, argv));
	}
	assert_one_error_line(&r, 69, "cannot find the preload");
	run_release(&r);
	free(p);
	free(link);
	free(prefix);
	free(bin);
	free(lib);
	free(src);
	free(scripts);
	free(build);
	free(script);
	free(mt);
	free(so);
	free(wl);
}
END_TEST

Suite *mt_suite_run(void)
{
	Suite *s = suite_create("run");
	TCase *tc = tcase_create("memtrace-run");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, use_build_tools, NULL);
	tcase_add_test(tc, test_three_runs_write_three_rows_indexed_from_one_with_matching_counts);
	tcase_add_test(tc, test_run_one_is_the_capture_and_its_row_is_appended);
	tcase_add_test(tc, test_failing_workload_gives_workload_failed_rows_and_its_exit_status);
	tcase_add_test(tc, test_exit_status_is_the_first_non_zero_one);
	tcase_add_test(tc, test_runs_whose_counts_differ_are_warned_about);
	tcase_add_test(tc, test_progress_lines_and_table_read_as_documented);
	tcase_add_test(tc, test_workload_stdin_stdout_and_stderr_are_its_own);
	tcase_add_test(tc, test_quiet_prints_nothing_of_its_own);
	tcase_add_test(tc, test_forking_workload_leaves_one_trace_per_process);
	tcase_add_test(tc, test_rows_and_gates_cover_the_whole_tree_unless_top_only);
	tcase_add_test(tc, test_a_failed_run_still_gets_its_figures);
	tcase_add_test(tc, test_two_runs_of_a_pipeline_pass_diff_and_gate);
	tcase_add_test(tc, test_killed_workload_row_is_summary_written_with_missing_stop_event);
	tcase_add_test(tc, test_a_tree_whose_top_process_dies_names_the_trace_cut_off);
	tcase_add_test(tc, test_verbose_prints_a_line_per_process_of_the_tree);
	tcase_add_test(tc, test_interrupt_records_the_run_it_stopped_and_ends);
	tcase_add_test(tc, test_strict_turns_a_caveat_into_a_failure);
	tcase_add_test(tc, test_only_the_workload_is_traced);
	tcase_add_test(tc, test_stack_depth_reaches_the_workload);
	tcase_add_test(tc, test_sample_reaches_the_workload);
	tcase_add_test(tc, test_no_command_is_a_usage_error);
	tcase_add_test(tc, test_fewer_than_one_run_is_a_usage_error);
	tcase_add_test(tc, test_bad_options_are_usage_errors);
	tcase_add_test(tc, test_unwritable_output_directory_fails_with_73);
	tcase_add_test(tc, test_command_that_cannot_be_executed_fails_before_any_run);
	tcase_add_test(tc, test_percent_in_the_output_directory_reaches_the_preload_escaped);
	tcase_add_test(tc, test_tools_are_found_beside_the_script_installed_and_in_the_source_tree);
	suite_add_tcase(s, tc);
	return s;
}
