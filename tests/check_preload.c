/*
 * check_preload: libmtpreload.so on real programs.  Each test runs a small
 * workload from tests/workloads/ under LD_PRELOAD, analyzes its trace with
 * build/memtrace, and holds the counts the workload knows, the verdict,
 * and the program's own output and exit status to what they must be.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <pwd.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../preload/mt_elf.h"
#include "../preload/mt_symbol.h"
#include "mt_test.h"
#include "mt_test_trace.h"

static char *preload_env(void)
{
	static char env[4096];

	snprintf(env, sizeof(env), "LD_PRELOAD=%s/libmtpreload.so",
		 mt_test_build_dir());
	return env;
}

/* Run a workload (under timeout) with the preload and an output path;
 * extra is one more "NAME=value" or NULL. */
static void run_traced(mt_test_run_t *r, const char *name, const char *trace,
		       const char *extra, const char *arg)
{
	char *prog = mt_test_workload(name);
	char *argv[] = { prog, (char *)arg, NULL };

	mt_test_run_traced(r, argv, trace, extra);
	free(prog);
}

static void run_bare(mt_test_run_t *r, const char *name, const char *arg)
{
	char *prog = mt_test_workload(name);
	char *argv[] = { prog, (char *)arg, NULL };

	mt_test_run(r, argv, NULL);
	free(prog);
}

/* memtrace summary TRACE --top N, parsed: [0] summary, [1..] sites. */
typedef struct {
	json_object *lines[16];
	int n;
	int status;
} summary_t;

static void summarize(summary_t *s, const char *trace, int top)
{
	char *mt = mt_test_memtrace();
	char topbuf[16];
	char *argv[] = { mt, "summary", (char *)trace, "--top", topbuf, NULL };
	mt_test_run_t r;
	char *line, *save = NULL;

	snprintf(topbuf, sizeof(topbuf), "%d", top);
	mt_test_run(&r, argv, NULL);
	memset(s, 0, sizeof(*s));
	s->status = r.status;
	for (line = strtok_r(r.out, "\n", &save); line && s->n < 16;
	     line = strtok_r(NULL, "\n", &save)) {
		s->lines[s->n] = json_tokener_parse(line);
		mt_quiet(s->lines[s->n] != NULL, "bad summary line: %s", line);
		s->n++;
	}
	mt_quiet(s->n > 0, "memtrace summary %s printed nothing: %s", trace,
		 r.err);
	mt_test_run_release(&r);
	free(mt);
}

static void summary_release(summary_t *s)
{
	for (int i = 0; i < s->n; i++)
		json_object_put(s->lines[i]);
}

/* The symbol of a site line's innermost frame. */
static const char *top_symbol(json_object *site)
{
	json_object *frames, *f;

	ck_assert(json_object_object_get_ex(site, "frames", &frames));
	ck_assert_int_gt((int)json_object_array_length(frames), 0);
	f = json_object_array_get_idx(frames, 0);
	return mt_test_json_opt_str(f, "symbol");
}

/* Whether any frame of a site line has a symbol containing name. */
static int site_has_symbol(json_object *site, const char *name)
{
	json_object *frames;

	ck_assert(json_object_object_get_ex(site, "frames", &frames));
	for (size_t i = 0; i < json_object_array_length(frames); i++) {
		const char *sym = mt_test_json_opt_str(json_object_array_get_idx(frames, i), "symbol");

		if (sym && strstr(sym, name))
			return 1;
	}
	return 0;
}

/* Count a trace's lines of kind (and, when size >= 0, of that size). */
typedef struct {
	const char *kind;
	const char *fn;  /* NULL: any; "": none */
	int64_t size_lo, size_hi; /* -1: any */
} match_t;

static int count_events(const char *trace, match_t m)
{
	size_t len;
	char *data = mt_test_read(trace, &len), *line, *save = NULL;
	int n = 0;

	mt_quiet(data != NULL, "no trace %s", trace);
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_object *o = json_tokener_parse(line);
		const char *kind, *fn;

		mt_quiet(o != NULL, "trace line is not JSON: %s", line);
		kind = mt_test_json_opt_str(o, "kind");
		fn = mt_test_json_opt_str(o, "fn");
		if (kind && !strcmp(kind, m.kind) && (!m.fn || (*m.fn ? fn && !strcmp(fn, m.fn) : !fn))) {
			json_object *sz;
			int64_t size = json_object_object_get_ex(o, "size", &sz) ?
					       json_object_get_int64(sz) : -1;

			if (m.size_lo < 0 || (size >= m.size_lo && size <= m.size_hi))
				n++;
		}
		json_object_put(o);
	}
	free(data);
	return n;
}

static int count_fn(const char *trace, const char *kind, const char *fn)
{
	return count_events(trace, (match_t){ kind, fn, -1, -1 });
}

static int count_size(const char *trace, const char *kind, int64_t lo, int64_t hi)
{
	return count_events(trace, (match_t){ kind, NULL, lo, hi });
}

/* Block events whose tid is not the pid of the trace.start (a process
 * with one thread: its tid is its pid). */
static int count_tids_not_pid(const char *trace)
{
	size_t len;
	char *data = mt_test_read(trace, &len), *line, *save = NULL;
	int64_t pid = -1;
	int n = 0;

	mt_quiet(data != NULL, "no trace %s", trace);
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_object *o = json_tokener_parse(line), *v;

		mt_quiet(o != NULL, "trace line is not JSON: %s", line);
		if (json_object_object_get_ex(o, "pid", &v))
			pid = json_object_get_int64(v);
		if (json_object_object_get_ex(o, "tid", &v) && json_object_get_int64(v) != pid)
			n++;
		json_object_put(o);
	}
	free(data);
	mt_quiet(pid > 0, "no pid in %s", trace);
	return n;
}

START_TEST(test_every_entry_point_is_recorded_with_its_fn)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	mt_test_run_t r;

	run_traced(&r, "wl_entry", trace, NULL, NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet_int_eq(count_fn(trace, "alloc", "malloc"), 4);
	mt_quiet_int_eq(count_fn(trace, "alloc", "calloc"), 1);
	mt_quiet_int_eq(count_fn(trace, "alloc", "realloc"), 1);
	mt_quiet_int_eq(count_fn(trace, "alloc", "reallocarray"), 1);
	mt_quiet_int_eq(count_fn(trace, "alloc", "posix_memalign"), 1);
	mt_quiet_int_eq(count_fn(trace, "alloc", "aligned_alloc"), 1);
	mt_quiet_int_eq(count_fn(trace, "alloc", "memalign"), 1);
	mt_quiet_int_eq(count_fn(trace, "alloc", "valloc"), 1);
	mt_quiet_int_eq(count_fn(trace, "alloc", "pvalloc"), 1);
	/* A free of free() has no fn (optional there, format.md section 2), one
	 * of realloc(p, 0) says realloc. */
	mt_quiet_int_eq(count_fn(trace, "free", ""), 10);
	mt_quiet_int_eq(count_fn(trace, "free", "free"), 0);
	mt_quiet_int_eq(count_fn(trace, "free", "realloc"), 1);
	mt_quiet_int_eq(count_fn(trace, "resize", "realloc"), 1);
	mt_quiet_int_eq(count_fn(trace, "resize", "reallocarray"), 1);
	mt_quiet_int_eq(count_fn(trace, "remap", "realloc"), 1);
	mt_quiet_int_eq(count_fn(trace, "alloc.fail", "malloc"), 1);
	mt_quiet_int_eq(count_fn(trace, "alloc.fail", "reallocarray"), 1);
	/* calloc records the product, aligned calls their alignment. */
	mt_quiet_int_eq(count_events(trace, (match_t){ "alloc", "calloc", 100, 100 }), 1);
	mt_test_run_release(&r);
	free(trace);
}
END_TEST

START_TEST(test_entry_points_summary_has_exact_counts_and_leak_site)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	mt_test_run_t r;
	summary_t s;

	run_traced(&r, "wl_entry", trace, NULL, NULL);
	mt_quiet_int_eq(r.status, 0);
	summarize(&s, trace, 1);
	mt_quiet_int_eq(s.status, 0);
	ck_assert_str_eq(mt_test_json_opt_str(s.lines[0], "status"), "complete");
	mt_quiet_int_eq(mt_test_json_i64(s.lines[0], "allocations"), 12);
	mt_quiet_int_eq(mt_test_json_i64(s.lines[0], "frees"), 11);
	mt_quiet_int_eq(mt_test_json_i64(s.lines[0], "resizes"), 2);
	mt_quiet_int_eq(mt_test_json_i64(s.lines[0], "remaps"), 1);
	mt_quiet_int_eq(mt_test_json_i64(s.lines[0], "failed_allocations"), 2);
	mt_quiet_int_eq(mt_test_json_i64(s.lines[0], "unknown_frees"), 0);
	mt_quiet_int_eq(mt_test_json_i64(s.lines[0], "live_allocations"), 1);
	mt_quiet_int_eq(mt_test_json_i64(s.lines[0], "live_bytes"), 7000);
	mt_quiet_int_eq(mt_test_json_i64(s.lines[0], "threads"), 1);
	mt_quiet_int_eq(s.n, 2);
	mt_quiet_int_eq(mt_test_json_i64(s.lines[1], "live_bytes"), 7000);
	ck_assert_str_eq(top_symbol(s.lines[1]), "leak_here");
	summary_release(&s);
	mt_test_run_release(&r);
	free(trace);
}
END_TEST

START_TEST(test_program_output_and_exit_status_are_unchanged)
{
	static const char *const names[] = { "wl_entry", "wl_threads", "wl_cxx",
					     "wl_exit", "wl_abort", "wl_fork" };
	char *dir = mt_test_scratch();

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *trace = mt_test_path(dir, names[i]);
		mt_test_run_t bare, traced;

		run_bare(&bare, names[i], NULL);
		run_traced(&traced, names[i], trace, NULL, NULL);
		mt_quiet(bare.status == traced.status, "%s: exit %d bare, %d traced",
			 names[i], bare.status, traced.status);
		mt_quiet(!strcmp(bare.out, traced.out), "%s: output differs", names[i]);
		mt_quiet(!strcmp(bare.err, traced.err), "%s: stderr differs: %s",
			 names[i], traced.err);
		mt_test_run_release(&bare);
		mt_test_run_release(&traced);
		free(trace);
	}
}
END_TEST

