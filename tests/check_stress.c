/*
 * check_stress: the preload under threads and fork at once.
 *
 * tests/workloads/wl_stress.c runs 8 threads that allocate, reallocate and
 * free at random while its main thread forks 8 children that allocate.
 * Twenty times over, each run under its own timeout (a deadlock fails the
 * run instead of hanging the suite), every process's trace must be
 * complete with seq contiguous, and every event the workload made must be
 * in it exactly: the workers' allocs, reallocs and frees, counted by the
 * workload itself, and each child's 40 allocations of 7777 bytes and 20
 * frees, with nothing of the workers in any child's trace.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mt_test.h"

/* The runs repeat to catch the preload's races.  make sanitize builds the
 * tests and the analyzer with the sanitizers, never the preload (it runs
 * in the programs), so there five runs give the sanitized analyzer its
 * share and make check's twenty catch the races. */
#define RUNS (MT_TEST_SANITIZED ? 5 : 20)
#define RUN_TIMEOUT 30 /* seconds; a run takes about 0.1 s */
#define FORKS 8
#define CHILD_ALLOCS 40

/* Run wl_stress under the preload, writing dir/t.jsonl (and the children's
 * dir/t.PID.jsonl) and its stdout to dir/out.  Returns its status, 128 +
 * N for a death by signal N (SIGALRM: the run timed out). */