/* The main thread's events too, before its threads start (the ring's
 * reservation then takes no lock: mt_record_take) and beside them. */
START_TEST(test_eight_threads_and_the_main_thread_before_them_keep_seq_contiguous_and_counts_exact)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	mt_test_run_t r;
	summary_t s;

	run_traced(&r, "wl_threads", trace, NULL, NULL);
	mt_quiet_int_eq(r.status, 0);
	summarize(&s, trace, 0);
	/* complete: every seq from 1 on, once, in order, and a stop. */
	ck_assert_str_eq(mt_test_json_opt_str(s.lines[0], "status"), "complete");
	ck_assert_int_ge(mt_test_json_i64(s.lines[0], "threads"), 8);
	mt_quiet_int_eq(count_size(trace, "alloc", 1000, 1031), 16000);
	mt_quiet_int_eq(count_size(trace, "alloc", 2000, 2031), 4000);
	mt_quiet_int_eq(count_size(trace, "resize", 1032, 1063) +
			count_size(trace, "remap", 1032, 1063), 16000);
	ck_assert_int_ge(mt_test_json_i64(s.lines[0], "frees"), 16000);
	mt_quiet_int_eq(mt_test_json_i64(s.lines[0], "unknown_frees"), 0);
	mt_quiet_int_eq(mt_test_json_i64(s.lines[0], "overlapping_allocs"), 0);
	summary_release(&s);
	mt_test_run_release(&r);
	free(trace);
}
END_TEST

/* The trace files in dir other than the parent's, by name. */
static int list_child_traces(const char *dir, const char *parent, char names[4][4096])
{
	char cmd[8192];
	FILE *p;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "ls '%s'", dir);
	p = popen(cmd, "r");
	mt_quiet_ptr_nonnull(p);
	while (n < 4 && fgets(names[n], 4096, p)) {
		names[n][strcspn(names[n], "\n")] = '\0';
		if (strcmp(names[n], parent))
			n++;
	}
	pclose(p);
	return n;
}

/* The frame lines of trace, each without its seq, in order; *plugin set
 * to the plugin module (libwl_dlreuse_?.so) and build id of the last
 * frame in one, and *base to its lowest ip, when there is one. */
static char *frame_lines(const char *trace, char plugin[64], char build_id[128], uint64_t *base)
{
	char *text = mt_test_read(trace, NULL), *line, *save = NULL, *out;
	size_t len = 0;

	mt_quiet_ptr_nonnull(text);
	out = calloc(1, strlen(text) + 1);
	mt_quiet_ptr_nonnull(out);
	plugin[0] = build_id[0] = '\0';
	*base = UINT64_MAX;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_object *o = json_tokener_parse(line);
		const char *module, *at;

		mt_quiet_ptr_nonnull(o);
		if (!strcmp(mt_test_json_str(o, "kind"), "frame")) {
			/* {"v":1,"seq":N,"kind":... without "seq":N, */
			at = strstr(line, "\"kind\"");
			mt_quiet_ptr_nonnull(at);
			len += (size_t)sprintf(out + len, "%s\n", at);
			module = mt_test_json_opt_str(o, "module");
			if (module && strstr(module, "libwl_dlreuse_")) {
				uint64_t ip = strtoull(mt_test_json_str(o, "ip"), NULL, 16);

				snprintf(plugin, 64, "%s", strrchr(module, '/') + 1);
				snprintf(build_id, 128, "%s", mt_test_json_str(o, "build_id"));
				if (ip < *base)
					*base = ip;
			}
		}
		json_object_put(o);
	}
	free(text);
	return out;
}

/* The "memtrace: names: shared N kept N" lines of err that say a
 * process took names from the cache and named none itself. */
static int count_all_names_shared(const char *err)
{
	const char *at = err;
	unsigned long shared, kept;
	int n = 0;

	while ((at = strstr(at, "memtrace: names: shared ")) != NULL) {
		mt_quiet(sscanf(at, "memtrace: names: shared %lu kept %lu", &shared, &kept) == 2,
			 "a names line: %.60s", at);
		if (shared > 0 && kept == 0)
			n++;
		at++;
	}
	return n;
}

/* The "memtrace: start: KIND ns N register_ns N" lines of err of one
 * kind ("image" or "fork"), each a start whose registration is a part of
 * it, and took some time where the clock is fine enough to see it
 * (fine); returns how many. */
static int count_start_lines(const char *err, const char *kind, int fine)
{
	const char *at = err;
	unsigned long long ns, reg;
	char k[8];
	int n = 0;

	while ((at = strstr(at, "memtrace: start: ")) != NULL) {
		mt_quiet(sscanf(at, "memtrace: start: %7s ns %llu register_ns %llu", k, &ns, &reg) == 3,
			 "a start line: %.60s", at);
		mt_quiet(!strcmp(k, "image") || !strcmp(k, "fork"), "a start line: %.60s", at);
		mt_quiet((reg > 0 || !fine) && reg <= ns && ns < 60000000000ull,
			 "a start line: %.60s", at);
		n += !strcmp(k, kind);
		at++;
	}
	return n;
}

/* MEMTRACE_STATS says what each process's start took, once: at its exit,
 * or at its exec, each image and each forked child its own. */
START_TEST(test_stats_say_what_each_start_took)
{
	char *dir = mt_test_scratch(), *pattern = mt_test_path(dir, "t.%p.jsonl");
	struct timespec res;
	int fine;
	mt_test_run_t r;

	/* A registration takes tens of microseconds: a clock of ticks
	 * (no high-resolution timers) may see none of it. */
	fine = clock_getres(CLOCK_MONOTONIC, &res) == 0 && res.tv_sec == 0 && res.tv_nsec <= 1000;
	if (!fine)
		MT_TEST_SKIP("CLOCK_MONOTONIC resolves %ld ns, too coarse to see a "
			     "registration's time; the lines are counted only",
			     (long)res.tv_nsec);

	run_traced(&r, "wl_forknames", pattern, "MEMTRACE_STATS=1", NULL);
	mt_quiet(r.status == 0, "wl_forknames exited %d: %s", r.status, r.err);
	mt_quiet_int_eq(count_start_lines(r.err, "image", fine), 1);
	mt_quiet_int_eq(count_start_lines(r.err, "fork", fine), 3);
	mt_test_run_release(&r);
	/* The image before the exec and the one after, one line each. */
	run_traced(&r, "wl_exec", pattern, "MEMTRACE_STATS=1", "self");
	mt_quiet(r.status == 0, "wl_exec exited %d: %s", r.status, r.err);
	mt_quiet_int_eq(count_start_lines(r.err, "image", fine), 2);
	mt_quiet_int_eq(count_start_lines(r.err, "fork", fine), 0);
	mt_test_run_release(&r);
	/* Asked for by no one, said by no one. */
	run_traced(&r, "wl_exec", pattern, NULL, "self");
	mt_quiet_int_eq(r.status, 0);
	mt_quiet(!strstr(r.err, "memtrace: start: "), "stderr: %s", r.err);
	mt_test_run_release(&r);
	free(pattern);
}
END_TEST

START_TEST(test_forked_children_take_the_names_their_siblings_gave)
{
	char *dir = mt_test_scratch(), *pattern = mt_test_path(dir, "t.%p.jsonl");
	char *first = NULL, plugin[64], build_id[128];
	char **traces;
	size_t n;
	int children = 0;
	uint64_t base;
	mt_test_run_t r;

	run_traced(&r, "wl_forknames", pattern, "MEMTRACE_STATS=1", NULL);
	mt_quiet(r.status == 0, "wl_forknames exited %d: %s", r.status, r.err);
	traces = mt_test_traces(dir, &n);
	mt_quiet_uint_eq(n, 4);
	for (size_t i = 0; i < n; i++) {
		char *path = mt_test_path(dir, traces[i]);
		char *status = mt_test_check_status(path), *frames;

		ck_assert_str_eq(status, "complete");
		free(status);
		if (count_size(path, "alloc", 5555, 5555) != 4) {
			free(path);
			continue;
		}
		children++;
		/* The same code, so the same frames, in the same order: the
		 * first child's named from the files, the others' taken
		 * from what it kept. */
		frames = frame_lines(path, plugin, build_id, &base);
		free(path);
		mt_quiet(strstr(frames, "wl_forknames_leaf") && strstr(frames, "wl_forknames_top"),
			 "the child's frames: %s", frames);
		if (!first)
			first = frames;
		else {
			ck_assert_str_eq(frames, first);
			free(frames);
		}
	}
	mt_quiet_int_eq(children, 3);
	/* The second and the third child named nothing themselves. */
	mt_quiet(count_all_names_shared(r.err) >= 2, "stderr: %s", r.err);
	free(first);
	mt_test_traces_release(traces, n);
	mt_test_run_release(&r);
	free(pattern);
}
END_TEST

START_TEST(test_a_sibling_with_another_file_where_one_was_names_its_own_frames)
{
	char *dir = mt_test_scratch(), *pattern = mt_test_path(dir, "t.%p.jsonl");
	char plugin[3][64], build_id[3][128], plugin_at[3][32], out_plugin[3];
	char **traces;
	size_t n;
	int got = 0;
	uint64_t base[3] = { 0, 0, 0 };
	mt_test_run_t r;

	run_traced(&r, "wl_forknames", pattern, NULL, "plugins");
	mt_quiet(r.status == 0, "wl_forknames exited %d: %s", r.status, r.err);
	mt_quiet(sscanf(r.out, "child 1: %c at %31s\nchild 2: %c at %31s\nchild 3: %c at %31s",
			&out_plugin[0], plugin_at[0], &out_plugin[1], plugin_at[1], &out_plugin[2],
			plugin_at[2]) == 6, "out: %s", r.out);
	if (strcmp(plugin_at[1], plugin_at[2]))
		MT_TEST_SKIP("needs the loader to map the third child's plugin where the second's was (%s, %s)",
			     plugin_at[1], plugin_at[2]);
	traces = mt_test_traces(dir, &n);
	mt_quiet_uint_eq(n, 4);
	/* Child 2's plugin is b; child 3's is the a at child 2's address
	 * (if child 1's is there too, either a is as good). */
	for (size_t i = 0; i < n; i++) {
		uint64_t b_at = strtoull(plugin_at[1], NULL, 16), at;
		char p[64], b[128], *path = mt_test_path(dir, traces[i]);
		int child;

		free(frame_lines(path, p, b, &at));
		free(path);
		if (!p[0])
			continue;
		if (!strcmp(p, "libwl_dlreuse_b.so"))
			child = 1;
		else if (at >= b_at && at < b_at + 0x4000 && !base[2])
			child = 2;
		else
			child = 0;
		mt_quiet(!base[child], "two traces for child %d: %s", child + 1, traces[i]);
		snprintf(plugin[child], 64, "%s", p);
		snprintf(build_id[child], 128, "%s", b);
		base[child] = at;
		got++;
	}
	mt_quiet_int_eq(got, 3);
	/* The third child's plugin, a, lies where the second's, b, lay:
	 * its frames are a's, module and build id, as the first child's. */
	ck_assert_str_eq(plugin[1], "libwl_dlreuse_b.so");
	ck_assert_str_eq(plugin[2], "libwl_dlreuse_a.so");
	ck_assert_str_eq(build_id[2], build_id[0]);
	ck_assert_str_ne(build_id[2], build_id[1]);
	ck_assert(base[1] == base[2]);
	mt_test_traces_release(traces, n);
	mt_test_run_release(&r);
	free(pattern);
}
END_TEST

START_TEST(test_fork_and_exec_children_write_their_own_traces)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "trace.jsonl");
	char names[4][4096];
	int forked = 0, execd = 0, exec_stops = 0, n;
	mt_test_run_t r;
	summary_t s;

	run_traced(&r, "wl_fork", trace, NULL, NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "fork done\n");
	/* The parent's trace holds only the parent's allocations. */
	mt_quiet_int_eq(count_tids_not_pid(trace), 0);
	summarize(&s, trace, 0);
	ck_assert_str_eq(mt_test_json_opt_str(s.lines[0], "status"), "complete");
	mt_quiet_int_eq(count_size(trace, "alloc", 2222, 2222), 2);
	mt_quiet_int_eq(count_size(trace, "alloc", 3333, 4444), 0);
	summary_release(&s);
	/* The forked child, the child that execs (its trace ends with the
	 * exec) and the image it execs, which keeps its pid. */
	n = list_child_traces(dir, "trace.jsonl", names);
	mt_quiet_int_eq(n, 3);
	for (int i = 0; i < n; i++) {
		char *child = mt_test_path(dir, names[i]);

		/* trace.PID.jsonl: the pid goes before the extension. */
		mt_quiet(!strncmp(names[i], "trace.", 6) &&
			 strstr(names[i], ".jsonl"), "child trace %s", names[i]);
		summarize(&s, child, 0);
		ck_assert_str_eq(mt_test_json_opt_str(s.lines[0], "status"), "complete");
		summary_release(&s);
		if (count_size(child, "alloc", 3333, 3333) == 3)
			forked++;
		if (count_size(child, "alloc", 4444, 4444) == 4)
			execd++;
		if (count_fn(child, "trace.stop", NULL) == 1 &&
		    count_fn(child, "alloc", NULL) == 0) {
			mt_test_assert_trace_whole(child, "exec");
			exec_stops++;
		}
		mt_quiet_int_eq(count_size(child, "alloc", 2222, 2222), 0);
		mt_quiet_int_eq(count_fn(child, "trace.start", NULL), 1);
		/* A forked child's events carry its own tid, not the
		 * thread's it was forked from. */
		mt_quiet_int_eq(count_tids_not_pid(child), 0);
		free(child);
	}
	mt_quiet_int_eq(forked, 1);
	mt_quiet_int_eq(execd, 1);
	mt_quiet_int_eq(exec_stops, 1);
	mt_test_run_release(&r);
	free(trace);
}
END_TEST

/* _Fork runs no fork handlers: its children must not write a byte into
 * the parent's trace (they did, through the shared mapping), and they are
 * not traced until they exec. */
START_TEST(test_fork_without_handlers_children_leave_the_parents_trace_alone)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "trace.jsonl");
	char names[4][4096];
	mt_test_run_t r;
	summary_t s;
	char *child;

	run_traced(&r, "wl_rawfork", trace, NULL, NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "rawfork done\n");
	summarize(&s, trace, 0);
	ck_assert_str_eq(mt_test_json_opt_str(s.lines[0], "status"), "complete");
	summary_release(&s);
	mt_quiet_int_eq(count_size(trace, "alloc", 2222, 2222), 1);
	mt_quiet_int_eq(count_size(trace, "alloc", 5555, 5555), 2000);
	mt_quiet_int_eq(count_size(trace, "alloc", 3333, 3333), 0);
	mt_quiet_int_eq(count_size(trace, "alloc", 6666, 6666), 0);
	mt_quiet_int_eq(count_size(trace, "alloc", 4444, 4444), 0);
	mt_quiet_int_eq(count_fn(trace, "trace.stop", NULL), 1);
	/* One child trace: the exec'd program's, which traces itself. */
	mt_quiet_int_eq(list_child_traces(dir, "trace.jsonl", names), 1);
	child = mt_test_path(dir, names[0]);
	summarize(&s, child, 0);
	ck_assert_str_eq(mt_test_json_opt_str(s.lines[0], "status"), "complete");
	summary_release(&s);
	mt_quiet_int_eq(count_size(child, "alloc", 4444, 4444), 4);
	mt_quiet_int_eq(count_size(child, "alloc", 3333, 3333), 0);
	free(child);
	mt_test_run_release(&r);
	free(trace);
}
END_TEST

START_TEST(test_cxx_new_and_delete_are_recorded)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	mt_test_run_t r;
	summary_t s;
	int found = 0;

	run_traced(&r, "wl_cxx", trace, NULL, NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet_int_eq(count_size(trace, "alloc", 100, 100), 10);
	mt_quiet_int_eq(count_size(trace, "alloc", 7000, 7000), 1);
	mt_quiet_int_eq(count_size(trace, "alloc", 9999, 9999), 1);
	summarize(&s, trace, 5);
	ck_assert_str_eq(mt_test_json_opt_str(s.lines[0], "status"), "complete");
	/* The static object's destructor freed its buffer at exit, before
	 * trace.stop: no 9999-byte block is left live. */
	for (int i = 1; i < s.n; i++) {
		ck_assert_int_ne(mt_test_json_i64(s.lines[i], "live_bytes"), 9999);
		if (mt_test_json_i64(s.lines[i], "live_bytes") == 7000) {
			found = 1;
			ck_assert(site_has_symbol(s.lines[i], "leak_here"));
		}
	}
	mt_quiet_int_eq(found, 1);
	summary_release(&s);
	mt_test_run_release(&r);
	free(trace);
}
END_TEST

/* A C++ workload run to its end: status, allocations, frees, live bytes
 * and blocks of 72,704 bytes (libstdc++'s emergency pool) in its trace. */
typedef struct {
	int64_t allocations, frees, live_bytes;
	int pools;
} ends_t;

static ends_t run_to_the_end(const char *name, const char *arg)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	mt_test_run_t r;
	summary_t s;
	ends_t e;

	run_traced(&r, name, trace, NULL, arg);
	mt_quiet_int_eq(r.status, 0);
	summarize(&s, trace, 3);
	ck_assert_str_eq(mt_test_json_opt_str(s.lines[0], "status"), "complete");
	e.allocations = mt_test_json_i64(s.lines[0], "allocations");
	e.frees = mt_test_json_i64(s.lines[0], "frees");
	e.live_bytes = mt_test_json_i64(s.lines[0], "live_bytes");
	e.pools = count_size(trace, "alloc", 72704, 72704);
	summary_release(&s);
	mt_test_run_release(&r);
	free(trace);
	return e;
}

/* The preload calls __gnu_cxx::__freeres() at exit, before trace.stop:
 * a C++ program that frees all it allocates ends with nothing live, the
 * emergency pool's free recorded like the program's. */
START_TEST(test_cxx_runtime_pool_is_freed_before_the_stop_of_a_normal_exit)
{
	ends_t e = run_to_the_end("wl_cxx_free", NULL);

	mt_quiet_int_eq(e.pools, 1);
	mt_quiet_int_eq(e.live_bytes, 0);
	mt_quiet_int_eq(e.frees, e.allocations);
}
END_TEST

/* _exit runs no destructor and may be called from a signal handler: the
 * preload does not free the pool there (as heaptrack, whose exit handler
 * _exit skips), and the trace shows it live. */
START_TEST(test_cxx_runtime_pool_stays_live_after_underscore_exit)
{
	ends_t e = run_to_the_end("wl_cxx_free", "_exit");

	mt_quiet_int_eq(e.pools, 1);
	mt_quiet_int_eq(e.live_bytes, 72704);
	mt_quiet_int_eq(e.frees, e.allocations - 1);
}
END_TEST

/* A C program has no __freeres: its trace holds its own calls only. */
START_TEST(test_c_program_without_libstdcxx_is_unaffected_by_freeres)
{
	ends_t e = run_to_the_end("wl_c_free", NULL);

	mt_quiet_int_eq(e.pools, 0);
	mt_quiet_int_eq(e.allocations, 20);
	mt_quiet_int_eq(e.frees, 20);
	mt_quiet_int_eq(e.live_bytes, 0);
}
END_TEST

/*
 * Each allocation's t, from the trace, against the times the program read
 * around it: t is relative to the trace's start, which the program does
 * not know, so the test compares differences to the allocation the
 * program timed most tightly (a first call through a new stack takes
 * hundreds of microseconds).  Each t is clock_gettime()'s reading
 * rounded down to a whole microsecond by the collector, so a difference
 * of two is off by less than 1 us; 6 us is far below what a wrong clock
 * or a t taken at another moment (the collector's drain) would make.
 */