static int run_stress(const char *dir)
{
	char prog[4096], preload[4096], output[4096], out[4096];
	pid_t pid;
	int status;

	snprintf(prog, sizeof(prog), "%s/workloads/wl_stress", mt_test_build_dir());
	snprintf(preload, sizeof(preload), "%s/libmtpreload.so", mt_test_build_dir());
	snprintf(output, sizeof(output), "%s/t.jsonl", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (in < 0 || fd < 0)
			_exit(126);
		dup2(in, 0);
		dup2(fd, 1);
		setenv("LD_PRELOAD", preload, 1);
		setenv("MEMTRACE_OUTPUT", output, 1);
		alarm(RUN_TIMEOUT);
		execl(prog, prog, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		mt_quiet_int_eq(errno, EINTR);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ---- reading a trace's events, without json-c: it is fast enough for
 * RUNS runs of 25,000 events, and the analyzer judges the JSON itself ---- */

static int str_field(const char *line, const char *key, char *out, size_t cap)
{
	const char *p = strstr(line, key), *end;

	if (!p)
		return 0;
	p += strlen(key);
	end = strchr(p, '"');
	if (!end || (size_t)(end - p) >= cap)
		return 0;
	memcpy(out, p, (size_t)(end - p));
	out[end - p] = '\0';
	return 1;
}

static int num_field(const char *line, const char *key, unsigned long long *v)
{
	const char *p = strstr(line, key);

	if (!p)
		return 0;
	p += strlen(key);
	/* A number, or a pointer: a "0x" hex string. */
	*v = *p == '"' ? strtoull(p + 1, NULL, 16) : strtoull(p, NULL, 10);
	return 1;
}

/* The live blocks of one marked kind: a small set of pointers. */
typedef struct {
	unsigned long long ptr[4096];
	int n;
} ptrset_t;

static int set_take(ptrset_t *s, unsigned long long p)
{
	for (int i = 0; i < s->n; i++)
		if (s->ptr[i] == p) {
			s->ptr[i] = s->ptr[--s->n];
			return 1;
		}
	return 0;
}

static void set_add(ptrset_t *s, unsigned long long p)
{
	ck_assert_int_lt(s->n, 4096);
	s->ptr[s->n++] = p;
}

typedef struct {
	unsigned long lines;
	unsigned long allocs;   /* alloc of the marked sizes */
	unsigned long reallocs; /* resize or remap to the marked sizes */
	unsigned long frees;    /* free of a marked block */
	unsigned long foreign;  /* alloc of the other party's sizes */
	int live;               /* marked blocks never freed */
} tally_t;

/* Tally the events on blocks whose alloc size is in [lo, hi] (their
 * reallocs to [rlo, rhi]); foreign counts allocs in [flo, fhi].  Fails the
 * test on a seq that is not the previous one plus one. */
static void tally(const char *trace, unsigned long long lo, unsigned long long hi,
		  unsigned long long rlo, unsigned long long rhi,
		  unsigned long long flo, unsigned long long fhi, tally_t *t)
{
	size_t len;
	char *data = mt_test_read(trace, &len), *line, *save = NULL;
	static ptrset_t live;
	unsigned long long seq, size, ptr, new_ptr;
	char kind[32];

	mt_quiet(data != NULL, "no trace %s", trace);
	memset(t, 0, sizeof(*t));
	live.n = 0;
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		t->lines++;
		mt_quiet(num_field(line, "\"seq\":", &seq) && seq == t->lines,
			 "%s: line %lu has seq %llu", trace, t->lines, seq);
		if (!str_field(line, "\"kind\":\"", kind, sizeof(kind)))
			continue;
		if (!strcmp(kind, "alloc")) {
			ck_assert(num_field(line, "\"size\":", &size));
			ck_assert(num_field(line, "\"ptr\":", &ptr));
			/* An address handed out again is a new block. */
			set_take(&live, ptr);
			if (size >= lo && size <= hi) {
				t->allocs++;
				set_add(&live, ptr);
			} else if (size >= flo && size <= fhi) {
				t->foreign++;
			}
		} else if (!strcmp(kind, "resize") || !strcmp(kind, "remap")) {
			ck_assert(num_field(line, "\"size\":", &size));
			ck_assert(num_field(line, "\"ptr\":", &ptr));
			if (!set_take(&live, ptr))
				continue;
			mt_quiet(size >= rlo && size <= rhi,
				 "%s: a marked block reallocated to %llu", trace, size);
			t->reallocs++;
			if (!strcmp(kind, "remap"))
				ck_assert(num_field(line, "\"new_ptr\":", &new_ptr));
			else
				new_ptr = ptr;
			set_add(&live, new_ptr);
		} else if (!strcmp(kind, "free")) {
			ck_assert(num_field(line, "\"ptr\":", &ptr));
			if (set_take(&live, ptr))
				t->frees++;
		}
	}
	t->live = live.n;
	free(data);
}

/* memtrace summary TRACE --top 0: the trace must be complete, with no
 * unknown free and no overlapping alloc (a lost event shows as one). */
static void assert_complete(const char *trace)
{
	char *mt = mt_test_memtrace();
	char *argv[] = { mt, "summary", (char *)trace, "--top", "0", NULL };
	mt_test_run_t r;
	json_object *o, *v;

	mt_test_run(&r, argv, NULL);
	mt_quiet(r.status == 0, "summary of %s exits %d: %s", trace, r.status, r.err);
	o = json_tokener_parse(r.out);
	mt_quiet_ptr_nonnull(o);
	ck_assert(json_object_object_get_ex(o, "status", &v));
	mt_quiet(!strcmp(json_object_get_string(v), "complete"),
		 "%s is %s: %s", trace, json_object_get_string(v), r.out);
	ck_assert(json_object_object_get_ex(o, "unknown_frees", &v));
	mt_quiet_int_eq(json_object_get_int64(v), 0);
	ck_assert(json_object_object_get_ex(o, "overlapping_allocs", &v));
	mt_quiet_int_eq(json_object_get_int64(v), 0);
	json_object_put(o);
	mt_test_run_release(&r);
	free(mt);
}

static void check_one_run(const char *dir, int run)
{
	unsigned long allocs, reallocs, frees;
	int forks, children = 0, status;
	char *out_path = mt_test_path(dir, "out"), *out;
	char *parent = mt_test_path(dir, "t.jsonl");
	struct dirent *e;
	tally_t t;
	DIR *d;

	status = run_stress(dir);
	mt_quiet(status == 0, "run %d: wl_stress exits %d%s", run, status,
		 status == 128 + SIGALRM ? " (timed out: a deadlock?)" : "");
	out = mt_test_read(out_path, NULL);
	mt_quiet_ptr_nonnull(out);
	mt_quiet(sscanf(out, "stress: allocs=%lu reallocs=%lu frees=%lu forks=%d",
			     &allocs, &reallocs, &frees, &forks) == 4,
		      "run %d: output '%s'", run, out);
	mt_quiet_int_eq(forks, FORKS);

	assert_complete(parent);
	tally(parent, 1000, 1999, 2000, 2999, 7777, 7777, &t);
	mt_quiet_uint_eq(t.allocs, allocs);
	mt_quiet_uint_eq(t.reallocs, reallocs);
	mt_quiet_uint_eq(t.frees, frees);
	mt_quiet_int_eq(t.live, 0);
	mt_quiet_uint_eq(t.foreign, 0);

	d = opendir(dir);
	mt_quiet_ptr_nonnull(d);
	while ((e = readdir(d))) {
		char *child;

		if (strncmp(e->d_name, "t.", 2) || !strcmp(e->d_name, "t.jsonl"))
			continue;
		children++;
		child = mt_test_path(dir, e->d_name);
		assert_complete(child);
		tally(child, 7777, 7777, 0, 0, 1000, 2999, &t);
		mt_quiet(t.allocs == CHILD_ALLOCS && t.frees == CHILD_ALLOCS / 2 &&
				      t.reallocs == 0 && t.foreign == 0,
			      "run %d: %s has %lu allocs, %lu frees, %lu reallocs, "
			      "%lu of the workers'", run, e->d_name, t.allocs, t.frees,
			      t.reallocs, t.foreign);
		free(child);
	}
	closedir(d);
	mt_quiet_int_eq(children, FORKS);
	free(out);
	free(out_path);
	free(parent);
}

START_TEST(test_threads_and_forks_again_and_again_every_trace_complete_and_exact)
{
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int run = 1; run <= RUNS; run++) {
		char *dir = mt_test_scratch();

		check_one_run(dir, run);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr, "stress: %d runs of wl_stress in %.1f s\n", RUNS,
		(double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
}
END_TEST

Suite *mt_suite_stress(void)
{
	Suite *s = suite_create("stress");
	TCase *tc = tcase_create("threads_and_fork");

	/* The runs take a few seconds; the analyzer is slower under ASan. */
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_threads_and_forks_again_and_again_every_trace_complete_and_exact);
	suite_add_tcase(s, tc);
	return s;
}