START_TEST(test_trace_t_follows_clock_monotonic)
{
	enum { N = 160, TOLERANCE = 6000 };
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	unsigned long long before[N], after[N], t[N];
	int seen[N] = { 0 }, n = 0, ref = 0;
	mt_test_run_t r;
	size_t len;
	char *data, *line, *save = NULL, *out;

	run_traced(&r, "wl_clock", trace, NULL, NULL);
	mt_quiet_int_eq(r.status, 0);
	out = r.out;
	for (int i = 0; i < N; i++) {
		int size, used;

		mt_quiet(sscanf(out, "%d %llu %llu\n%n", &size, &before[i],
				&after[i], &used) == 3 && size == 1000 + i,
			 "line %d of the program's output: %.60s", i, out);
		out += used;
	}
	data = mt_test_read(trace, &len);
	mt_quiet_ptr_nonnull(data);
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_object *o = json_tokener_parse(line);
		const char *kind = mt_test_json_opt_str(o, "kind");

		if (kind && !strcmp(kind, "alloc")) {
			int64_t size = mt_test_json_i64(o, "size");

			if (size >= 1000 && size < 1000 + N) {
				t[size - 1000] = (unsigned long long)mt_test_json_i64(o, "t");
				seen[size - 1000]++;
				n++;
			}
		}
		json_object_put(o);
	}
	mt_quiet_int_eq(n, N);
	for (int i = 1; i < N; i++)
		if (after[i] - before[i] < after[ref] - before[ref])
			ref = i;
	for (int i = 0; i < N; i++) {
		long long dt = (long long)(t[i] - t[ref]);
		long long lo = (long long)(before[i] - after[ref]) - TOLERANCE;
		long long hi = (long long)(after[i] - before[ref]) + TOLERANCE;

		mt_quiet_int_eq(seen[i], 1);
		mt_quiet(dt >= lo && dt <= hi,
			 "allocation %d: t after allocation %d's by %lld ns, the "
			 "program saw %lld to %lld", i, ref, dt, lo + TOLERANCE,
			 hi - TOLERANCE);
	}
	free(data);
	mt_test_run_release(&r);
	free(trace);
}
END_TEST

START_TEST(test_underscore_exit_writes_stop_and_cuts_the_file)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	mt_test_run_t r;
	summary_t s;

	run_traced(&r, "wl_exit", trace, NULL, NULL);
	mt_quiet_int_eq(r.status, 3);
	mt_test_assert_trace_whole(trace, "exit");
	summarize(&s, trace, 0);
	ck_assert_str_eq(mt_test_json_opt_str(s.lines[0], "status"), "complete");
	mt_quiet_int_eq(mt_test_json_i64(s.lines[0], "allocations"), 5);
	mt_quiet_int_eq(mt_test_json_i64(s.lines[0], "live_bytes"), 5 * 555);
	mt_quiet_int_eq(mt_test_json_i64(s.lines[0], "malformed_events"), 0);
	summary_release(&s);
	mt_test_run_release(&r);
	free(trace);
}
END_TEST

START_TEST(test_abort_writes_signal_stop_and_still_dies_of_sigabrt)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	mt_test_run_t r;
	summary_t s;
	size_t len;
	char *data;

	run_traced(&r, "wl_abort", trace, NULL, NULL);
	mt_quiet_int_eq(r.status, 128 + SIGABRT);
	data = mt_test_read(trace, &len);
	mt_quiet_ptr_nonnull(strstr(data, "\"kind\":\"trace.stop\",\"reason\":\"signal\""));
	free(data);
	summarize(&s, trace, 0);
	ck_assert_str_eq(mt_test_json_opt_str(s.lines[0], "status"), "complete");
	mt_quiet_int_eq(mt_test_json_i64(s.lines[0], "allocations"), 3);
	summary_release(&s);
	mt_test_run_release(&r);
	free(trace);
}
END_TEST

START_TEST(test_sigkill_after_ready_keeps_every_event_before_it)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *prog = mt_test_workload("wl_kill"), out_env[4096], buf[16];
	int fds[2], status;
	summary_t s;
	pid_t pid;

	snprintf(out_env, sizeof(out_env), "MEMTRACE_OUTPUT=%s", trace);
	mt_quiet_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		putenv(preload_env());
		putenv(out_env);
		execl(prog, prog, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	alarm(30);
	mt_quiet_int_eq(read(fds[0], buf, 6), 6);
	ck_assert(!memcmp(buf, "ready\n", 6));
	kill(pid, SIGKILL);
	mt_quiet_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	close(fds[0]);
	/* The collector writes on after the kill. */
	mt_test_wait_trace_finished(trace);
	summarize(&s, trace, 0);
	ck_assert_str_eq(mt_test_json_opt_str(s.lines[0], "status"), "missing_stop_event");
	mt_quiet_int_eq(mt_test_json_i64(s.lines[0], "allocations"), 100);
	mt_quiet_int_eq(mt_test_json_i64(s.lines[0], "live_bytes"), 100 * 777);
	summary_release(&s);
	free(prog);
	free(trace);
}
END_TEST

START_TEST(test_unwritable_output_warns_once_and_runs_untraced)
{
	mt_test_run_t bare, traced;

	run_bare(&bare, "wl_entry", NULL);
	run_traced(&traced, "wl_entry", "/nonexistent-dir/t.jsonl", NULL, NULL);
	mt_quiet_int_eq(traced.status, bare.status);
	ck_assert_str_eq(traced.out, bare.out);
	mt_quiet(!strncmp(traced.err, "memtrace: cannot open trace '/nonexistent-dir/t.jsonl'", 54),
		 "stderr: %s", traced.err);
	mt_quiet_ptr_eq(strchr(traced.err, '\n'), traced.err + traced.err_len - 1);
	mt_test_run_release(&bare);
	mt_test_run_release(&traced);
}
END_TEST

START_TEST(test_trace_file_is_private_and_never_follows_a_symlink)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *target = mt_test_path(dir, "target"), *link = mt_test_path(dir, "link.jsonl");
	struct stat st;
	mt_test_run_t r;

	run_traced(&r, "wl_entry", trace, NULL, NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet_int_eq(stat(trace, &st), 0);
	mt_quiet_int_eq(st.st_mode & 0777, 0600);
	mt_test_run_release(&r);

	mt_test_write(target, "precious\n", 9);
	mt_quiet_int_eq(symlink(target, link), 0);
	run_traced(&r, "wl_entry", link, NULL, NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet_ptr_nonnull(strstr(r.err, "cannot open trace"));
	mt_test_assert_file_eq(target, "precious\n");
	mt_test_run_release(&r);
	free(trace);
	free(target);
	free(link);
}
END_TEST

START_TEST(test_dlopen_while_threads_allocate_does_not_deadlock)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	mt_test_run_t r;
	summary_t s;

	run_traced(&r, "wl_dlopen", trace, NULL, NULL);
	mt_quiet(r.status == 0, "wl_dlopen exited %d (142 is a hang ended by SIGALRM)", r.status);
	ck_assert_str_eq(r.out, "dlopen done\n");
	summarize(&s, trace, 0);
	ck_assert_str_eq(mt_test_json_opt_str(s.lines[0], "status"), "complete");
	summary_release(&s);
	mt_test_run_release(&r);
	free(trace);
}
END_TEST

START_TEST(test_stack_depth_zero_writes_no_stacks)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	mt_test_run_t r;
	summary_t s;

	run_traced(&r, "wl_entry", trace, "MEMTRACE_STACK_DEPTH=0", NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet_int_eq(count_fn(trace, "stack", NULL), 0);
	mt_quiet_int_eq(count_fn(trace, "frame", NULL), 0);
	summarize(&s, trace, 1);
	mt_quiet_int_eq(mt_test_json_i64(s.lines[0], "allocations"), 12);
	/* Site 0 gathers the allocations that carry no stack. */
	mt_quiet_int_eq(mt_test_json_i64(s.lines[1], "stack_id"), 0);
	summary_release(&s);
	mt_test_run_release(&r);
	free(trace);
}
END_TEST

START_TEST(test_stack_depth_limits_the_frames_of_each_stack)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	mt_test_run_t r;
	summary_t s;
	json_object *frames;

	run_traced(&r, "wl_entry", trace, "MEMTRACE_STACK_DEPTH=2", NULL);
	mt_quiet_int_eq(r.status, 0);
	summarize(&s, trace, 1);
	mt_quiet_int_eq(s.n, 2);
	ck_assert(json_object_object_get_ex(s.lines[1], "frames", &frames));
	mt_quiet_int_eq((int)json_object_array_length(frames), 2);
	ck_assert_str_eq(top_symbol(s.lines[1]), "leak_here");
	summary_release(&s);
	mt_test_run_release(&r);
	free(trace);
}
END_TEST

/* memtrace.PROG.PID/memtrace.PID.jsonl.zst, in a directory of its own
 * made 0700, compressed by default, and whole. */
START_TEST(test_default_output_is_memtrace_pid_jsonl_zst_in_a_directory_of_its_own)
{
	char *dir = mt_test_scratch(), cmd[8192];
	char *prog = mt_test_workload("wl_entry");
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	mt_test_run_t r;
	struct stat st;
	int pid;

	/* Only the workload gets the preload: a traced shell would leave
	 * its own trace in the directory it starts in.  The workload's own
	 * output goes elsewhere: it raced the shell's echo to stdout. */
	snprintf(cmd, sizeof(cmd), "cd '%s' && unset MEMTRACE_OUTPUT && %s %s >/dev/null & echo $!; wait",
		 dir, preload_env(), prog);
	mt_test_run(&r, argv, NULL);
	mt_quiet_int_eq(sscanf(r.out, "%d", &pid), 1);
	snprintf(cmd, sizeof(cmd), "%s/memtrace.wl_entry.%d", dir, pid);
	mt_quiet(stat(cmd, &st) == 0 && S_ISDIR(st.st_mode), "no directory %s", cmd);
	mt_quiet_int_eq((int)(st.st_mode & 07777), 0700);
	snprintf(cmd, sizeof(cmd), "%s/memtrace.wl_entry.%d/memtrace.%d.jsonl.zst", dir, pid, pid);
	mt_quiet(mt_test_exists(cmd), "no %s", cmd);
	{
		summary_t s;
		unsigned char magic[4];
		FILE *f = fopen(cmd, "rb");

		mt_quiet_ptr_nonnull(f);
		mt_quiet_int_eq((int)fread(magic, 1, 4, f), 4);
		fclose(f);
		mt_quiet(magic[0] == 0x28 && magic[1] == 0xb5 && magic[2] == 0x2f &&
			 magic[3] == 0xfd, "not zstd: %02x%02x%02x%02x", magic[0],
			 magic[1], magic[2], magic[3]);
		summarize(&s, cmd, 0);
		ck_assert_str_eq(mt_test_json_opt_str(s.lines[0], "status"), "complete");
		summary_release(&s);
	}
	mt_test_run_release(&r);
	free(prog);
}
END_TEST

START_TEST(test_secure_execution_is_never_traced)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *copy = mt_test_path(dir, "wl_entry_setuid"), *prog = mt_test_workload("wl_entry");
	char cmd[8192];
	struct passwd *nobody = getpwnam("nobody");
	struct statvfs vfs;
	mt_test_run_t r;

	/* A set-user-ID copy of another user: it takes root, a user
	 * "nobody" the file system can own files of (a user namespace may
	 * map none), and a file system not mounted nosuid (/dev/shm and
	 * many a /tmp are), or the kernel runs the copy as a plain
	 * program. */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", prog, copy);
	mt_quiet_int_eq(system(cmd), 0);
	mt_quiet_int_eq(statvfs(dir, &vfs), 0);
	if (geteuid() != 0 || !nobody || (vfs.f_flag & ST_NOSUID) ||
	    chown(copy, nobody->pw_uid, (gid_t)-1) != 0) {
		MT_TEST_SKIP("cannot make a set-user-ID program of another user "
			     "here (euid %u, user nobody %s, %s %s, chown: %s)",
			     (unsigned)geteuid(), nobody ? "found" : "absent", dir,
			     vfs.f_flag & ST_NOSUID ? "nosuid" : "suid",
			     geteuid() || !nobody || (vfs.f_flag & ST_NOSUID) ?
				     "not tried" : strerror(errno));
		free(prog);
		free(copy);
		free(trace);
		return;
	}
	mt_quiet_int_eq(chmod(copy, 04755), 0);
	mt_quiet_int_eq(chmod(dir, 0755), 0);
	{
		char out_env[4096];
		char *argv[] = { copy, NULL };
		char *env[] = { preload_env(), out_env, NULL };

		snprintf(out_env, sizeof(out_env), "MEMTRACE_OUTPUT=%s", trace);
		mt_test_run(&r, argv, env);
	}
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "entry points done\n");
	ck_assert(!mt_test_exists(trace));
	mt_test_run_release(&r);
	free(prog);
	free(copy);
	free(trace);
}
END_TEST

/* heaptrack is the yardstick: on the same python3 run, memtrace must count
 * the same allocation calls, within 2 %. */
START_TEST(test_python_allocation_calls_match_heaptrack_within_two_percent)
{
	static const char script[] =
		"import json\n"
		"data = [{'k': i, 'v': str(i) * 3} for i in range(20000)]\n"
		"print(len(json.dumps(data)))\n";
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *py = mt_test_path(dir, "s.py"), cmd[16384];
	long heaptrack_calls = -1, ours;
	mt_test_run_t r;
	summary_t s;
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };

	if (access("/usr/bin/heaptrack", X_OK) != 0 || access("/usr/bin/heaptrack_print", X_OK) != 0) {
		/* Not installed: nothing to compare with (scripts/install-deps
		 * installs it, so make check runs this). */
		int no_ht = access("/usr/bin/heaptrack", X_OK) != 0;
		int err = no_ht ? errno : (access("/usr/bin/heaptrack_print", X_OK), errno);

		MT_TEST_SKIP("heaptrack is not installed (/usr/bin/heaptrack%s: %s)",
			     no_ht ? "" : "_print", strerror(err));
		free(py);
		free(trace);
		return;
	}
	mt_test_write(py, script, strlen(script));
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && export PYTHONMALLOC=malloc PYTHONHASHSEED=0 && "
		 "heaptrack -o '%s/ht' /usr/bin/python3 -S s.py >/dev/null 2>&1 && "
		 "heaptrack_print '%s'/ht.* 2>/dev/null | sed -n 's/^calls to allocation functions: \\([0-9]*\\).*/\\1/p'",
		 dir, dir, dir);
	mt_test_run(&r, argv, NULL);
	mt_quiet_int_eq(sscanf(r.out, "%ld", &heaptrack_calls), 1);
	mt_test_run_release(&r);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && PYTHONMALLOC=malloc PYTHONHASHSEED=0 MEMTRACE_OUTPUT='%s' "
		 "LD_PRELOAD='%s/libmtpreload.so' /usr/bin/python3 -S s.py",
		 dir, trace, mt_test_build_dir());
	mt_test_run(&r, argv, NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_test_run_release(&r);
	summarize(&s, trace, 0);
	ck_assert_str_eq(mt_test_json_opt_str(s.lines[0], "status"), "complete");
	/* heaptrack counts every call that allocates, reallocs included. */
	ours = (long)(mt_test_json_i64(s.lines[0], "allocations") + mt_test_json_i64(s.lines[0], "resizes") +
		      mt_test_json_i64(s.lines[0], "remaps"));
	mt_quiet(labs(ours - heaptrack_calls) * 50 <= heaptrack_calls,
		 "memtrace %ld calls, heaptrack %ld", ours, heaptrack_calls);
	summary_release(&s);
	free(py);
	free(trace);
}
END_TEST

START_TEST(test_posix_spawn_and_vfork_children_trace_themselves)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char names[4][4096];
	mt_test_run_t r;
	int n;

	run_traced(&r, "wl_spawn", trace, NULL, NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "spawn done\n");
	mt_quiet_int_eq(count_size(trace, "alloc", 1234, 1234), 1);
	mt_quiet_int_eq(count_size(trace, "alloc", 6666, 6666), 0);
	n = list_child_traces(dir, "t.jsonl", names);
	mt_quiet_int_eq(n, 2);
	for (int i = 0; i < n; i++) {
		char *child = mt_test_path(dir, names[i]);
		summary_t s;

		mt_quiet_int_eq(count_size(child, "alloc", 6666, 6666), 6);
		summarize(&s, child, 0);
		ck_assert_str_eq(mt_test_json_opt_str(s.lines[0], "status"), "complete");
		summary_release(&s);
		free(child);
	}
	mt_test_run_release(&r);
	free(trace);
}
END_TEST

/*
 * Run wl_exit (five blocks of 555 bytes, then _exit(3)) traced, with the
 * test library build/workloads/libLIB.so preloaded before memtrace's
 * (lib_first) or after it, so that its constructor runs after or before
 * memtrace's.  Returns the trace's path (malloc'd) with r filled.
 */
static char *run_exit_beside(const char *lib, int lib_first, mt_test_run_t *r)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char preload[8192], out_env[4096];
	char *prog = mt_test_workload("wl_exit");
	char *argv[] = { prog, NULL };
	char *env[] = { preload, out_env, NULL };
	const char *b = mt_test_build_dir();

	if (lib_first)
		snprintf(preload, sizeof(preload),
			 "LD_PRELOAD=%s/workloads/lib%s.so:%s/libmtpreload.so", b, lib, b);
	else
		snprintf(preload, sizeof(preload),
			 "LD_PRELOAD=%s/libmtpreload.so:%s/workloads/lib%s.so", b, b, lib);
	snprintf(out_env, sizeof(out_env), "MEMTRACE_OUTPUT=%s", trace);
	mt_test_run(r, argv, env);
	free(prog);
	return trace;
}

/* A library preloaded before or after memtrace allocates in its own
 * constructor: the first hook starts tracing if memtrace's constructor
 * has not yet run. */
static void check_early_allocation(int early_first)
{
	mt_test_run_t r;
	char *trace = run_exit_beside("wl_early", early_first, &r);

	mt_quiet_int_eq(r.status, 3);
	mt_quiet_int_eq(count_size(trace, "alloc", 5555, 5555), 1);
	mt_quiet_int_eq(count_size(trace, "alloc", 555, 555), 5);
	mt_test_run_release(&r);
	free(trace);
}

START_TEST(test_allocation_in_an_earlier_constructor_is_traced)
{
	check_early_allocation(1);
	check_early_allocation(0);
}
END_TEST

/*
 * A library's constructor that calls bindtextdomain() starts the tracer
 * from the malloc it makes while it holds gettext's lock: the tracer must
 * do nothing that takes that lock (a dlerror() translates its message),
 * or the program's next textdomain() waits forever (ps did).  Both
 * orders of LD_PRELOAD, and the program's own gettext afterwards.
 */
static void check_textdomain(int library_first)
{
	mt_test_run_t r;
	char *trace = run_exit_beside("wl_textdomain", library_first, &r);

	mt_quiet(r.status == 3 && r.err_len == 0, "status %d, stderr: %s", r.status, r.err);
	mt_quiet_int_eq(count_size(trace, "alloc", 555, 555), 5);
	mt_test_run_release(&r);
	free(trace);
}

START_TEST(test_a_library_that_binds_its_text_domain_first_keeps_gettext_working)
{
	check_textdomain(1);
	check_textdomain(0);
}
END_TEST

/* A daemon closes every descriptor it did not open, then opens a file of
 * its own: the trace depends on none of the program's descriptors (the
 * collector writes it), so it is whole, and the program's file is its
 * own; 100000 rounds outrun the first flush too. */
static void check_closefds(const char *rounds, int allocations)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *own = mt_test_path(dir, "own.txt"), out_env[4096];
	char *prog = mt_test_workload("wl_closefds");
	char *argv[] = { prog, own, (char *)rounds, NULL };
	char *env[] = { preload_env(), out_env, NULL };
	mt_test_run_t r;
	summary_t s;

	snprintf(out_env, sizeof(out_env), "MEMTRACE_OUTPUT=%s", trace);
	mt_test_run(&r, argv, env);
	mt_quiet_int_eq(r.status, 0);
	mt_test_assert_file_eq(own, "mine\n");
	ck_assert_str_eq(r.err, "");
	summarize(&s, trace, 0);
	ck_assert_str_eq(mt_test_json_opt_str(s.lines[0], "status"), "complete");
	mt_quiet_int_eq(mt_test_json_i64(s.lines[0], "allocations"), allocations);
	summary_release(&s);
	mt_test_run_release(&r);
	free(prog);
	free(own);
	free(trace);
}

START_TEST(test_a_program_that_closes_every_descriptor_is_traced_whole)
{
	check_closefds("10000", 10001);
	check_closefds("100000", 100001);
}
END_TEST

/* The preload's own symbol lookups fail at times (a C program has no
 * libstdc++ to look in); such a failure must leave the program's
 * dlerror() as it was, and its buffers, made inside the tracer, must not
 * turn up as unknown frees when the program's next dl call frees them. */
START_TEST(test_the_preloads_lookups_leave_dlerror_as_it_was)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *prog = mt_test_workload("wl_dlerror"), out_env[4096];
	char *argv[] = { prog, NULL };
	char *env[] = { preload_env(), out_env, NULL };
	mt_test_run_t r;
	summary_t s;

	snprintf(out_env, sizeof(out_env), "MEMTRACE_OUTPUT=%s", trace);
	mt_test_run(&r, argv, env);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "dlerror: none\nfound: 1\n");
	summarize(&s, trace, 0);
	ck_assert_str_eq(mt_test_json_opt_str(s.lines[0], "status"), "complete");
	mt_quiet_int_eq(mt_test_json_i64(s.lines[0], "unknown_frees"), 0);
	summary_release(&s);
	mt_test_run_release(&r);
	free(prog);
	free(trace);
}
END_TEST

/* Frames the symbol tests name in this very process: one static function
 * (only in .symtab) and one exported (in .symtab as a global). */
static __attribute__((noinline)) int sym_static_fn(int x)
{
	return x * 5 + 2;
}

__attribute__((noinline)) int mt_check_sym_exported_fn(int x);
__attribute__((noinline)) int mt_check_sym_exported_fn(int x)
{
	return x * 7 + 3;
}

/* What libunwind's own get_proc_name says of ip: the names mt_symbol must
 * give, and its fallback for modules it cannot read itself. */
static void libunwind_name(uint64_t ip, char *symbol, size_t cap, int *has, uint64_t *offset)
{
	unw_accessors_t *acc = unw_get_accessors(unw_local_addr_space);
	unw_word_t off = 0;
	int rc;

	symbol[0] = '\0';
	*has = 0;
	*offset = 0;
	rc = acc->get_proc_name(unw_local_addr_space, (unw_word_t)(ip - 1), symbol, cap,
				&off, NULL);
	if ((rc == 0 || rc == -UNW_ENOMEM) && symbol[0]) {
		symbol[cap - 1] = '\0';
		*has = 1;
		*offset = off + 1;
	}
}

static void assert_named_as_libunwind_does(uint64_t ip, size_t cap)
{
	char module[1024], symbol[2048], want[2048];
	mt_symbol_info_t info;
	uint64_t offset;
	int has;

	mt_symbol_resolve(ip, &info, module, sizeof(module), symbol, cap);
	libunwind_name(ip, want, cap, &has, &offset);
	if (has && !info.has_symbol) {
		mt_symbol_probe_t scan, idx;

		/* The one difference: libunwind's symbol has a size and ends
		 * before ip - 1 (the alignment padding after a function). */
		mt_quiet(mt_symbol_probe(ip - 1, ip - 1, &scan, &idx) &&
				 scan.size && scan.distance >= scan.size &&
				 scan.distance == offset - 1,
			 "ip %#llx: no symbol, libunwind %s+%#llx", (unsigned long long)ip,
			 want, (unsigned long long)offset);
		return;
	}
	mt_quiet(info.has_symbol == has, "ip %#llx: has_symbol %d, libunwind %d (%s)",
		 (unsigned long long)ip, info.has_symbol, has, want);
	if (has) {
		ck_assert_str_eq(symbol, want);
		mt_quiet_uint_eq(info.symbol_len, strlen(want));
		mt_quiet_uint_eq(info.offset, offset);
	}
}

/* The functions the naming tests look up: a static one and an exported
 * one of this program, two of libc, one of json-c, one of the preload's
 * core. */
#define SYM_TEST_FNS 6
static void sym_test_fns(uint64_t fns[SYM_TEST_FNS])
{
	fns[0] = (uint64_t)(uintptr_t)&sym_static_fn;
	fns[1] = (uint64_t)(uintptr_t)&mt_check_sym_exported_fn;
	fns[2] = (uint64_t)(uintptr_t)&getpid;
	fns[3] = (uint64_t)(uintptr_t)&fopen;
	fns[4] = (uint64_t)(uintptr_t)&json_tokener_parse;
	fns[5] = (uint64_t)(uintptr_t)&mt_symbol_resolve;
}

START_TEST(test_symbols_match_libunwind_for_static_exported_and_library_functions)
{
	uint64_t fns[SYM_TEST_FNS];

	sym_test_fns(fns);
	char symbol[64];
	mt_symbol_info_t info;
	char module[1024];

	mt_quiet_int_eq(sym_static_fn(1) + mt_check_sym_exported_fn(1), 17);
	mt_symbol_reset();
	for (size_t i = 0; i < SYM_TEST_FNS; i++)
		for (uint64_t d = 1; d < 64; d += 3) {
			assert_named_as_libunwind_does(fns[i] + d, 2048);
			/* Truncated at the caller's buffer as libunwind
			 * truncates it. */
			assert_named_as_libunwind_does(fns[i] + d, 8);
		}
	mt_symbol_resolve((uint64_t)(uintptr_t)&sym_static_fn + 4, &info, module,
			  sizeof(module), symbol, sizeof(symbol));
	ck_assert_str_eq(symbol, "sym_static_fn");
	mt_quiet_uint_eq(info.offset, 4);
	mt_symbol_resolve((uint64_t)(uintptr_t)&mt_check_sym_exported_fn + 4, &info,
			  module, sizeof(module), symbol, sizeof(symbol));
	ck_assert_str_eq(symbol, "mt_check_sym_exported_fn");
	mt_quiet_uint_eq(info.offset, 4);
}
END_TEST

/* A loaded object the symbol index tests name, found as the loader has it:
 * its file, its load bias, its first executable segment. */
typedef struct {
	const char *want; /* a substring of its path; NULL: the program itself */
	int found;
	char path[4096];
	uint64_t bias, xstart, xend;
} sym_object_t;

static int find_sym_object(struct dl_phdr_info *info, size_t size, void *data)
{
	sym_object_t *o = data;
	int first = !o->found && o->want == NULL;

	(void)size;
	/* The program itself is the loader's first object. */
	if (o->want == NULL && !first)
		return 1;
	if (o->want && !strstr(info->dlpi_name, o->want))
		return 0;
	o->found = 1;
	o->bias = info->dlpi_addr;
	if (o->want) {
		snprintf(o->path, sizeof(o->path), "%s", info->dlpi_name);
	} else {
		ssize_t n = readlink("/proc/self/exe", o->path, sizeof(o->path) - 1);

		ck_assert_int_gt(n, 0);
		o->path[n] = '\0';
	}
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD && (info->dlpi_phdr[i].p_flags & PF_X)) {
			o->xstart = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			o->xend = o->xstart + info->dlpi_phdr[i].p_memsz;
			break;
		}
	return 1;
}

static void sym_object(sym_object_t *o, const char *want)
{
	memset(o, 0, sizeof(*o));
	o->want = want;
	dl_iterate_phdr(find_sym_object, o);
	mt_quiet(o->found && o->xend > o->xstart, "no loaded object %s", want ? want : "(program)");
}

/* The addresses of an object's function symbols, read from its file here
 * rather than asked of mt_symbol: every defined STT_FUNC of .symtab and
 * .dynsym, at st_value plus the load bias unless SHN_ABS.  Returns a
 * malloc'd array of *n. */
static uint64_t *function_addresses(const sym_object_t *o, size_t *n)
{
	int fd = open(o->path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	const unsigned char *img;
	const Elf64_Ehdr *eh;
	uint64_t *addrs = NULL;
	size_t cap = 0;

	mt_quiet(fd >= 0, "open %s", o->path);
	mt_quiet_int_eq(fstat(fd, &st), 0);
	img = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	ck_assert(img != MAP_FAILED);
	eh = (const Elf64_Ehdr *)img;
	*n = 0;
	for (int i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff +
							    (uint64_t)i * eh->e_shentsize);

		if (sh->sh_type != SHT_SYMTAB && sh->sh_type != SHT_DYNSYM)
			continue;
		for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= sh->sh_size; off += sh->sh_entsize) {
			const Elf64_Sym *sym = (const Elf64_Sym *)(img + sh->sh_offset + off);

			if (ELF64_ST_TYPE(sym->st_info) != STT_FUNC || sym->st_shndx == SHN_UNDEF)
				continue;
			if (*n == cap) {
				cap = cap ? 2 * cap : 1024;
				addrs = realloc(addrs, cap * sizeof(*addrs));
				ck_assert(addrs != NULL);
			}
			addrs[(*n)++] = sym->st_value + (sym->st_shndx == SHN_ABS ? 0 : o->bias);
		}
	}
	munmap((void *)img, (size_t)st.st_size);
	return addrs;
}

/* Name ip in at's module both ways; returns whether the distance is 0. */
static int assert_index_agrees_with_scan(uint64_t at, uint64_t ip)
{
	mt_symbol_probe_t scan, idx;

	mt_quiet(mt_symbol_probe(at, ip, &scan, &idx), "no index for the module of %#llx",
		 (unsigned long long)at);
	mt_quiet(scan.distance == idx.distance &&
			      (scan.distance == UINT64_MAX ||
			       (scan.name == idx.name && scan.name_max == idx.name_max &&
				scan.size == idx.size)),
		      "ip %#llx: scan %s+%#llx, index %s+%#llx", (unsigned long long)ip,
		      scan.name ? scan.name : "(none)", (unsigned long long)scan.distance,
		      idx.name ? idx.name : "(none)", (unsigned long long)idx.distance);
	return scan.distance == 0;
}

START_TEST(test_symbol_index_names_every_address_as_the_scan_of_all_symbols_does)
{
	const char *objects[] = { "libc.so.6", NULL };
	uint64_t seed = 0x9e3779b97f4a7c15ull;

	mt_quiet_int_eq(sym_static_fn(1), 7);
	mt_symbol_reset();
	for (size_t k = 0; k < sizeof(objects) / sizeof(objects[0]); k++) {
		sym_object_t o;
		size_t n, exact = 0;
		uint64_t *addrs, lo = UINT64_MAX, hi = 0;

		sym_object(&o, objects[k]);
		addrs = function_addresses(&o, &n);
		mt_quiet(n > 100, "%s has only %zu function symbols", o.path, n);
		/* Each symbol's own address, and the bytes either side:
		 * aliases, ties and neighbours. */
		for (size_t i = 0; i < n; i++) {
			exact += (size_t)assert_index_agrees_with_scan(o.xstart, addrs[i]);
			assert_index_agrees_with_scan(o.xstart, addrs[i] + 1);
			assert_index_agrees_with_scan(o.xstart, addrs[i] - 1);
			if (addrs[i] < lo)
				lo = addrs[i];
			if (addrs[i] > hi)
				hi = addrs[i];
		}
		/* The addresses read here are mt_symbol's: the test means
		 * something. */
		mt_quiet_uint_ge(exact, n / 2);
		/* Anywhere in the executable segment. */
		for (int i = 0; i < 20000; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			assert_index_agrees_with_scan(o.xstart,
						      o.xstart + (seed >> 11) % (o.xend - o.xstart));
		}
		/* Below every symbol (the scan's wrapped distance), above
		 * every one, and the ends of the address space. */
		{
			uint64_t edges[] = { 0, 1, lo - 1, lo - 4096, o.xstart - 1, o.xstart,
					     o.xend - 1, o.xend, hi + 1, hi + (1u << 30),
					     UINT64_MAX, UINT64_MAX - 1, (uint64_t)1 << 63 };

			for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
				assert_index_agrees_with_scan(o.xstart, edges[i]);
		}
		free(addrs);
	}
}
END_TEST

/* Once a module has its index, naming a frame reads the index and the
 * name's string, nothing else of the file: a forked child pays a fault
 * for each page of the file it reads first.  So the file's headers, its
 * program and section headers and its symbol tables are overwritten
 * here, in a private copy, after the index is built, and every answer,
 * and the build id, stay what they were. */
START_TEST(test_symbol_index_names_from_the_index_and_the_strings_alone)
{
	unsigned char id[MT_ELF_BUILD_ID_MAX], id_after[MT_ELF_BUILD_ID_MAX];
	uint64_t ranges[2][2];
	mt_elf_sym_t *before;
	mt_elf_view_t v;
	mt_elf_sym_t a, b;
	sym_object_t o;
	const Elf64_Ehdr *eh;
	unsigned char *img;
	struct stat st;
	size_t n, id_len, nranges = 0;
	uint64_t *addrs;
	int fd;

	sym_object(&o, "libc.so.6");
	addrs = function_addresses(&o, &n);
	fd = open(o.path, O_RDONLY | O_CLOEXEC);
	mt_quiet(fd >= 0, "open %s", o.path);
	mt_quiet_int_eq(fstat(fd, &st), 0);
	img = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	close(fd);
	ck_assert(img != MAP_FAILED);
	memset(&v, 0, sizeof(v));
	v.image = img;
	v.size = (size_t)st.st_size;
	mt_elf_open(&v, o.path, o.bias, 0);
	mt_quiet_int_eq(v.state, MT_ELF_OK);
	ck_assert(mt_elf_probe(&v, addrs[0], &a, &b));
	ck_assert(mt_elf_has_index(&v));
	id_len = mt_elf_build_id(&v, id);
	mt_quiet_uint_gt(id_len, 0);
	before = calloc(2 * n, sizeof(*before));
	ck_assert_ptr_nonnull(before);
	for (size_t i = 0; i < 2 * n; i++) {
		mt_elf_sym_t *e = &before[i];

		e->distance = mt_elf_lookup(&v, addrs[i / 2] + i % 2, &e->name, &e->name_max,
					    &e->size);
	}
	/* The symbol tables, then every header, overwritten. */
	eh = (const Elf64_Ehdr *)img;
	for (int i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff +
							    (uint64_t)i * eh->e_shentsize);

		if ((sh->sh_type == SHT_SYMTAB || sh->sh_type == SHT_DYNSYM) && nranges < 2) {
			ranges[nranges][0] = sh->sh_offset;
			ranges[nranges++][1] = sh->sh_size;
		}
	}
	mt_quiet_uint_gt(nranges, 0);
	for (size_t i = 0; i < nranges; i++)
		memset(img + ranges[i][0], 0xa5, ranges[i][1]);
	memset(img + eh->e_phoff, 0xa5, (size_t)eh->e_phnum * eh->e_phentsize);
	memset(img + eh->e_shoff, 0xa5, (size_t)eh->e_shnum * eh->e_shentsize);
	memset(img, 0xa5, sizeof(Elf64_Ehdr));
	for (size_t i = 0; i < 2 * n; i++) {
		mt_elf_sym_t e;

		e.distance = mt_elf_lookup(&v, addrs[i / 2] + i % 2, &e.name, &e.name_max, &e.size);
		mt_quiet(e.distance == before[i].distance && e.name == before[i].name &&
				 e.name_max == before[i].name_max && e.size == before[i].size,
			 "%#llx: named %s+%#llx, now %s+%#llx",
			 (unsigned long long)(addrs[i / 2] + i % 2),
			 before[i].name ? before[i].name : "(none)",
			 (unsigned long long)before[i].distance, e.name ? e.name : "(none)",
			 (unsigned long long)e.distance);
	}
	mt_quiet_uint_eq(mt_elf_build_id(&v, id_after), id_len);
	ck_assert(!memcmp(id, id_after, id_len));
	mt_elf_drop(&v);
	free(before);
	free(addrs);
}
END_TEST

/* A function symbol at an absolute address near the top of the address
 * space (SHN_ABS, no load offset): for an ip below every other symbol the
 * scan's unsigned distance wraps around to it, and finds it. */
__asm__(".globl mt_check_sym_abs_fn\n"
	".type mt_check_sym_abs_fn, @function\n"
	".set mt_check_sym_abs_fn, 0xfffffffffffff000\n");

START_TEST(test_symbol_index_wraps_below_every_symbol_as_the_scan_does)
{
	uint64_t at = (uint64_t)(uintptr_t)&sym_static_fn;
	mt_symbol_probe_t scan, idx;

	mt_symbol_reset();
	ck_assert(mt_symbol_probe(at, 0x10, &scan, &idx));
	mt_quiet_uint_eq(scan.distance, 0x1010);
	ck_assert_str_eq(scan.name, "mt_check_sym_abs_fn");
	mt_quiet_uint_eq(idx.distance, scan.distance);
	mt_quiet_ptr_eq(idx.name, scan.name);
	ck_assert(mt_symbol_probe(at, 0xfffffffffffff005ull, &scan, &idx));
	mt_quiet_uint_eq(scan.distance, 5);
	ck_assert_str_eq(scan.name, "mt_check_sym_abs_fn");
	mt_quiet_uint_eq(idx.distance, scan.distance);
	mt_quiet_ptr_eq(idx.name, scan.name);
}
END_TEST

START_TEST(test_modules_with_an_index_name_frames_as_libunwind_does)
{
	uint64_t fns[SYM_TEST_FNS];

	sym_test_fns(fns);
	mt_symbol_stats_t before, after;
	mt_symbol_probe_t scan, idx;
	uint64_t resolved = 0;
	sym_object_t libc;

	mt_quiet_int_eq(sym_static_fn(1) + mt_check_sym_exported_fn(1), 17);
	mt_symbol_reset();
	/* Every module of these frames gets its index now, small or not. */
	for (size_t i = 0; i < SYM_TEST_FNS; i++)
		ck_assert(mt_symbol_probe(fns[i], fns[i], &scan, &idx));
	mt_symbol_stats(&before);
	for (size_t i = 0; i < SYM_TEST_FNS; i++)
		for (uint64_t d = 1; d < 64; d += 3) {
			assert_named_as_libunwind_does(fns[i] + d, 2048);
			assert_named_as_libunwind_does(fns[i] + d, 8);
			resolved += 2;
		}
	/* And across libc, in steps that land anywhere in a function. */
	sym_object(&libc, "libc.so.6");
	for (uint64_t ip = libc.xstart + 1; ip < libc.xend; ip += 1021) {
		assert_named_as_libunwind_does(ip, 2048);
		resolved++;
	}
	mt_symbol_stats(&after);
	mt_quiet_uint_eq(after.indexed - before.indexed, resolved);
	mt_quiet_uint_eq(after.fallbacks - before.fallbacks, 0);
}
END_TEST

START_TEST(test_a_module_gets_its_index_on_its_eighth_lookup_and_only_when_large)
{
	char module[1024], symbol[256];
	mt_symbol_info_t info;
	mt_symbol_stats_t s0, s1;
	uint64_t libc = (uint64_t)(uintptr_t)&getpid;
	uint64_t jsonc = (uint64_t)(uintptr_t)&json_tokener_parse;

	mt_symbol_reset();
	mt_symbol_stats(&s0);
	/* libc has thousands of functions: scanned 7 times, then indexed. */
	for (int i = 1; i <= 7; i++)
		mt_symbol_resolve(libc + (uint64_t)i, &info, module, sizeof(module), symbol,
				  sizeof(symbol));
	mt_symbol_stats(&s1);
	mt_quiet_uint_eq(s1.indexed - s0.indexed, 0);
	for (int i = 8; i <= 20; i++)
		mt_symbol_resolve(libc + (uint64_t)i, &info, module, sizeof(module), symbol,
				  sizeof(symbol));
	mt_symbol_stats(&s1);
	mt_quiet_uint_eq(s1.indexed - s0.indexed, 13);
	/* json-c has about a hundred: never worth an index. */
	for (int i = 1; i <= 100; i++)
		mt_symbol_resolve(jsonc + (uint64_t)i, &info, module, sizeof(module), symbol,
				  sizeof(symbol));
	mt_symbol_stats(&s0);
	mt_quiet_uint_eq(s0.indexed - s1.indexed, 0);
	mt_quiet_uint_eq(s0.fallbacks - s1.fallbacks, 0);
}
END_TEST

/* A function of wl_manyfns, from what it prints. */
typedef struct {
	uint64_t addr;
	char name[16];
} manyfn_t;

static int manyfn_cmp(const void *a, const void *b)
{
	const manyfn_t *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * A loaded library whose section headers give its symbol tables an entry
 * size of entsize (the loader reads only program headers, so it loads):
 * naming an address in it must neither hang nor read outside the file,
 * and must not hand the file to libunwind, whose walk would do both.
 */
static void assert_bad_entry_size_names_nothing(uint64_t entsize, const char *name)
{
	char *dir = mt_test_scratch(), *so = mt_test_path(dir, name);
	char *src = mt_test_path(mt_test_build_dir(), "workloads/libwl_early.so");
	char module[4096], symbol[256];
	size_t len, patched = 0;
	unsigned char *img = (unsigned char *)mt_test_read(src, &len);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	mt_symbol_stats_t before, after;
	mt_symbol_info_t info;
	mt_symbol_probe_t scan, idx;
	sym_object_t o;
	void *h;

	mt_quiet_ptr_nonnull(img);
	mt_quiet_uint_ge(len, sizeof(*eh));
	for (int i = 0; i < eh->e_shnum; i++) {
		Elf64_Shdr *sh = (Elf64_Shdr *)(img + eh->e_shoff + (uint64_t)i * eh->e_shentsize);

		if (sh->sh_type == SHT_SYMTAB || sh->sh_type == SHT_DYNSYM) {
			sh->sh_entsize = entsize;
			patched++;
		}
	}
	mt_quiet_uint_ge(patched, 1);
	mt_test_write(so, (const char *)img, len);
	h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	mt_quiet(h != NULL, "dlopen %s: %s", so, dlerror());
	sym_object(&o, name);
	mt_symbol_reset();
	/* The view is usable, and no table gives a candidate. */
	mt_quiet_int_eq(mt_symbol_probe(o.xstart, o.xstart + 16, &scan, &idx), 0);
	mt_symbol_stats(&before);
	mt_symbol_resolve(o.xstart + 17, &info, module, sizeof(module), symbol, sizeof(symbol));
	mt_symbol_stats(&after);
	ck_assert(info.has_module);
	mt_quiet(strstr(module, name) != NULL, "module %s", module);
	mt_quiet_int_eq(info.has_symbol, 0);
	mt_quiet_uint_eq(after.fallbacks, before.fallbacks);
	mt_symbol_reset();
	/* The library's constructor keeps a block for good: give it back,
	 * or the leak checker of make sanitize blames the test. */
	{
		void **block = dlsym(h, "wl_early_block");

		mt_quiet_ptr_nonnull(block);
		free(*block);
	}
	dlclose(h);
	free(img);
	free(src);
	free(so);
}

START_TEST(test_symbol_table_with_zero_entry_size_names_nothing_and_never_hangs)
{
	assert_bad_entry_size_names_nothing(0, "libmt-entsize-zero.so");
}
END_TEST

START_TEST(test_symbol_table_with_entry_size_beyond_the_file_names_nothing)
{
	assert_bad_entry_size_names_nothing(0xfffffffffffffff8ull, "libmt-entsize-huge.so");
}
END_TEST

START_TEST(test_thousands_of_frames_in_one_module_are_named_by_their_function)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	static manyfn_t fns[4096];
	size_t nfns = 0, len, named = 0;
	char *line, *save = NULL, *data;
	mt_test_run_t r;

	run_traced(&r, "wl_manyfns", trace, NULL, NULL);
	mt_quiet_int_eq(r.status, 0);
	for (line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long a;

		ck_assert_uint_lt(nfns, 4096);
		mt_quiet_int_eq(sscanf(line, "%15s %llx", fns[nfns].name, &a), 2);
		fns[nfns++].addr = a;
	}
	mt_quiet_uint_eq(nfns, 4096);
	qsort(fns, nfns, sizeof(fns[0]), manyfn_cmp);
	data = mt_test_read(trace, &len);
	ck_assert(data != NULL);
	save = NULL;
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_object *o = json_tokener_parse(line);
		const char *kind, *sym, *off;
		uint64_t ip;
		size_t lo = 0, hi = nfns;

		mt_quiet(o != NULL, "trace line is not JSON: %s", line);
		kind = mt_test_json_opt_str(o, "kind");
		if (!kind || strcmp(kind, "frame")) {
			json_object_put(o);
			continue;
		}
		ip = strtoull(mt_test_json_opt_str(o, "ip"), NULL, 16);
		sym = mt_test_json_opt_str(o, "symbol");
		off = mt_test_json_opt_str(o, "offset");
		/* The frame is a return address inside f_xyz, after its
		 * call to malloc (never its last byte: -O0 code follows). */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (fns[mid].addr <= ip - 1)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo > 0 && lo < nfns) {
			mt_quiet(sym && !strcmp(sym, fns[lo - 1].name),
				 "frame %s: symbol %s, not %s", line, sym ? sym : "(none)",
				 fns[lo - 1].name);
			mt_quiet(off && strtoull(off, NULL, 16) == ip - fns[lo - 1].addr,
				 "frame %s: offset is not %#llx", line,
				 (unsigned long long)(ip - fns[lo - 1].addr));
			named++;
		}
		json_object_put(o);
	}
	/* One frame for each function but the last (whose end the test
	 * does not know). */
	mt_quiet_uint_eq(named, nfns - 1);
	free(data);
	mt_test_run_release(&r);
	free(trace);
}
END_TEST

START_TEST(test_many_frames_read_proc_maps_once_and_never_ask_libunwind)
{
	char module[1024], symbol[256];
	mt_symbol_info_t info;
	mt_symbol_stats_t before, after;
	uint64_t bases[] = {
		(uint64_t)(uintptr_t)&sym_static_fn,
		(uint64_t)(uintptr_t)&getpid,
		(uint64_t)(uintptr_t)&json_tokener_parse,
	};

	mt_symbol_reset();
	mt_symbol_stats(&before);
	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++)
		for (uint64_t d = 1; d <= 2000; d++) {
			mt_symbol_resolve(bases[i] + d, &info, module, sizeof(module),
					  symbol, sizeof(symbol));
			ck_assert(info.has_module);
		}
	mt_symbol_stats(&after);
	mt_quiet_uint_le(after.maps_reads - before.maps_reads, 1);
	mt_quiet_uint_eq(after.fallbacks - before.fallbacks, 0);
}
END_TEST

START_TEST(test_module_without_a_file_is_named_by_libunwind)
{
	uint64_t vdso = getauxval(AT_SYSINFO_EHDR);
	mt_symbol_stats_t before, after;

	if (!vdso)
		return; /* no vDSO on this kernel */
	mt_symbol_reset();
	mt_symbol_stats(&before);
	assert_named_as_libunwind_does(vdso + 0x700, 2048);
	mt_symbol_stats(&after);
	mt_quiet_uint_eq(after.fallbacks - before.fallbacks, 1);
}
END_TEST

Suite *mt_suite_preload(void)
{
	Suite *s = suite_create("preload");
	TCase *tc = tcase_create("workloads");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_every_entry_point_is_recorded_with_its_fn);
	tcase_add_test(tc, test_entry_points_summary_has_exact_counts_and_leak_site);
	tcase_add_test(tc, test_program_output_and_exit_status_are_unchanged);
	tcase_add_test(tc, test_eight_threads_and_the_main_thread_before_them_keep_seq_contiguous_and_counts_exact);
	tcase_add_test(tc, test_fork_and_exec_children_write_their_own_traces);
	tcase_add_test(tc, test_forked_children_take_the_names_their_siblings_gave);
	tcase_add_test(tc, test_stats_say_what_each_start_took);
	tcase_add_test(tc, test_a_sibling_with_another_file_where_one_was_names_its_own_frames);
	tcase_add_test(tc, test_fork_without_handlers_children_leave_the_parents_trace_alone);
	tcase_add_test(tc, test_cxx_new_and_delete_are_recorded);
	tcase_add_test(tc, test_cxx_runtime_pool_is_freed_before_the_stop_of_a_normal_exit);
	tcase_add_test(tc, test_cxx_runtime_pool_stays_live_after_underscore_exit);
	tcase_add_test(tc, test_c_program_without_libstdcxx_is_unaffected_by_freeres);
	tcase_add_test(tc, test_trace_t_follows_clock_monotonic);
	tcase_add_test(tc, test_underscore_exit_writes_stop_and_cuts_the_file);
	tcase_add_test(tc, test_abort_writes_signal_stop_and_still_dies_of_sigabrt);
	tcase_add_test(tc, test_sigkill_after_ready_keeps_every_event_before_it);
	tcase_add_test(tc, test_unwritable_output_warns_once_and_runs_untraced);
	tcase_add_test(tc, test_trace_file_is_private_and_never_follows_a_symlink);
	tcase_add_test(tc, test_dlopen_while_threads_allocate_does_not_deadlock);
	tcase_add_test(tc, test_stack_depth_zero_writes_no_stacks);
	tcase_add_test(tc, test_stack_depth_limits_the_frames_of_each_stack);
	tcase_add_test(tc, test_default_output_is_memtrace_pid_jsonl_zst_in_a_directory_of_its_own);
	tcase_add_test(tc, test_secure_execution_is_never_traced);
	tcase_add_test(tc, test_posix_spawn_and_vfork_children_trace_themselves);
	tcase_add_test(tc, test_allocation_in_an_earlier_constructor_is_traced);
	tcase_add_test(tc, test_a_library_that_binds_its_text_domain_first_keeps_gettext_working);
	tcase_add_test(tc, test_a_program_that_closes_every_descriptor_is_traced_whole);
	tcase_add_test(tc, test_the_preloads_lookups_leave_dlerror_as_it_was);
	tcase_add_test(tc, test_python_allocation_calls_match_heaptrack_within_two_percent);
	tcase_add_test(tc, test_symbols_match_libunwind_for_static_exported_and_library_functions);
	tcase_add_test(tc, test_symbol_index_names_every_address_as_the_scan_of_all_symbols_does);
	tcase_add_test(tc, test_symbol_index_wraps_below_every_symbol_as_the_scan_does);
	tcase_add_test(tc, test_symbol_index_names_from_the_index_and_the_strings_alone);
	tcase_add_test(tc, test_modules_with_an_index_name_frames_as_libunwind_does);
	tcase_add_test(tc, test_a_module_gets_its_index_on_its_eighth_lookup_and_only_when_large);
	tcase_add_test(tc, test_thousands_of_frames_in_one_module_are_named_by_their_function);
	tcase_add_test(tc, test_symbol_table_with_zero_entry_size_names_nothing_and_never_hangs);
	tcase_add_test(tc, test_symbol_table_with_entry_size_beyond_the_file_names_nothing);
	tcase_add_test(tc, test_many_frames_read_proc_maps_once_and_never_ask_libunwind);
	tcase_add_test(tc, test_module_without_a_file_is_named_by_libunwind);
	suite_add_tcase(s, tc);
	return s;
}
