/*
 * check_core: the preload's core (preload/mt_trace.c and the modules under
 * it) driven directly, without LD_PRELOAD: event lines, stacks declared
 * once before use, ordering across threads, write failures, the mapped
 * writer's padding, symbol lookup, the line formatter's limits, trace
 * names and the settings read from MEMTRACE_* values.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <linux/filter.h>
#include <linux/perf_event.h>
#include <linux/seccomp.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/mt_jsonl.h"
#include "../common/mt_register.h"
#include "../common/mt_ring.h"
#include "../preload/mt_clock.h"
#include "../preload/mt_elf.h"
#include "../preload/mt_name.h"
#include "../preload/mt_namecache.h"
#include "../preload/mt_prefault.h"
#include "../preload/mt_record.h"
#include "../preload/mt_sample.h"
#include "../preload/mt_real.h"
#include "../preload/mt_settings.h"
#include "../preload/mt_spawn.h"
#include "../preload/mt_unwind_share.h"
#include "../preload/mt_stack.h"
#include "../preload/mt_symbol.h"
#include "../preload/mt_table.h"
#include "../preload/mt_trace.h"
#include "mt_test.h"
#include "mt_test_trace.h"

/* `memtrace check` or `summary --top 0` on a trace, parsed. */
static json_object *analyze(const char *cmd, const char *trace, int *status)
{
	char *mt = mt_test_memtrace();
	char *argv[] = { mt, (char *)cmd, (char *)trace, "--top", "0", NULL };
	mt_test_run_t r;
	json_object *o;

	if (!strcmp(cmd, "check"))
		argv[3] = NULL;
	mt_test_run(&r, argv, NULL);
	*status = r.status;
	o = json_tokener_parse(r.out);
	mt_quiet(o != NULL, "memtrace %s printed: %s%s", cmd, r.out, r.err);
	mt_test_run_release(&r);
	free(mt);
	return o;
}

/* Wait for the forked child pid, which exits 0 when what it checked
 * held: the test fails with what, and the child's status, otherwise. */
static void child_passes(pid_t pid, const char *what)
{
	int status;

	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	mt_quiet(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s (status %#x)", what, status);
}

static int count(const char *data, const char *needle)
{
	int n = 0;

	for (const char *p = data; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

START_TEST(test_core_trace_of_nothing_is_the_smallest_complete_trace)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	json_object *o;
	char *data;
	int status;

	mt_quiet_int_eq(mt_trace_start(trace, 0), 0);
	ck_assert(mt_trace_active());
	mt_trace_stop("api");
	ck_assert(!mt_trace_active());
	data = mt_test_read(trace, NULL);
	mt_quiet_int_eq(count(data, "\n"), 3);
	ck_assert(!strncmp(data, "{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"", 35));
	mt_quiet_ptr_nonnull(strstr(data, "{\"v\":1,\"seq\":2,\"kind\":\"allocator\",\"allocator_id\":0,\"name\":\"libc\"}\n"));
	mt_quiet_ptr_nonnull(strstr(data, "{\"v\":1,\"seq\":3,\"kind\":\"trace.stop\",\"reason\":\"api\",\"dropped\":0,\"t\":"));
	o = analyze("check", trace, &status);
	mt_quiet_int_eq(status, 0);
	ck_assert_str_eq(mt_test_json_str(o, "status"), "complete");
	json_object_put(o);
	free(data);
	free(trace);
}
END_TEST

/* Stand-ins for the real realloc: they return what the test says. */
static void *fake_result;
static void *fake_realloc(void *p, size_t n)
{
	(void)p;
	(void)n;
	return fake_result;
}

START_TEST(test_core_records_every_event_kind_as_the_spec_names_it)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	json_object *o;
	char *data;
	int status;

	mt_quiet_int_eq(mt_trace_start(trace, 0), 0);
	mt_trace_alloc(MT_FN_MALLOC, (void *)0x1000, 32, 0);
	mt_trace_alloc(MT_FN_POSIX_MEMALIGN, (void *)0x2000, 64, 64);
	mt_trace_alloc_fail(MT_FN_CALLOC, (size_t)1 << 40, 0);
	fake_result = (void *)0x1000;
	mt_quiet_ptr_eq(mt_trace_realloc(MT_FN_REALLOC, (void *)0x1000, 48, fake_realloc),
			(void *)0x1000);                      /* resize */
	fake_result = (void *)0x3000;
	mt_trace_realloc(MT_FN_REALLOC, (void *)0x1000, 4096, fake_realloc); /* remap */
	fake_result = NULL;
	mt_trace_realloc(MT_FN_REALLOC, (void *)0x3000, 100, fake_realloc); /* alloc.fail */
	mt_trace_realloc(MT_FN_REALLOC, (void *)0x3000, 0, fake_realloc);   /* free */
	fake_result = (void *)0x4000;
	mt_trace_realloc(MT_FN_REALLOCARRAY, NULL, 24, fake_realloc);       /* alloc */
	mt_trace_free(MT_FN_FREE, (void *)0x2000);
	mt_trace_stop("api");

	data = mt_test_read(trace, NULL);
	mt_quiet_ptr_nonnull(strstr(data, "\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x1000\",\"size\":32,\"fn\":\"malloc\",\"tid\":"));
	mt_quiet_ptr_nonnull(strstr(data, "\"ptr\":\"0x2000\",\"size\":64,\"fn\":\"posix_memalign\",\"align\":64,"));
	mt_quiet_ptr_nonnull(strstr(data, "\"kind\":\"alloc.fail\",\"allocator_id\":0,\"size\":1099511627776,\"fn\":\"calloc\""));
	mt_quiet_ptr_nonnull(strstr(data, "\"kind\":\"resize\",\"allocator_id\":0,\"ptr\":\"0x1000\",\"size\":48,\"fn\":\"realloc\""));
	mt_quiet_ptr_nonnull(strstr(data, "\"kind\":\"remap\",\"allocator_id\":0,\"ptr\":\"0x1000\",\"new_ptr\":\"0x3000\",\"size\":4096,\"fn\":\"realloc\""));
	mt_quiet_ptr_nonnull(strstr(data, "\"kind\":\"alloc.fail\",\"allocator_id\":0,\"size\":100,\"fn\":\"realloc\""));
	mt_quiet_ptr_nonnull(strstr(data, "\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"0x3000\",\"fn\":\"realloc\""));
	mt_quiet_ptr_nonnull(strstr(data, "\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x4000\",\"size\":24,\"fn\":\"reallocarray\""));
	/* free() writes no fn: optional on a free, and a third of a trace. */
	mt_quiet_ptr_nonnull(strstr(data, "\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"0x2000\",\"tid\":"));
	mt_quiet_ptr_null(strstr(data, "\"fn\":\"free\""));
	o = analyze("summary", trace, &status);
	mt_quiet_int_eq(status, 0);
	ck_assert_str_eq(mt_test_json_str(o, "status"), "complete");
	mt_quiet_int_eq(mt_test_json_i64(o, "allocations"), 3);
	mt_quiet_int_eq(mt_test_json_i64(o, "resizes"), 1);
	mt_quiet_int_eq(mt_test_json_i64(o, "remaps"), 1);
	mt_quiet_int_eq(mt_test_json_i64(o, "frees"), 2);
	mt_quiet_int_eq(mt_test_json_i64(o, "failed_allocations"), 2);
	mt_quiet_int_eq(mt_test_json_i64(o, "live_bytes"), 24);
	json_object_put(o);
	free(data);
	free(trace);
}
END_TEST

static __attribute__((noinline)) void static_site(int i)
{
	mt_trace_alloc(MT_FN_MALLOC, (void *)(uintptr_t)(0x10000 + 16 * i), 8, 0);
	__asm__ volatile(""); /* keep the call from being a tail call */
}

START_TEST(test_core_declares_each_frame_and_stack_once_before_use)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	json_object *o;
	char *data;
	int status;

	volatile int calls = 5; /* not a constant: the loop stays a loop */

	mt_quiet_int_eq(mt_trace_start(trace, 16), 0);
	for (int i = 0; i < calls; i++)
		static_site(i);
	mt_trace_stop("api");
	data = mt_test_read(trace, NULL);
	/* Five allocations from one call site: one stack, written once. */
	mt_quiet_int_eq(count(data, "\"kind\":\"alloc\""), 5);
	mt_quiet_int_eq(count(data, "\"kind\":\"stack\""), 1);
	mt_quiet_ptr_nonnull(strstr(data, "\"symbol\":\"static_site\""));
	ck_assert(strstr(data, "\"kind\":\"frame\"") < strstr(data, "\"kind\":\"stack\""));
	ck_assert(strstr(data, "\"kind\":\"stack\"") < strstr(data, "\"kind\":\"alloc\""));
	/* The analyzer checks every id is declared before it is used. */
	o = analyze("summary", trace, &status);
	ck_assert_str_eq(mt_test_json_str(o, "status"), "complete");
	mt_quiet_int_eq(mt_test_json_i64(o, "malformed_events"), 0);
	mt_quiet_int_eq(mt_test_json_i64(o, "allocations"), 5);
	json_object_put(o);
	free(data);
	free(trace);
}
END_TEST

START_TEST(test_core_ignores_events_after_stop)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	size_t before, after;
	char *data;

	mt_quiet_int_eq(mt_trace_start(trace, 0), 0);
	mt_trace_stop("api");
	free(mt_test_read(trace, &before));
	mt_trace_alloc(MT_FN_MALLOC, (void *)0x1000, 32, 0);
	mt_trace_free(MT_FN_FREE, (void *)0x1000);
	mt_trace_stop("exit");
	data = mt_test_read(trace, &after);
	mt_quiet_uint_eq(before, after);
	free(data);
	free(trace);
}
END_TEST

/*
 * A file that may grow no further (RLIMIT_FSIZE of 8 KiB: no 16 MiB
 * window fits) keeps every whole line that fits, from trace.start on,
 * says so once on stderr, and stops tracing; the writer never asks past
 * the limit, so no SIGXFSZ kills the program (it is left at its default,
 * which would end this test).
 */
START_TEST(test_core_write_failure_keeps_what_fits_warns_once_and_stops_tracing)
{
	char *dir = mt_test_scratch(), *err = mt_test_path(dir, "stderr");
	int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600), saved = dup(2);
	char *data, *trace = mt_test_path(dir, "t.jsonl");
	struct rlimit small, old;
	size_t len;
	int events = 0;

	ck_assert_int_ge(fd, 0);
	dup2(fd, 2);
	signal(SIGXFSZ, SIG_DFL);
	mt_quiet_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	small = (struct rlimit){ 8192, old.rlim_max };
	mt_quiet_int_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
	mt_quiet_int_eq(mt_trace_start(trace, 0), 0);
	while (events < 10000) {
		mt_trace_alloc(MT_FN_MALLOC, (void *)0x1000, 32, 0);
		mt_trace_free(MT_FN_FREE, (void *)0x1000);
		events += 2;
	}
	mt_trace_stop("exit");
	setrlimit(RLIMIT_FSIZE, &old);
	dup2(saved, 2);
	close(fd);
	data = mt_test_read(err, NULL);
	mt_quiet_int_eq(count(data, "memtrace: cannot write the trace: File too large"), 1);
	mt_quiet_int_eq(count(data, "\n"), 1);
	free(data);
	/* Whole lines, as many as 8 KiB holds: the last event that did not
	 * fit is no part of it. */
	mt_test_assert_trace_cut(trace);
	free(mt_test_read(trace, &len));
	mt_quiet_uint_le(len, 8192);
	mt_quiet_uint_ge(len, 8192 - 200);
	mt_quiet_uint_ge((uintmax_t)mt_test_trace_count(trace, "alloc", 32), 20);
	free(trace);
	free(err);
}
END_TEST

#define THREADS 8
#define PER_THREAD 5000

static void *thread_main(void *arg)
{
	uintptr_t base = 0x100000 * (1 + (uintptr_t)arg);

	for (int i = 0; i < PER_THREAD; i++) {
		mt_trace_alloc(MT_FN_MALLOC, (void *)(base + 16 * (uintptr_t)i), 16, 0);
		mt_trace_free(MT_FN_FREE, (void *)(base + 16 * (uintptr_t)i));
	}
	return NULL;
}

START_TEST(test_core_threads_share_one_contiguous_seq)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	pthread_t t[THREADS];
	json_object *o;
	int status;

	mt_quiet_int_eq(mt_trace_start(trace, 4), 0);
	for (int i = 0; i < THREADS; i++)
		mt_quiet_int_eq(pthread_create(&t[i], NULL, thread_main, (void *)(uintptr_t)i), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	mt_trace_stop("api");
	/* complete means every seq once, in order, no line broken. */
	o = analyze("summary", trace, &status);
	ck_assert_str_eq(mt_test_json_str(o, "status"), "complete");
	mt_quiet_int_eq(mt_test_json_i64(o, "allocations"), THREADS * PER_THREAD);
	mt_quiet_int_eq(mt_test_json_i64(o, "frees"), THREADS * PER_THREAD);
	mt_quiet_int_eq(mt_test_json_i64(o, "threads"), THREADS);
	mt_quiet_int_eq(mt_test_json_i64(o, "unknown_frees"), 0);
	json_object_put(o);
	free(trace);
}
END_TEST

/* A thread that asked for SIGSEGV on RDTSC, then records its events:
 * mt_clock must say it may not read the TSC.  (Where a hypervisor lets
 * RDTSC through anyway the crash cannot show; the answer is checked.) */
static void *no_tsc_thread_main(void *arg)
{
	if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV) != 0)
		_exit(3);
	mt_clock_thread_tsc_changed(); /* what the preload's prctl hook does */
	if (mt_clock_thread_tsc_ok())
		_exit(4);
	return thread_main(arg);
}

/*
 * Threads that asked prctl(PR_SET_TSC, PR_TSC_SIGSEGV) wait for the trace
 * lock and read the clock without RDTSC: the waiter times nothing there,
 * and the clock makes the clock_gettime system call (the vDSO's would
 * execute RDTSC where the clocksource is the TSC), either way of waiting.
 * (RDTSC in such a thread is SIGSEGV: the child dies of it.)
 */
START_TEST(test_core_threads_that_forbid_rdtsc_are_traced_without_it)
{
	{
		char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
		json_object *o;
		pid_t pid;
		int status;

		pid = fork();
		mt_quiet(pid >= 0, "fork: %s", strerror(errno));
		if (pid == 0) {
			pthread_t t[THREADS];

			alarm(60);
#if defined(__x86_64__)
			if (!mt_clock_thread_tsc_ok())
				_exit(5);
#endif
			if (mt_trace_start(trace, 4) != 0)
				_exit(2);
			for (int i = 0; i < THREADS; i++)
				if (pthread_create(&t[i], NULL, no_tsc_thread_main,
						   (void *)(uintptr_t)i))
					_exit(2);
			for (int i = 0; i < THREADS; i++)
				pthread_join(t[i], NULL);
			mt_trace_stop("api");
			_exit(0);
		}
		mt_quiet_int_eq(waitpid(pid, &status, 0), pid);
		mt_quiet(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			 "the child ended with status %#x", status);
		o = analyze("summary", trace, &status);
		ck_assert_str_eq(mt_test_json_str(o, "status"), "complete");
		mt_quiet_int_eq(mt_test_json_i64(o, "allocations"), THREADS * PER_THREAD);
		json_object_put(o);
		free(trace);
	}
}
END_TEST

/* A thread whose first answer was yes and that forbids RDTSC later: once
 * told (the hooks tell on prctl and syscall), mt_clock asks again and says
 * no, and its readings still come. */
static void *forbid_later_main(void *arg)
{
	(void)arg;
	if (!mt_clock_thread_tsc_ok())
		return (void *)1;
	if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV) != 0)
		return (void *)2;
	mt_clock_thread_tsc_changed();
	if (mt_clock_thread_tsc_ok())
		return (void *)3;
	if (!mt_clock_now() || !mt_clock_realtime())
		return (void *)4;
	return NULL;
}

START_TEST(test_core_a_thread_that_forbids_rdtsc_later_is_asked_again)
{
#if defined(__x86_64__)
	pthread_t t;
	void *rc;

	mt_quiet_int_eq(pthread_create(&t, NULL, forbid_later_main, NULL), 0);
	pthread_join(t, &rc);
	mt_quiet(rc == NULL, "the thread ended with %ld", (long)(intptr_t)rc);
#else
	MT_TEST_SKIP("RDTSC is x86-64's (not this machine)");
#endif
}
END_TEST

/* t is taken before the slot is reserved, so threads reserve out of
 * their clocks' order: the trace's t must still never go back from one
 * line to the next (the collector holds it up). */
START_TEST(test_core_threads_write_t_in_seq_order)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	pthread_t t[THREADS];
	unsigned long long last = 0, lines = 0;
	char *data, *line, *save = NULL;

	mt_quiet_int_eq(mt_trace_start(trace, 4), 0);
	for (int i = 0; i < THREADS; i++)
		mt_quiet_int_eq(pthread_create(&t[i], NULL, thread_main, (void *)(uintptr_t)i), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	mt_trace_stop("api");
	data = mt_test_read(trace, NULL);
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *at = strstr(line, ",\"t\":");
		unsigned long long v;

		lines++;
		if (!at)
			continue;
		v = strtoull(at + 5, NULL, 10);
		mt_quiet(v >= last, "line %llu: t %llu after %llu", lines, v, last);
		last = v;
	}
	mt_quiet_uint_ge(lines, 2 * THREADS * PER_THREAD);
	free(data);
	free(trace);
}
END_TEST

/* The parts fit the room mt_jsonl.h gives each. */
static void block_parts_fit_their_rooms(size_t hn, size_t tn, size_t line)
{
	mt_quiet_uint_le(hn, MT_JSONL_BLOCK_HEAD_MAX);
	mt_quiet_uint_le(tn, MT_JSONL_BLOCK_TAIL_MAX);
	mt_quiet_uint_le(line, MT_JSONL_BLOCK_MAX);
}

/* The hot path's fixed layout writes what the checked appenders write. */
START_TEST(test_jsonl_block_layout_is_the_appenders_bytes)
{
	static const struct {
		mt_kind_t kind;
		int fn, ptr, new_ptr, size;
		uint64_t align, stack, fail_at;
	} cases[] = {
		{ MT_KIND_ALLOC, MT_FN_MALLOC, 1, 0, 1, 0, 7, 0 },
		{ MT_KIND_ALLOC, MT_FN_POSIX_MEMALIGN, 1, 0, 1, 64, 12345, 0 },
		{ MT_KIND_ALLOC, MT_FN_CALLOC, 1, 0, 1, 0, 0, 0 },
		{ MT_KIND_FREE, MT_FN_COUNT, 1, 0, 0, 0, 0, 0 },
		{ MT_KIND_FREE, MT_FN_REALLOC, 1, 0, 0, 0, 0, 0 },
		{ MT_KIND_RESIZE, MT_FN_REALLOCARRAY, 1, 0, 1, 0, 3, 0 },
		{ MT_KIND_REMAP, MT_FN_REALLOC, 1, 1, 1, 0, 99, 0 },
		{ MT_KIND_ALLOC_FAIL, MT_FN_PVALLOC, 0, 0, 1, 4096, 1, 18 },
		{ MT_KIND_ALLOC_FAIL, MT_FN_VALLOC, 0, 0, 1, 4096, 0, UINT64_MAX },
		/* No event has them all, but the room is sized for it: the
		 * longest kind and fn, every field, every number at its
		 * longest (a head of 194 bytes, once over its room of 192). */
		{ MT_KIND_TRACE_START, MT_FN_POSIX_MEMALIGN, 1, 1, 1, UINT64_MAX,
		  UINT64_MAX, UINT64_MAX },
	};
	static const uint64_t values[] = { 0, 1, 9, 10, 99, 100, 12345678, 99999999,
					   100000000, 0x7f3a5c001230ull,
					   10000000000000000ull, UINT64_MAX };
	const size_t nv = sizeof(values) / sizeof(values[0]);

	for (int fn = 0; fn < MT_FN_COUNT; fn++) {
		mt_jsonl_block_t ev = { .kind = MT_KIND_ALLOC, .fn = (mt_fn_t)fn };
		char head[MT_JSONL_BLOCK_HEAD_MAX], want[64];
		size_t n = mt_jsonl_block_head(head, &ev);

		snprintf(want, sizeof(want), ",\"fn\":\"%s\"", mt_event_fn_name((mt_fn_t)fn));
		mt_quiet_uint_ge(n, strlen(want));
		ck_assert(!memcmp(head + n - strlen(want), want, strlen(want)));
	}
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		for (size_t i = 0; i < nv; i++) {
			uint64_t v = values[i], w = values[nv - 1 - i];
			mt_jsonl_block_t ev = {
				.kind = cases[c].kind, .fn = (mt_fn_t)cases[c].fn,
				.has_ptr = cases[c].ptr, .has_new_ptr = cases[c].new_ptr,
				.has_size = cases[c].size, .allocator_id = i % 3 ? 0 : v,
				.ptr = v, .new_ptr = w, .size = w,
				.align = cases[c].align, .fail_at = cases[c].fail_at,
				.tid = v,
			};
			char head[MT_JSONL_BLOCK_HEAD_MAX], tail[MT_JSONL_BLOCK_TAIL_MAX];
			char fast[MT_JSONL_BLOCK_MAX], slow[1024];
			size_t hn = mt_jsonl_block_head(head, &ev);
			size_t tn = mt_jsonl_block_tail(tail, &ev);
			size_t fn = mt_jsonl_block_line(fast, w, &ev, cases[c].stack,
							tail, tn, v);
			size_t sn;
			mt_jsonl_t l;

			block_parts_fit_their_rooms(hn, tn, fn);
			mt_jsonl_begin(&l, slow, sizeof(slow), w, mt_event_kind_name(ev.kind));
			mt_jsonl_u64(&l, "allocator_id", ev.allocator_id);
			if (ev.has_ptr)
				mt_jsonl_hex(&l, "ptr", ev.ptr);
			if (ev.has_new_ptr)
				mt_jsonl_hex(&l, "new_ptr", ev.new_ptr);
			if (ev.has_size)
				mt_jsonl_u64(&l, "size", ev.size);
			if (ev.fn < MT_FN_COUNT)
				mt_jsonl_str(&l, "fn", mt_event_fn_name(ev.fn),
					     strlen(mt_event_fn_name(ev.fn)), 0);
			if (ev.align)
				mt_jsonl_u64(&l, "align", ev.align);
			if (cases[c].stack)
				mt_jsonl_u64(&l, "stack", cases[c].stack);
			if (ev.fail_at)
				mt_jsonl_u64(&l, "fail_at", ev.fail_at);
			mt_jsonl_u64(&l, "tid", ev.tid);
			mt_jsonl_u64(&l, "t", v);
			sn = mt_jsonl_end(&l);
			ck_assert(!l.truncated);
			mt_quiet(fn == sn && !memcmp(fast, slow, sn),
				 "case %zu value %zu:\n%.*s%.*s", c, i, (int)fn, fast,
				 (int)sn, slow);
		}
	}
	{
		/* Every field at once at its longest: the rooms still hold it. */
		mt_jsonl_block_t ev = {
			.kind = MT_KIND_TRACE_START, .fn = MT_FN_POSIX_MEMALIGN,
			.has_ptr = 1, .has_new_ptr = 1, .has_size = 1,
			.allocator_id = UINT64_MAX, .ptr = UINT64_MAX,
			.new_ptr = UINT64_MAX, .size = UINT64_MAX, .align = UINT64_MAX,
			.fail_at = UINT64_MAX, .tid = UINT64_MAX,
		};
		char head[MT_JSONL_BLOCK_HEAD_MAX], tail[MT_JSONL_BLOCK_TAIL_MAX];
		char line[MT_JSONL_BLOCK_MAX];
		size_t hn = mt_jsonl_block_head(head, &ev);
		size_t tn = mt_jsonl_block_tail(tail, &ev), n;

		mt_quiet_uint_eq(hn, 194);
		mt_quiet_uint_eq(tn, 58);
		n = mt_jsonl_block_line(line, UINT64_MAX, &ev, UINT64_MAX, tail, tn,
					UINT64_MAX);
		block_parts_fit_their_rooms(hn, tn, n);
		ck_assert(!memcmp(line + n - 2, "}\n", 2));
	}
}
END_TEST

static __attribute__((noinline)) int a_static_function(int x)
{
	return x * 3 + 1;
}

START_TEST(test_symbols_name_static_functions_and_their_module)
{
	char module[1024], symbol[2048], self[4096];
	mt_symbol_info_t info;
	uint64_t ip = (uint64_t)(uintptr_t)&a_static_function + 4;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	mt_quiet_int_eq(a_static_function(1), 4);
	ck_assert_int_gt(n, 0);
	self[n] = '\0';
	mt_symbol_resolve(ip, &info, module, sizeof(module), symbol, sizeof(symbol));
	ck_assert(info.has_symbol);
	ck_assert_str_eq(symbol, "a_static_function");
	mt_quiet_uint_eq(info.offset, 4);
	ck_assert(info.has_module);
	ck_assert_str_eq(module, self);
}
END_TEST

START_TEST(test_symbols_read_a_modules_headers_when_a_frame_in_it_is_first_named)
{
	char module[1024], symbol[2048];
	mt_symbol_stats_t s0, s1, s2, s3;
	mt_symbol_info_t info;
	uint64_t ip = (uint64_t)(uintptr_t)&a_static_function + 4;
	uint64_t in_libc = (uint64_t)(uintptr_t)&strtoull + 4;

	mt_symbol_reset();
	mt_symbol_stats(&s0);
	mt_symbol_load();
	mt_symbol_stats(&s1);
	mt_quiet_uint_eq(s1.maps_reads - s0.maps_reads, 1);
	mt_quiet_uint_eq(s1.headers_read - s0.headers_read, 0);
	mt_symbol_resolve(ip, &info, module, sizeof(module), symbol, sizeof(symbol));
	mt_symbol_resolve(ip + 1, &info, module, sizeof(module), symbol, sizeof(symbol));
	ck_assert_str_eq(symbol, "a_static_function");
	mt_symbol_stats(&s2);
	mt_quiet_uint_eq(s2.headers_read - s0.headers_read, 1);
	mt_symbol_resolve(in_libc, &info, module, sizeof(module), symbol, sizeof(symbol));
	ck_assert(info.has_module);
	ck_assert_ptr_nonnull(strstr(module, "libc"));
	mt_symbol_stats(&s3);
	mt_quiet_uint_eq(s3.headers_read - s0.headers_read, 2);
	mt_quiet_uint_eq(s3.maps_reads - s0.maps_reads, 1);
}
END_TEST

START_TEST(test_symbols_read_the_module_table_at_the_first_frame_named)
{
	char module[1024], symbol[2048];
	mt_symbol_stats_t s0, s1, s2;
	mt_symbol_info_t info;
	uint64_t ip = (uint64_t)(uintptr_t)&a_static_function + 4;

	mt_symbol_reset();
	mt_symbol_stats(&s0);
	mt_symbol_resolve(ip, &info, module, sizeof(module), symbol, sizeof(symbol));
	ck_assert_str_eq(symbol, "a_static_function");
	mt_symbol_stats(&s1);
	mt_quiet_uint_eq(s1.maps_reads - s0.maps_reads, 1);
	mt_symbol_resolve((uint64_t)(uintptr_t)&strtoull + 4, &info, module, sizeof(module),
			  symbol, sizeof(symbol));
	mt_symbol_stats(&s2);
	mt_quiet_uint_eq(s2.maps_reads - s0.maps_reads, 1);
}
END_TEST

/* A name as mt_symbol gives it: a symbol at offset, and a build id. */
static mt_symbol_info_t cache_info(uint64_t offset, size_t symbol_len)
{
	mt_symbol_info_t info = { .has_symbol = 1, .offset = offset, .symbol_len = symbol_len,
				  .build_id = { 0xab, 0xcd, 0xef }, .build_id_len = 3 };

	return info;
}

START_TEST(test_name_cache_answers_only_for_the_same_address_in_the_same_file)
{
	mt_namecache_key_t key = { 0x401234, 0x400000, 8, 77, 0x5eed }, other;
	mt_symbol_info_t kept = cache_info(0x34, 11), got;
	char symbol[64];
	uint64_t found, added;

	mt_namecache_reset();
	/* No fork yet: no cache, nothing kept. */
	mt_namecache_add(&key, &kept, "wl_function");
	ck_assert(!mt_namecache_find(&key, &got, symbol, sizeof(symbol)));
	mt_namecache_fork_prepare();
	mt_namecache_add(&key, &kept, "wl_function");
	memset(&got, 0, sizeof(got));
	ck_assert(mt_namecache_find(&key, &got, symbol, sizeof(symbol)));
	ck_assert_str_eq(symbol, "wl_function");
	ck_assert(got.has_symbol);
	mt_quiet_uint_eq(got.symbol_len, 11);
	mt_quiet_uint_eq(got.offset, 0x34);
	mt_quiet_uint_eq(got.build_id_len, 3);
	ck_assert(!memcmp(got.build_id, kept.build_id, 3));
	/* A smaller buffer cuts it as mt_symbol_resolve would. */
	ck_assert(mt_namecache_find(&key, &got, symbol, 5));
	ck_assert_str_eq(symbol, "wl_f");
	mt_quiet_uint_eq(got.symbol_len, 4);
	/* Another file, load bias or address: not this name. */
	for (int i = 0; i < 5; i++) {
		other = key;
		if (i == 0)
			other.ip++;
		else if (i == 1)
			other.bias += 0x1000;
		else if (i == 2)
			other.dev++;
		else if (i == 3)
			other.inode++;
		else
			other.path_hash++;
		ck_assert_msg(!mt_namecache_find(&other, &got, symbol, sizeof(symbol)),
			      "found with key field %d changed", i);
	}
	mt_namecache_counts(&found, &added);
	mt_quiet_uint_eq(found, 2);
	mt_quiet_uint_eq(added, 1);
	mt_namecache_reset();
}
END_TEST

START_TEST(test_name_cache_is_shared_with_every_child_forked_since)
{
	mt_namecache_key_t by_parent = { 0x501000, 0x500000, 8, 78, 1 };
	mt_namecache_key_t by_child = { 0x601000, 0x600000, 8, 79, 2 };
	mt_symbol_info_t info = cache_info(0x10, 6), got;
	char symbol[64];
	int status;
	pid_t pid;

	mt_namecache_reset();
	mt_namecache_fork_prepare();
	mt_namecache_add(&by_parent, &info, "parent");
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* The parent's name, and one for the parent. */
		int ok = mt_namecache_find(&by_parent, &got, symbol, sizeof(symbol)) &&
			 !strcmp(symbol, "parent");

		mt_namecache_add(&by_child, &info, "childs");
		_exit(ok ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert(mt_namecache_find(&by_child, &got, symbol, sizeof(symbol)));
	ck_assert_str_eq(symbol, "childs");
	mt_namecache_reset();
}
END_TEST

START_TEST(test_name_cache_keeps_nothing_more_once_full)
{
	char symbol[512], got_symbol[512];
	mt_symbol_info_t info = cache_info(1, 300), got;
	mt_namecache_key_t key = { 0, 0x700000, 8, 80, 3 };
	int kept = 0;

	memset(symbol, 'x', 300);
	symbol[300] = '\0';
	mt_namecache_reset();
	mt_namecache_fork_prepare();
	for (int i = 1; i <= 2000; i++) {
		key.ip = 0x700000 + (uint64_t)i * 16;
		mt_namecache_add(&key, &info, symbol);
	}
	for (int i = 1; i <= 2000; i++) {
		key.ip = 0x700000 + (uint64_t)i * 16;
		if (mt_namecache_find(&key, &got, got_symbol, sizeof(got_symbol))) {
			ck_assert_str_eq(got_symbol, symbol);
			kept++;
		}
	}
	/* Some, not all: 64 KiB holds about 150 names of 300 bytes. */
	mt_quiet(kept > 50 && kept < 2000, "%d names of 2000 kept", kept);
	key.ip = 0x700000 + 16;
	ck_assert(mt_namecache_find(&key, &got, got_symbol, sizeof(got_symbol)));
	mt_namecache_reset();
}
END_TEST

/* Four processes add the same 300 names at once, and read them back
 * while the others add: each name found is whole and its own. */
START_TEST(test_name_cache_shared_by_processes_adding_at_once_gives_whole_names)
{
	enum { PROCS = 4, NAMES = 300 };
	pid_t pids[PROCS];

	mt_namecache_reset();
	mt_namecache_fork_prepare();
	for (int p = 0; p < PROCS; p++) {
		pids[p] = fork();
		ck_assert_int_ge(pids[p], 0);
		if (pids[p] == 0) {
			int bad = 0;

			for (int round = 0; round < 2; round++)
				for (int i = 1; i <= NAMES; i++) {
					int k = round ? NAMES + 1 - i : (i * 7 + p * 31) % NAMES + 1;
					mt_namecache_key_t key = { 0x800000 + (uint64_t)k * 64, 0x800000,
								   8, 81, 4 };
					mt_symbol_info_t info = cache_info((uint64_t)k, 0), got;
					char symbol[32], want[32];

					snprintf(want, sizeof(want), "name_%d", k);
					info.symbol_len = strlen(want);
					mt_namecache_add(&key, &info, want);
					if (mt_namecache_find(&key, &got, symbol, sizeof(symbol)) &&
					    (strcmp(symbol, want) || got.offset != (uint64_t)k ||
					     got.build_id_len != 3))
						bad++;
				}
			_exit(bad ? 1 : 0);
		}
	}
	for (int p = 0; p < PROCS; p++) {
		int status;

		ck_assert_int_eq(waitpid(pids[p], &status, 0), pids[p]);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "process %d found a name not its key's", p);
	}
	for (int k = 1; k <= NAMES; k++) {
		mt_namecache_key_t key = { 0x800000 + (uint64_t)k * 64, 0x800000, 8, 81, 4 };
		mt_symbol_info_t got;
		char symbol[32], want[32];

		snprintf(want, sizeof(want), "name_%d", k);
		ck_assert_msg(mt_namecache_find(&key, &got, symbol, sizeof(symbol)),
			      "name %d not kept", k);
		ck_assert_str_eq(symbol, want);
	}
	mt_namecache_reset();
}
END_TEST

/* A program about to install a seccomp filter may refuse the mapping
 * later: the cache is made at the lock-down, before any fork. */
START_TEST(test_name_cache_is_made_when_the_program_locks_down)
{
	mt_namecache_key_t key = { 0x901000, 0x900000, 8, 82, 5 };
	mt_symbol_info_t info = cache_info(2, 4), got;
	char symbol[16];

	mt_namecache_reset();
	mt_namecache_lock_down();
	mt_namecache_add(&key, &info, "kept");
	ck_assert(mt_namecache_find(&key, &got, symbol, sizeof(symbol)));
	ck_assert_str_eq(symbol, "kept");
	/* A fork after it keeps that one. */
	mt_namecache_fork_prepare();
	ck_assert(mt_namecache_find(&key, &got, symbol, sizeof(symbol)));
	mt_namecache_reset();
}
END_TEST

/* The lock-down of naming (the hooks' and a filtered start's one call)
 * makes the name cache with the module table.  In a child: the module
 * table stays locked down for the rest of the process. */
START_TEST(test_symbols_lock_down_makes_the_name_cache)
{
	mt_namecache_key_t key = { 0x902000, 0x900000, 8, 83, 6 };
	mt_symbol_info_t info = cache_info(3, 5), got;
	char symbol[16];
	pid_t pid;

	mt_namecache_reset();
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		mt_symbol_lock_down();
		mt_namecache_add(&key, &info, "kept");
		_exit(mt_namecache_find(&key, &got, symbol, sizeof(symbol)) &&
			      !strcmp(symbol, "kept") ? 0 : 1);
	}
	child_passes(pid, "no name kept after the lock-down");
}
END_TEST

START_TEST(test_symbols_take_a_kept_name_without_reading_the_module)
{
	char module[1024], symbol[2048], first_module[1024];
	mt_symbol_stats_t s0, s1;
	mt_symbol_info_t first, info;
	uint64_t ip = (uint64_t)(uintptr_t)&a_static_function + 4, found, added;

	mt_namecache_reset();
	mt_namecache_fork_prepare();
	mt_symbol_reset();
	mt_symbol_resolve(ip, &first, first_module, sizeof(first_module), symbol, sizeof(symbol));
	ck_assert_str_eq(symbol, "a_static_function");
	/* Every view gone, as in a child that never opened one. */
	mt_symbol_reset();
	mt_symbol_load();
	mt_symbol_stats(&s0);
	mt_symbol_resolve(ip, &info, module, sizeof(module), symbol, sizeof(symbol));
	mt_symbol_stats(&s1);
	mt_quiet_uint_eq(s1.headers_read - s0.headers_read, 0);
	mt_quiet_uint_eq(s1.indexed - s0.indexed, 0);
	ck_assert_str_eq(symbol, "a_static_function");
	ck_assert_str_eq(module, first_module);
	ck_assert(info.has_symbol && info.has_module);
	mt_quiet_uint_eq(info.offset, first.offset);
	mt_quiet_uint_eq(info.module_offset, first.module_offset);
	mt_quiet_uint_eq(info.build_id_len, first.build_id_len);
	ck_assert(!memcmp(info.build_id, first.build_id, first.build_id_len));
	mt_namecache_counts(&found, &added);
	mt_quiet_uint_eq(found, 1);
	mt_quiet_uint_eq(added, 1);
	mt_namecache_reset();
}
END_TEST

START_TEST(test_real_arena_serves_bootstrap_memory_zeroed_and_aligned)
{
	unsigned char *p = mt_real_arena_alloc(100, 64);

	mt_quiet_ptr_nonnull(p);
	mt_quiet_uint_eq((uintptr_t)p % 64, 0);
	for (int i = 0; i < 100; i++)
		mt_quiet_int_eq(p[i], 0);
	ck_assert(mt_real_in_arena(p));
	ck_assert(!mt_real_in_arena(&p));
	mt_quiet_ptr_null(mt_real_arena_alloc((size_t)1 << 30, 16));
}
END_TEST

/* The blocks glibc gives each thread's libunwind storage come and go
 * with the threads: the arena takes a freed block back, and gives it out
 * zeroed for the next request of its size. */
START_TEST(test_real_arena_gives_a_freed_block_out_again_zeroed)
{
	unsigned char *p = mt_real_arena_alloc(24, 16), *q, *wide, *again;

	mt_quiet_ptr_nonnull(p);
	mt_quiet_uint_eq((uintptr_t)p % 16, 0);
	ck_assert_uint_ge(mt_real_arena_size(p), 24);
	memset(p, 0xab, 24);
	mt_real_arena_free(p);
	q = mt_real_arena_alloc(20, 16);
	ck_assert_ptr_eq(q, p);
	for (int i = 0; i < 24; i++)
		mt_quiet_int_eq(q[i], 0);
	/* A block made to a wider alignment stays where it is. */
	wide = mt_real_arena_alloc(100, 64);
	mt_quiet_ptr_nonnull(wide);
	memset(wide, 0xcd, 100);
	mt_real_arena_free(wide);
	again = mt_real_arena_alloc(100, 64);
	mt_quiet_ptr_nonnull(again);
	ck_assert_ptr_ne(again, wide);
	mt_quiet_int_eq(wide[0], 0xcd);
}
END_TEST

START_TEST(test_jsonl_long_strings_are_cut_validly_and_marked)
{
	static char big[20000];
	char buf[4096];
	mt_jsonl_t l;
	json_object *o, *v;
	size_t len;

	memset(big, 'a', sizeof(big));
	/* A multi-byte character right where the cut falls. */
	memcpy(big + 3990, "\xc3\xa9\xc3\xa9\xc3\xa9", 6);
	mt_jsonl_begin(&l, buf, sizeof(buf), 7, "frame");
	mt_jsonl_u64(&l, "frame_id", 1);
	mt_jsonl_str(&l, "symbol", big, sizeof(big), 0);
	len = mt_jsonl_end(&l);
	mt_quiet_uint_le(len, sizeof(buf));
	ck_assert(l.truncated);
	ck_assert(!memcmp(buf + len - 6, "...\"}\n", 6));
	{
		json_tokener *tok = json_tokener_new();

		json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
		o = json_tokener_parse_ex(tok, buf, (int)len - 1);
		json_tokener_free(tok);
	}
	mt_quiet(o != NULL, "cut line is not valid JSON");
	ck_assert(json_object_object_get_ex(o, "symbol", &v));
	json_object_put(o);
}
END_TEST

START_TEST(test_jsonl_escapes_controls_and_replaces_bad_utf8)
{
	char buf[1024];
	mt_jsonl_t l;
	size_t len;

	mt_jsonl_begin(&l, buf, sizeof(buf), 1, "frame");
	mt_jsonl_str(&l, "symbol", "a\"b\\c\n\x01\xff\xc3\xa9", 10, 0);
	len = mt_jsonl_end(&l);
	buf[len] = '\0';
	ck_assert_str_eq(buf, "{\"v\":1,\"seq\":1,\"kind\":\"frame\",\"symbol\":\"a\\\"b\\\\c\\u000a\\u0001?\xc3\xa9\"}\n");
	ck_assert(!l.truncated);
}
END_TEST

/* The fork protocol of mt_stack (preload/mt_stack.c): a thread in the
 * middle of an unwind holds the fork's prepare handler back until it
 * ends; once prepared, a new unwind waits for the parent's handler. */
typedef struct {
	atomic_int entered, release, done;
} unwind_hold_t;

static void hold_unwind(void *arg)
{
	unwind_hold_t *h = arg;

	atomic_store(&h->entered, 1);
	while (!atomic_load(&h->release))
		usleep(1000);
}

static void *unwind_thread(void *arg)
{
	unwind_hold_t *h = arg;

	mt_stack_as_unwind(hold_unwind, h);
	atomic_store(&h->done, 1);
	return NULL;
}

static void *prepare_thread(void *arg)
{
	atomic_int *prepared = arg;

	mt_stack_fork_prepare();
	atomic_store(prepared, 1);
	return NULL;
}

/* How long a thread that should stay blocked is given to show it does
 * not: long enough for any scheduler, short for the suite. */
#define BLOCKED_US 50000

START_TEST(test_stack_fork_waits_for_every_unwind_under_way)
{
	/* Three at once, each on a shard of its own (they are given round
	 * robin), so the prepare handler must add them all up. */
	unwind_hold_t h[3];
	pthread_t t[3], prep;
	atomic_int prepared = 0;

	memset(h, 0, sizeof(h));
	for (int i = 0; i < 3; i++) {
		mt_quiet_int_eq(pthread_create(&t[i], NULL, unwind_thread, &h[i]), 0);
		while (!atomic_load(&h[i].entered))
			usleep(1000);
	}
	mt_quiet_int_eq(pthread_create(&prep, NULL, prepare_thread, &prepared), 0);
	for (int i = 0; i < 3; i++) {
		usleep(BLOCKED_US);
		mt_quiet(!atomic_load(&prepared),
			 "the fork was prepared with %d unwinds under way", 3 - i);
		atomic_store(&h[i].release, 1);
		pthread_join(t[i], NULL);
	}
	pthread_join(prep, NULL);
	mt_quiet_int_eq(atomic_load(&prepared), 1);
	mt_stack_fork_parent();
}
END_TEST

/* Past SHARDS threads, threads share shards: the fork waits for their
 * unwinds too, to the last. */
#define MANY_UNWINDERS 76 /* SHARDS (64), and twelve sharing */

START_TEST(test_stack_fork_waits_for_unwinds_in_shared_shards)
{
	unwind_hold_t *h = calloc(MANY_UNWINDERS, sizeof(*h));
	pthread_t t[MANY_UNWINDERS], prep;
	atomic_int prepared = 0;

	ck_assert_ptr_nonnull(h);
	for (int i = 0; i < MANY_UNWINDERS; i++) {
		mt_quiet_int_eq(pthread_create(&t[i], NULL, unwind_thread, &h[i]), 0);
		while (!atomic_load(&h[i].entered))
			usleep(100);
	}
	mt_quiet_int_eq(pthread_create(&prep, NULL, prepare_thread, &prepared), 0);
	/* All but the last, which shares a shard with another. */
	for (int i = 0; i < MANY_UNWINDERS - 1; i++) {
		atomic_store(&h[i].release, 1);
		pthread_join(t[i], NULL);
	}
	usleep(BLOCKED_US);
	mt_quiet(!atomic_load(&prepared), "the fork was prepared with a shared shard's unwind under way");
	atomic_store(&h[MANY_UNWINDERS - 1].release, 1);
	pthread_join(t[MANY_UNWINDERS - 1], NULL);
	pthread_join(prep, NULL);
	mt_quiet_int_eq(atomic_load(&prepared), 1);
	mt_stack_fork_parent();
	free(h);
}
END_TEST

START_TEST(test_stack_no_unwind_begins_between_prepare_and_parent)
{
	unwind_hold_t h;
	pthread_t t;

	memset(&h, 0, sizeof(h));
	atomic_store(&h.release, 1);
	mt_stack_fork_prepare(); /* nothing under way: returns at once */
	mt_quiet_int_eq(pthread_create(&t, NULL, unwind_thread, &h), 0);
	usleep(BLOCKED_US);
	mt_quiet(!atomic_load(&h.entered), "an unwind began while forking");
	mt_stack_fork_parent();
	pthread_join(t, NULL);
	mt_quiet_int_eq(atomic_load(&h.entered), 1);
	mt_quiet_int_eq(atomic_load(&h.done), 1);
}
END_TEST

/* The thread that forks may be unwinding itself (a signal handler's
 * allocation): it does not wait for itself, and its child counts that
 * one unwind alone, so the child's own fork does not wait either.  A
 * hang is failed by the test case's timeout. */
static void prepare_and_fork(void *arg)
{
	int *child_status = arg;
	pid_t pid;

	mt_stack_fork_prepare();
	pid = fork();
	if (pid == 0) {
		mt_stack_fork_child();
		mt_stack_fork_prepare(); /* would hang on a stale count */
		mt_stack_fork_parent();
		_exit(0);
	}
	mt_stack_fork_parent();
	waitpid(pid, child_status, 0);
}

START_TEST(test_stack_fork_from_inside_an_unwind_waits_for_nothing)
{
	int status = -1;

	mt_stack_as_unwind(prepare_and_fork, &status);
	mt_quiet(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		 "the child's own fork hung or failed: status %d", status);
}
END_TEST

/* The child forgets the parent's other threads' unwinds: here one is
 * under way at the fork (no prepare handler ran, as when a process forks
 * behind the preload's back), and the child's own fork must not wait for
 * a thread it does not have. */
START_TEST(test_stack_fork_child_forgets_the_parents_unwinds)
{
	unwind_hold_t h;
	pthread_t t;
	pid_t pid;
	int status = -1;

	memset(&h, 0, sizeof(h));
	mt_quiet_int_eq(pthread_create(&t, NULL, unwind_thread, &h), 0);
	while (!atomic_load(&h.entered))
		usleep(1000);
	pid = fork();
	if (pid == 0) {
		/* A hang ends the child (Check's own SIGALRM handler, which
		 * it inherits, would end the whole test). */
		signal(SIGALRM, SIG_DFL);
		alarm(20);
		mt_stack_fork_child();
		mt_stack_fork_prepare();
		mt_stack_fork_parent();
		_exit(0);
	}
	waitpid(pid, &status, 0);
	atomic_store(&h.release, 1);
	pthread_join(t, NULL);
	mt_quiet(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		 "the child waited for its parent's unwind: status %d", status);
}
END_TEST

/* An unwind nested in one the thread has under way (a signal handler's
 * allocation, or the fast walker's rule read inside libunwind's turn) is
 * counted already: it passes a closed gate, where waiting would wait for
 * itself.  A hang is failed by the test case's timeout. */
static void mark_done(void *arg)
{
	atomic_store((atomic_int *)arg, 1);
}

static void prepare_then_nest(void *arg)
{
	mt_stack_fork_prepare(); /* only this thread's unwind: returns */
	mt_stack_as_unwind(mark_done, arg);
	mt_stack_fork_parent();
}

START_TEST(test_stack_an_unwind_nested_in_one_under_way_passes_a_closed_gate)
{
	atomic_int done = 0;

	mt_stack_as_unwind(prepare_then_nest, &done);
	mt_quiet_int_eq(atomic_load(&done), 1);
}
END_TEST

typedef struct {
	atomic_int stop, walks;
	int n;
} fast_walk_t;

static __attribute__((noinline)) int walk_here(void)
{
	mt_stack_buf_t st;

	return mt_stack_capture(&st, 8);
}

/* Walks from one call site, so every walk's rules are the first's. */
static void *fast_walk_thread(void *arg)
{
	fast_walk_t *w = arg;

	while (!atomic_load(&w->stop)) {
		w->n = walk_here();
		atomic_fetch_add(&w->walks, 1);
	}
	return NULL;
}

/* The fast walker takes no lock once its rules are read, so its walks
 * are not counted for the fork protocol: they go on while a fork is
 * pending (two atomic operations a stack fewer). */
START_TEST(test_stack_a_fast_walk_goes_on_while_a_fork_is_pending)
{
	fast_walk_t w;
	pthread_t t;
	uint64_t fast, lib;
	int before, i;

	memset(&w, 0, sizeof(w));
	mt_stack_set_unwinder(MT_UNWIND_FAST, NULL);
	mt_quiet_int_eq(pthread_create(&t, NULL, fast_walk_thread, &w), 0);
	while (atomic_load(&w.walks) < 2)
		usleep(1000);
	mt_stack_fork_prepare();
	before = atomic_load(&w.walks);
	for (i = 0; i < 200 && atomic_load(&w.walks) < before + 2; i++)
		usleep(10000);
	mt_quiet(atomic_load(&w.walks) >= before + 2, "the fast walks waited for the pending fork");
	mt_stack_fork_parent();
	atomic_store(&w.stop, 1);
	pthread_join(t, NULL);
	mt_stack_unwind_counts(&fast, &lib);
	mt_quiet(lib == 0 && w.n > 0, "the walks were not the fast walker's: fast %llu, "
		 "libunwind %llu, %d frames", (unsigned long long)fast,
		 (unsigned long long)lib, w.n);
}
END_TEST

/* ---- trace names (mt_name.h) ---- */

/* The child pattern of name, expanded for pid 42. */
static const char *child_name(const char *pattern)
{
	static char out[256];
	char child[256];

	ck_assert_int_eq(mt_name_child_pattern(pattern, child, sizeof(child)), 0);
	ck_assert_int_eq(mt_name_expand(child, 42, out, sizeof(out)), 0);
	return out;
}

START_TEST(test_name_puts_the_pid_before_a_two_part_extension)
{
	ck_assert_str_eq(child_name("out.jsonl.zst"), "out.42.jsonl.zst");
	ck_assert_str_eq(child_name("/tmp/run/out.jsonl.zst"), "/tmp/run/out.42.jsonl.zst");
}
END_TEST

START_TEST(test_name_puts_the_pid_before_the_last_components_extension)
{
	ck_assert_str_eq(child_name("out.jsonl"), "out.42.jsonl");
	ck_assert_str_eq(child_name("run.d/out.json"), "run.d/out.42.json");
	ck_assert_str_eq(child_name("run.d/trace"), "run.d/trace.42");
	ck_assert_str_eq(child_name("run.d/.trace"), "run.d/.trace.42");
}
END_TEST

START_TEST(test_name_keeps_a_pattern_that_names_the_pid)
{
	char child[64];

	ck_assert_int_eq(mt_name_has_pid("t.%p.jsonl"), 1);
	ck_assert_int_eq(mt_name_child_pattern("t.%p.jsonl", child, sizeof(child)), 0);
	ck_assert_str_eq(child, "t.%p.jsonl");
	ck_assert_str_eq(child_name("t.%p.jsonl"), "t.42.jsonl");
}
END_TEST

START_TEST(test_name_reads_a_doubled_percent_as_a_literal_one)
{
	char out[64];

	ck_assert_int_eq(mt_name_has_pid("a%%p.jsonl"), 0);
	ck_assert_int_eq(mt_name_expand("a%%p.jsonl", 42, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "a%p.jsonl");
	ck_assert_str_eq(child_name("a%%p.jsonl"), "a%p.42.jsonl");
}
END_TEST

START_TEST(test_name_refuses_a_name_that_does_not_fit_rather_than_cut_it)
{
	char out[8];

	ck_assert_int_eq(mt_name_expand("ab%p", 123456, out, sizeof(out)), -1);
	ck_assert_int_eq(mt_name_expand("ab%p", 12345, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "ab12345");
	ck_assert_int_eq(mt_name_child_pattern("abcd.j", out, sizeof(out)), -1);
	ck_assert_int_eq(mt_name_child_pattern("abcd.%p", out, sizeof(out)), 0);
	ck_assert_int_eq(mt_name_child_pattern("abcde.%p", out, sizeof(out)), -1);
}
END_TEST

/* ---- settings (mt_settings.h) ---- */

/* What a call wrote on stderr (fd 2, where mt_say_line writes), caught
 * in a memfd: "" when it said nothing. */
static char said[1024];

static void catch_stderr(int *saved, int *fd)
{
	*fd = memfd_create("said", 0);
	ck_assert_int_ge(*fd, 0);
	*saved = dup(2);
	ck_assert_int_ge(*saved, 0);
	ck_assert_int_eq(dup2(*fd, 2), 2);
}

static void release_stderr(int saved, int fd)
{
	ssize_t n;

	ck_assert_int_eq(dup2(saved, 2), 2);
	close(saved);
	n = pread(fd, said, sizeof(said) - 1, 0);
	ck_assert_int_ge(n, 0);
	said[n] = '\0';
	close(fd);
}

#define SAYING(call) ({ int s_, f_; catch_stderr(&s_, &f_); __auto_type r_ = (call); \
			release_stderr(s_, f_); r_; })

START_TEST(test_settings_depth_is_a_number_of_frames_capped_at_the_most)
{
	ck_assert_int_eq(SAYING(mt_settings_depth(NULL)), MT_TRACE_DEFAULT_DEPTH);
	ck_assert_int_eq(SAYING(mt_settings_depth("")), MT_TRACE_DEFAULT_DEPTH);
	ck_assert_int_eq(SAYING(mt_settings_depth("0")), 0);
	ck_assert_int_eq(SAYING(mt_settings_depth("8")), 8);
	ck_assert_str_eq(said, "");
	ck_assert_int_eq(SAYING(mt_settings_depth("100000")), MT_STACK_MAX_DEPTH);
	ck_assert_int_eq(SAYING(mt_settings_depth("-1")), MT_TRACE_DEFAULT_DEPTH);
	ck_assert_str_eq(said, "memtrace: MEMTRACE_STACK_DEPTH is not a number of frames: "
			       "'-1'; using 32\n");
	ck_assert_int_eq(SAYING(mt_settings_depth("8 frames")), MT_TRACE_DEFAULT_DEPTH);
}
END_TEST

START_TEST(test_settings_ring_slots_are_a_power_of_two_from_64_to_16777216)
{
	ck_assert_uint_eq(SAYING(mt_settings_ring_slots(NULL)), MT_RING_DEFAULT_SLOTS);
	ck_assert_uint_eq(SAYING(mt_settings_ring_slots("64")), 64);
	ck_assert_uint_eq(SAYING(mt_settings_ring_slots("16777216")), 16777216);
	ck_assert_str_eq(said, "");
	ck_assert_uint_eq(SAYING(mt_settings_ring_slots("32")), MT_RING_DEFAULT_SLOTS);
	ck_assert_uint_eq(SAYING(mt_settings_ring_slots("33554432")), MT_RING_DEFAULT_SLOTS);
	ck_assert_uint_eq(SAYING(mt_settings_ring_slots("1000")), MT_RING_DEFAULT_SLOTS);
	ck_assert_str_eq(said, "memtrace: MEMTRACE_RING_SLOTS is not a power of two from 64 "
			       "to 16777216: '1000'; using 262144\n");
}
END_TEST

START_TEST(test_settings_fail_at_is_a_plain_decimal_and_empty_is_unset)
{
	ck_assert_uint_eq(SAYING(mt_settings_fail_at(NULL)), 0);
	ck_assert_uint_eq(SAYING(mt_settings_fail_at("")), 0);
	ck_assert_uint_eq(SAYING(mt_settings_fail_at("3")), 3);
	ck_assert_str_eq(said, "");
	ck_assert_uint_eq(SAYING(mt_settings_fail_at("-3")), 0);
	ck_assert_uint_eq(SAYING(mt_settings_fail_at("3x")), 0);
	ck_assert_uint_eq(SAYING(mt_settings_fail_at("+3")), 0);
	ck_assert_str_eq(said, "memtrace: MEMTRACE_FAIL_AT is not a number of allocations: "
			       "'+3'; no allocation is made to fail\n");
}
END_TEST

START_TEST(test_settings_unwind_names_libunwind_fast_or_verify)
{
	ck_assert_int_eq(SAYING(mt_settings_unwind(NULL)), MT_UNWIND_DEFAULT);
	ck_assert_int_eq(SAYING(mt_settings_unwind("")), MT_UNWIND_DEFAULT);
	ck_assert_int_eq(SAYING(mt_settings_unwind("libunwind")), MT_UNWIND_LIBUNWIND);
	ck_assert_int_eq(SAYING(mt_settings_unwind("fast")), MT_UNWIND_FAST);
	ck_assert_int_eq(SAYING(mt_settings_unwind("verify")), MT_UNWIND_VERIFY);
	ck_assert_str_eq(said, "");
	ck_assert_int_eq(SAYING(mt_settings_unwind("Fast")), MT_UNWIND_DEFAULT);
	ck_assert_str_eq(said, MT_UNWIND_DEFAULT == MT_UNWIND_FAST ?
				       "memtrace: MEMTRACE_UNWIND is not libunwind, fast or "
				       "verify: 'Fast'; using fast\n" :
				       "memtrace: MEMTRACE_UNWIND is not libunwind, fast or "
				       "verify: 'Fast'; using libunwind\n");
}
END_TEST

/*
 * MEMTRACE_UNWIND=verify's comparison: stacks that differ at frame 3 are
 * said at frame 3 with both addresses, the trace ends there complete
 * ("exit"), libunwind unwinds from then on, and a later difference says
 * nothing more.  Equal stacks say nothing and leave the trace running.
 */
START_TEST(test_verify_says_the_first_frame_where_the_stacks_differ_and_ends_the_trace)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	const uint64_t lib[6] = { 0x401000, 0x401100, 0x401200, 0x401300, 0x401400, 0x401500 };
	uint64_t fast[6];
	json_object *o;
	char *data;
	int status;

	memcpy(fast, lib, sizeof(lib));
	fast[3] = 0x7f0000402300;
	mt_quiet_int_eq(mt_trace_start(trace, 0), 0);
	mt_trace_set_unwinder(MT_UNWIND_VERIFY);
	ck_assert_int_eq(SAYING(mt_stack_verify(lib, 6, lib, 6)), 0);
	ck_assert_str_eq(said, "");
	ck_assert(mt_trace_active());
	ck_assert_int_eq(atomic_load(&mt_stack_unwinder), MT_UNWIND_VERIFY);
	ck_assert_int_eq(SAYING(mt_stack_verify(fast, 6, lib, 6)), 1);
	ck_assert_str_eq(said, "memtrace: MEMTRACE_UNWIND=verify: the unwinders' stacks differ "
			       "at frame 3: fast 0x7f0000402300, libunwind 0x401300; tracing "
			       "stops\n");
	ck_assert(!mt_trace_active());
	ck_assert_int_eq(atomic_load(&mt_stack_unwinder), MT_UNWIND_LIBUNWIND);
	ck_assert_int_eq(SAYING(mt_stack_verify(lib, 5, lib, 6)), 1);
	ck_assert_str_eq(said, "");
	data = mt_test_read(trace, NULL);
	mt_quiet_ptr_nonnull(strstr(data, "\"kind\":\"trace.stop\",\"reason\":\"exit\""));
	o = analyze("check", trace, &status);
	ck_assert_int_eq(status, 0);
	ck_assert_str_eq(mt_test_json_str(o, "status"), "complete");
	json_object_put(o);
	free(data);
	free(trace);
}
END_TEST

/* A stack that ends before the other differs at its end: "none". */
START_TEST(test_verify_says_none_past_the_end_of_the_shorter_stack)
{
	const uint64_t lib[3] = { 0x401000, 0x401100, 0x401200 };

	mt_stack_set_unwinder(MT_UNWIND_VERIFY, NULL);
	ck_assert_int_eq(SAYING(mt_stack_verify(lib, 2, lib, 3)), 1);
	ck_assert_str_eq(said, "memtrace: MEMTRACE_UNWIND=verify: the unwinders' stacks differ "
			       "at frame 2: fast none, libunwind 0x401200; tracing stops\n");
}
END_TEST

START_TEST(test_settings_sample_takes_bytes_with_a_binary_suffix)
{
	ck_assert_uint_eq(SAYING(mt_settings_sample_bytes(NULL)), 0);
	ck_assert_uint_eq(SAYING(mt_settings_sample_bytes("")), 0);
	ck_assert_uint_eq(SAYING(mt_settings_sample_bytes("4K")), 4096);
	ck_assert_str_eq(said, "");
	ck_assert_uint_eq(SAYING(mt_settings_sample_bytes("lots")), 0);
	ck_assert_str_eq(said, "memtrace: MEMTRACE_SAMPLE is not a number of bytes: 'lots'; "
			       "every allocation is recorded\n");
}
END_TEST

START_TEST(test_settings_stats_are_on_only_for_1)
{
	ck_assert_int_eq(mt_settings_stats("1"), 1);
	ck_assert_int_eq(mt_settings_stats("yes"), 0);
	ck_assert_int_eq(mt_settings_stats(""), 0);
	ck_assert_int_eq(mt_settings_stats(NULL), 0);
}
END_TEST

START_TEST(test_settings_a_record_socket_too_long_leaves_the_program_untraced)
{
	char sock[8] = "";

	ck_assert_int_eq(SAYING(mt_settings_record_socket(NULL, sock, sizeof(sock))), 0);
	ck_assert_int_eq(SAYING(mt_settings_record_socket("", sock, sizeof(sock))), 0);
	ck_assert_str_eq(sock, "");
	ck_assert_int_eq(SAYING(mt_settings_record_socket("/r.sock", sock, sizeof(sock))), 1);
	ck_assert_str_eq(sock, "/r.sock");
	ck_assert_str_eq(said, "");
	ck_assert_int_eq(SAYING(mt_settings_record_socket("/run.sock", sock, sizeof(sock))), -1);
	ck_assert_str_eq(said, "memtrace: MEMTRACE_RECORD is too long: '/run.sock'; the "
			       "program runs untraced\n");
}
END_TEST

/* ---- prefault ---- */

/* This thread's page faults from here on (the kernel's software counter:
 * it counts the faults a page's first touch takes, not the pages a
 * system call makes resident); -1 with a skip line where perf events are
 * not allowed, or where the sanitizers' shadow memory faults beside the
 * tracer's own. */
static int fault_counter(const char *test)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
				     .config = PERF_COUNT_SW_PAGE_FAULTS, .exclude_kernel = 1,
				     .exclude_hv = 1 };
	int fd;

	if (MT_TEST_SANITIZED) {
		mt_test_skip(test, "counts the tracer's own page faults, and ASan's shadow "
			     "pages fault too (this is make sanitize)");
		return -1;
	}
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		mt_test_skip(test, "needs a count of its own page faults (perf_event_open: %s)",
			     strerror(errno));
	return fd;
}

static uint64_t faults(int fd)
{
	uint64_t n = 0;

	ck_assert_int_eq(read(fd, &n, sizeof(n)), (ssize_t)sizeof(n));
	return n;
}

/* Whether this kernel makes pages resident on request; a skip line when
 * it does not (Linux before 5.14 has no MADV_POPULATE_WRITE). */
static int prefault_works(const char *test)
{
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ck_assert_ptr_ne(p, MAP_FAILED);
	mt_prefault_init();
	if (mt_prefault_on())
		mt_prefault_range(p, 4096);
	munmap(p, 4096);
	if (!mt_prefault_on()) {
		mt_test_skip(test, "needs a kernel that makes pages resident on request "
			     "(madvise(MADV_POPULATE_WRITE) refused; Linux 5.14 has it)");
		return 0;
	}
	return 1;
}

START_TEST(test_prefault_makes_exactly_the_pages_asked_resident)
{
	enum { PAGES = 32 };
	unsigned char vec[PAGES];
	char *p = mmap(NULL, PAGES * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	ck_assert_ptr_ne(p, MAP_FAILED);
	if (!prefault_works(__func__))
		return;
	/* From inside page 2 to inside page 9: pages 2 to 9. */
	mt_prefault_range(p + 2 * 4096 + 100, 7 * 4096);
	ck_assert_int_eq(mincore(p, PAGES * 4096, vec), 0);
	for (int i = 0; i < PAGES; i++)
		ck_assert_msg((vec[i] & 1) == (i >= 2 && i <= 9), "page %d resident: %d", i,
			      vec[i] & 1);
	munmap(p, PAGES * 4096);
}
END_TEST

START_TEST(test_prefault_is_off_where_a_seccomp_filter_is_in_place)
{
	pid_t pid = fork();
	int status;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct sock_filter allow[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
		struct sock_fprog prog = { .len = 1, .filter = allow };

		mt_prefault_init();
		if (!mt_prefault_on())
			_exit(3); /* the test runner itself has a filter */
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
			_exit(4);
		mt_prefault_init();
		_exit(mt_prefault_on() ? 1 : 0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	if (WEXITSTATUS(status) == 3 || WEXITSTATUS(status) == 4) {
		MT_TEST_SKIP("needs a process free to add a seccomp filter (%s)",
			     WEXITSTATUS(status) == 3 ? "it has one already" : "prctl refused");
		return;
	}
	ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

/* A kernel without MADV_POPULATE_WRITE (before 5.14) answers EINVAL: a
 * filter that answers so for that advice alone stands for one.  The
 * first refusal turns it off; the pages are left to fault in. */
START_TEST(test_prefault_goes_off_at_the_first_refusal)
{
	pid_t pid;
	int status;

	if (!prefault_works(__func__))
		return;
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct sock_filter f[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_madvise, 0, 3),
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
				 offsetof(struct seccomp_data, args[2])),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 23 /* MADV_POPULATE_WRITE */, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
		char *p = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		unsigned char vec[4];

		mt_prefault_init();
		if (p == MAP_FAILED || !mt_prefault_on() ||
		    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
			_exit(3);
		mt_prefault_range(p, 4 * 4096);
		if (mt_prefault_on() || mt_prefault_map_flags() != 0)
			_exit(1);
		if (mincore(p, 4 * 4096, vec) < 0 || (vec[0] & 1))
			_exit(2);
		p[0] = 1; /* the page faults in as before */
		_exit(p[0] == 1 ? 0 : 4);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	if (WEXITSTATUS(status) == 3) {
		MT_TEST_SKIP("needs a process free to add a seccomp filter (prctl refused)");
		return;
	}
	ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

START_TEST(test_prefault_goes_off_for_good_when_the_program_locks_down)
{
	if (!prefault_works(__func__))
		return;
	ck_assert_int_eq(mt_prefault_map_flags(), MAP_POPULATE);
	mt_prefault_stop();
	ck_assert_int_eq(mt_prefault_on(), 0);
	ck_assert_int_eq(mt_prefault_map_flags(), 0);
	mt_prefault_init(); /* a fork's child keeps what its parent decided */
}
END_TEST

START_TEST(test_prefault_data_takes_the_variables_and_leaves_the_cold_arrays)
{
	uintptr_t r[64][2], var = (uintptr_t)&mt_record_ring;
	uintptr_t cold = (uintptr_t)mt_sample_top, cold_end = cold + sizeof(mt_sample_top);
	size_t n = mt_prefault_data_ranges(r, 64);
	int has_var = 0;
	unsigned char vec[1];

	/* This program links the core: its writable data holds the
	 * tracer's variables and cold arrays as the preload's does. */
	ck_assert_uint_gt(n, 1);
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(r[i][0] % 4096, 0);
		ck_assert_uint_eq(r[i][1] % 4096, 0);
		ck_assert_uint_lt(r[i][0], r[i][1]);
		if (i)
			ck_assert_uint_gt(r[i][0], r[i - 1][1]); /* a cold page between */
		has_var |= var >= r[i][0] && var < r[i][1];
		/* No whole page of the 512 KiB sampling table. */
		ck_assert_msg(r[i][1] <= ((cold + 4095) & ~(uintptr_t)4095) ||
				      r[i][0] >= (cold_end & ~(uintptr_t)4095),
			      "range %zu [%#lx, %#lx) takes pages of the sampling table [%#lx, %#lx)",
			      i, (unsigned long)r[i][0], (unsigned long)r[i][1], (unsigned long)cold,
			      (unsigned long)cold_end);
	}
	ck_assert_msg(has_var, "no range holds mt_record_ring");
	if (!prefault_works(__func__))
		return;
	mt_prefault_data();
	ck_assert_int_eq(mincore((void *)(var & ~(uintptr_t)4095), 4096, vec), 0);
	ck_assert_int_eq(vec[0] & 1, 1);
}
END_TEST

/* The section indexes of .data and .bss in `readelf -SW`'s listing
 * (which this takes apart), or -1. */
static void data_sections(char *listing, int *data, int *bss)
{
	char *line, *save = NULL;

	*data = *bss = -1;
	for (line = strtok_r(listing, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char sec[64];
		int idx;

		if (sscanf(line, " [%d] %63s", &idx, sec) != 2)
			continue;
		if (!strcmp(sec, ".data"))
			*data = idx;
		else if (!strcmp(sec, ".bss"))
			*bss = idx;
	}
}

/* Cold arrays that lie next to each other count as one: the pages of an
 * array too small to hold a whole page of its own, between two others,
 * are left cold with theirs. */
START_TEST(test_prefault_data_leaves_a_small_cold_array_between_others_cold)
{
	static _Alignas(4096) char area[6 * 4096];
	uintptr_t r[64][2], cold = (uintptr_t)area + 4096, cold_end = (uintptr_t)area + 5 * 4096;
	size_t n;

	/* 1.5 pages, then a page (no whole page of its own) 64 bytes on,
	 * then 2.5 pages 32 bytes on: one cold run [512, 21088). */
	mt_prefault_cold(area + 512, 6144);
	mt_prefault_cold(area + 6720, 4096);
	mt_prefault_cold(area + 10848, 10240);
	n = mt_prefault_data_ranges(r, 64);
	ck_assert_uint_gt(n, 0);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(r[i][1] <= cold || r[i][0] >= cold_end,
			      "range %zu [%#lx, %#lx) takes pages of the cold run [%#lx, %#lx)", i,
			      (unsigned long)r[i][0], (unsigned long)r[i][1], (unsigned long)cold,
			      (unsigned long)cold_end);
}
END_TEST

/* Whether a symbol's name is name, or name with a suffix of LTO's
 * (".lto_priv.0"). */
static int is_symbol(const char *sym, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(sym, name, n) && (!sym[n] || sym[n] == '.');
}

START_TEST(test_the_preloads_small_variables_lie_together_and_its_cold_tables_last)
{
	char lib[4096];
	char *sections[] = { "/bin/sh", "-c", "exec readelf -SW \"$0\"", lib, NULL };
	char *symbols[] = { "/bin/sh", "-c", "exec readelf -sW \"$0\"", lib, NULL };
	/* The arrays of a page or less a start leaves cold (MT_LAYOUT_COLD). */
	static const char *const small_cold[] = { "hdr_path", "unwinding", "collector",
						  "cpuinfo_buf", "anchors" };
	uint64_t lo = UINT64_MAX, hi = 0, big_lo = UINT64_MAX, cold_lo = UINT64_MAX;
	struct {
		uint64_t at, end;
		int cold_by_name;
	} obj[512];
	char *line, *save = NULL;
	mt_test_run_t r;
	int data, bss, small = 0, nobj = 0, nhuge = 0, named = 0;

	/* A fork copies each page of these the child or the parent writes
	 * first; spread between the big arrays, some twenty were. */
	snprintf(lib, sizeof(lib), "%s/libmtpreload.so", mt_test_build_dir());
	mt_test_run(&r, sections, NULL);
	ck_assert_int_eq(r.status, 0);
	data_sections(r.out, &data, &bss);
	mt_test_run_release(&r);
	ck_assert_int_gt(data, 0);
	ck_assert_int_gt(bss, 0);
	mt_test_run(&r, symbols, NULL);
	ck_assert_int_eq(r.status, 0);
	for (line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char type[32], bind[32], vis[32], ndx[32], size[32], name[256] = "";
		unsigned long long value, n;
		int at, cold_by_name = 0;

		if (sscanf(line, " %d: %llx %31s %31s %31s %31s %31s %255s", &at, &value, size,
			   type, bind, vis, ndx, name) < 7 ||
		    strcmp(type, "OBJECT") || (atoi(ndx) != data && atoi(ndx) != bss))
			continue;
		n = strtoull(size, NULL, 0);
		for (size_t i = 0; i < sizeof(small_cold) / sizeof(small_cold[0]); i++)
			cold_by_name |= is_symbol(name, small_cold[i]);
		named += cold_by_name;
		ck_assert_int_lt(nobj, 512);
		obj[nobj].at = value;
		obj[nobj].end = value + n;
		obj[nobj++].cold_by_name = cold_by_name;
		if ((n >= 65536 || cold_by_name) && value < cold_lo)
			cold_lo = value;
		if (n >= 65536) {
			nhuge++;
			continue;
		}
		if (n >= 1024) {
			if (value < big_lo)
				big_lo = value;
			continue;
		}
		small++;
		if (value < lo)
			lo = value;
		if (value + n > hi)
			hi = value + n;
	}
	mt_test_run_release(&r);
	ck_assert_int_gt(small, 20);
	ck_assert_msg(hi / 4096 - lo / 4096 < 2,
		      "the preload's %d small variables span pages %#llx to %#llx", small,
		      (unsigned long long)(lo / 4096), (unsigned long long)((hi - 1) / 4096));
	ck_assert_msg(hi <= big_lo, "a big array lies among the small variables (at %#llx)",
		      (unsigned long long)big_lo);
	/* The tables a start leaves cold (64 KiB and more, and the arrays
	 * named above) lie together, last, each next to the one before, so
	 * the pages it makes resident are one range
	 * (mt_prefault_data_ranges). */
	ck_assert_int_ge(nhuge, 5);
	mt_quiet_int_eq(named, (int)(sizeof(small_cold) / sizeof(small_cold[0])));
	for (int i = 0; i < nobj; i++) {
		uint64_t next = UINT64_MAX;

		ck_assert_msg(obj[i].end <= cold_lo || obj[i].cold_by_name ||
				      obj[i].end - obj[i].at >= 65536,
			      "a variable a start writes, at %#llx, lies among the cold tables",
			      (unsigned long long)obj[i].at);
		if (obj[i].at < cold_lo)
			continue;
		for (int j = 0; j < nobj; j++)
			if (obj[j].at >= obj[i].end && obj[j].at < next)
				next = obj[j].at;
		ck_assert_msg(next == UINT64_MAX || next - obj[i].end < 4096,
			      "a page or more between the cold arrays at %#llx and %#llx",
			      (unsigned long long)obj[i].end, (unsigned long long)next);
	}
}
END_TEST

/* Whether the kernel takes MADV_WIPEONFORK (Linux 4.14); if not, test
 * says so in a skip line. */
static int wipeonfork_works(const char *test)
{
	void *probe = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int ok, err;

	ck_assert_ptr_ne(probe, MAP_FAILED);
	ok = madvise(probe, 4096, MADV_WIPEONFORK) == 0;
	err = errno;
	munmap(probe, 4096);
	if (!ok)
		mt_test_skip(test, "needs MADV_WIPEONFORK (madvise: %s; Linux 4.14 has it)",
			     strerror(err));
	return ok;
}

/* A forked child gets the frame and stack tables and the thread's stack
 * cache empty (MADV_WIPEONFORK): its new trace empties them at once, so
 * the fork copies none of their page table entries and leaves the
 * parent's pages writable.  Left to the kernel's word: a skip line where
 * it has no such advice (before Linux 4.14). */
START_TEST(test_a_forked_child_gets_the_frame_and_stack_tables_empty)
{
	uint64_t ips[3] = { 0x401000, 0x402000, 0x403000 }, gen = 0, id;
	pid_t pid;

	if (!wipeonfork_works(__func__))
		return;
	mt_stack_cache_init();
	mt_stack_reset();
	for (int i = 0; i < 3; i++)
		ck_assert_uint_ne(mt_stack_frame_add(ips[i]), 0);
	id = mt_stack_add(ips, 3);
	ck_assert_uint_ne(id, 0);
	mt_stack_remember(ips, 3, id);
	ck_assert_uint_eq(mt_stack_cached(ips, 3, &gen), id);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* No reset here: what the child sees is what the fork gave. */
		int empty = mt_stack_frame_find(ips[0]) == 0 && mt_stack_find(ips, 3) == 0 &&
			    mt_stack_cached(ips, 3, &gen) == 0;

		_exit(empty ? 0 : 1);
	}
	child_passes(pid, "the child found its parent's frames or stacks");
	/* The parent's stay. */
	ck_assert_uint_eq(mt_stack_find(ips, 3), id);
	ck_assert_uint_eq(mt_stack_cached(ips, 3, &gen), id);
	mt_stack_reset();
}
END_TEST

/* A forked child's tables and arena came empty (MADV_WIPEONFORK): it
 * keeps their mappings for its own trace rather than unmapping them and
 * mapping new ones. */
START_TEST(test_a_forked_child_keeps_the_tables_mappings_and_finds_them_empty)
{
	mt_table_t t = { 0 };
	mt_arena_t a = { 0 };
	uint64_t value = 0, *slots;
	size_t pos = 0;
	char *first, *chunk;
	pid_t pid;

	if (!wipeonfork_works(__func__))
		return;
	for (uint64_t k = 1; k <= 100; k++)
		ck_assert_int_eq(mt_table_add(&t, k, k * 10), 0);
	first = mt_arena_alloc(&a, 100);
	ck_assert_ptr_nonnull(first);
	memset(first, 7, 100);
	slots = t.slots;
	chunk = a.chunk;
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		unsigned char vec[1];
		char *p;
		int ok;

		mt_table_forked(&t);
		mt_arena_forked(&a);
		/* What a new trace's reset does next: both stay. */
		mt_table_empty(&t);
		mt_arena_empty(&a);
		ok = t.slots == slots && t.count == 0 && !mt_table_next(&t, 1, &pos, &value);
		ok = ok && mt_table_add(&t, 5, 6) == 0 && t.slots == slots;
		pos = 0;
		ok = ok && mt_table_next(&t, 5, &pos, &value) && value == 6;
		/* Nothing allocated yet: the chunk's page is not touched. */
		ok = ok && mincore(chunk, 4096, vec) == 0 && !(vec[0] & 1);
		p = mt_arena_alloc(&a, 100);
		ok = ok && a.chunk == chunk && p == first && p[0] == 0 && p[99] == 0;
		_exit(ok ? 0 : 1);
	}
	child_passes(pid, "the child's tables were not its parent's mappings, empty");
	/* The parent's stay; emptied with entries in them, they are given back. */
	ck_assert(mt_table_next(&t, 100, &pos, &value) && value == 1000);
	ck_assert_int_eq(first[99], 7);
	mt_table_empty(&t);
	mt_arena_empty(&a);
	ck_assert_ptr_null(t.slots);
	ck_assert_ptr_null(a.chunk);
}
END_TEST

/* A forked child's keys land in its kept table's first page, however
 * large its parent's grew: a few frames spread over a parent's sixteen
 * pages would fault each one in. */
START_TEST(test_a_forked_child_hashes_into_its_tables_first_page)
{
	mt_table_t t = { 0 };
	uint64_t *slots;
	pid_t pid;

	if (!wipeonfork_works(__func__))
		return;
	for (uint64_t k = 1; k <= 2000; k++)
		ck_assert_int_eq(mt_table_add(&t, k, k * 10), 0);
	ck_assert_uint_ge(t.cap * 2 * sizeof(uint64_t), 16 * 4096);
	slots = t.slots;
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		size_t pages = t.mapped * 2 * sizeof(uint64_t) / 4096, resident = 0;
		unsigned char vec[64];
		uint64_t value = 0;
		size_t pos;
		int ok = 1;

		mt_table_forked(&t);
		for (uint64_t k = 1; k <= 100; k++)
			ok = ok && mt_table_add(&t, k * 7919, k) == 0;
		ok = ok && t.slots == slots && pages <= sizeof(vec) &&
		     mincore(slots, pages * 4096, vec) == 0;
		for (size_t i = 0; ok && i < pages; i++)
			resident += vec[i] & 1;
		ok = ok && resident == 1 && (vec[0] & 1);
		/* Past the first page's half: a table of its own, every key
		 * still there. */
		for (uint64_t k = 101; k <= 300; k++)
			ok = ok && mt_table_add(&t, k * 7919, k) == 0;
		ok = ok && t.slots != slots;
		for (uint64_t k = 1; ok && k <= 300; k++) {
			pos = 0;
			ok = mt_table_next(&t, k * 7919, &pos, &value) && value == k;
		}
		pos = 0;
		ok = ok && !mt_table_next(&t, 1, &pos, &value);
		mt_table_release(&t);
		_exit(ok ? 0 : 1);
	}
	child_passes(pid, "the child's keys left its table's first page");
	mt_table_release(&t);
}
END_TEST

/* A forked child's empty table is not read: neither its first lookup nor
 * its first add reads a slot, since a read of a page it has not written
 * maps a page of zeros and the write after it faults a second time. */
START_TEST(test_a_forked_child_reads_nothing_from_its_empty_table)
{
	mt_table_t t = { 0 };
	pid_t pid;

	if (!wipeonfork_works(__func__))
		return;
	for (uint64_t k = 1; k <= 100; k++)
		ck_assert_int_eq(mt_table_add(&t, k, k * 10), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		unsigned char vec[1];
		uint64_t value = 0;
		size_t pos = 0;
		int ok;

		mt_table_forked(&t);
		ok = !mt_table_next(&t, 42, &pos, &value);
		ok = ok && mincore(t.slots, 4096, vec) == 0 && !(vec[0] & 1);
		ok = ok && mt_table_add(&t, 42, 7) == 0;
		pos = 0;
		ok = ok && mt_table_next(&t, 42, &pos, &value) && value == 7;
		ok = ok && mt_table_add(&t, 42, 8) == 0 && t.count == 2;
		_exit(ok ? 0 : 1);
	}
	child_passes(pid, "the child read its empty table");
	mt_table_release(&t);
}
END_TEST

START_TEST(test_a_grown_table_takes_no_fault_a_page)
{
	mt_table_t t = { 0 };
	uint64_t before, key = 1;
	int fd;

	if (!prefault_works(__func__) || (fd = fault_counter(__func__)) < 0)
		return;
	/* Up to the add that maps 32768 slots (512 KiB, 128 pages). */
	while ((t.count + 1) * 2 <= 16384)
		ck_assert_int_eq(mt_table_add(&t, key++, 1), 0);
	before = faults(fd);
	ck_assert_int_eq(mt_table_add(&t, key++, 1), 0);
	ck_assert_uint_eq(t.cap, 32768);
	ck_assert_msg(faults(fd) - before < 16, "%llu faults growing the table to 512 KiB",
		      (unsigned long long)(faults(fd) - before));
	mt_table_release(&t);
	close(fd);
}
END_TEST

/* 16 KiB of the calling thread's stack below its caller's frame written,
 * so that the calls made next take no fault there. */
static __attribute__((noinline)) void touch_stack(void)
{
	volatile char stack[16384];

	for (size_t i = 0; i < sizeof(stack); i += 512)
		stack[i] = 1;
}

/* In a new thread: the page faults of its first stack cache lookup, once
 * the cache is mapped (a lookup of no frames maps it), and of its first
 * entry, as lookup * 10 + entry; -1 when the faults cannot be counted
 * (a skip line said so), -2 when the entry is not found after. */
static void *new_cache_faults(void *arg)
{
	const char *test = arg;
	uint64_t ips[3] = { 0x401000, 0x402000, 0x403000 }, gen = 0, at, lookup;
	long rc = -1;
	int fd;

	touch_stack();
	fd = fault_counter(test);
	if (fd < 0)
		return (void *)rc;
	/* The count's own first read takes faults (its code's first run
	 * in this thread); the cache is mapped here. */
	(void)faults(fd);
	mt_stack_cached(ips, 0, &gen);
	at = faults(fd);
	mt_stack_cached(ips, 3, &gen);
	lookup = faults(fd) - at;
	at = faults(fd);
	mt_stack_remember(ips, 3, 42);
	rc = (long)(lookup * 10 + (faults(fd) - at));
	if (mt_stack_cached(ips, 3, &gen) != 42)
		rc = -2;
	close(fd);
	return (void *)rc;
}

/* In a new thread (a cache of its own size, counted from its first
 * entry): 1 when a stack and the last other stack met of its set are both
 * found, 0 when not, -1 when no stack took the set. */
static void *two_stacks_of_one_set(void *arg)
{
	uint64_t a[3] = { 0x401000, 0x402000, 0x403000 }, b[3] = { 0, 0x602000, 0x603000 };
	uint64_t gen = 0, x, ok;

	(void)arg;
	/* Enough stacks for the cache to use all of its sets, first. */
	for (x = 0; x < 64; x++) {
		uint64_t d[3] = { 0x700000 + x * 16, 1, 2 };

		mt_stack_remember(d, 3, 100 + x);
	}
	mt_stack_remember(a, 3, 1000);
	/* The stacks that follow take a's set in turn; the one that puts a
	 * out of the cache is a's set's last. */
	for (x = 1; x < 100000; x++) {
		b[0] = 0x600000 + x * 16;
		mt_stack_remember(b, 3, 2000 + x);
		if (mt_stack_cached(a, 3, &gen) != 1000)
			break;
	}
	if (x == 100000)
		return (void *)-1L;
	/* a met again: b stays. */
	mt_stack_remember(a, 3, 1000);
	ok = mt_stack_cached(a, 3, &gen) == 1000 && mt_stack_cached(b, 3, &gen) == 2000 + x;
	/* And the two met in turn stay found. */
	for (int i = 0; i < 100 && ok; i++)
		ok = mt_stack_cached(b, 3, &gen) == 2000 + x && mt_stack_cached(a, 3, &gen) == 1000;
	return (void *)(long)ok;
}

/* A thread's stack cache holds two stacks whose hashes pick the same set:
 * two hot stacks that meet in one entry would otherwise put each other
 * out at every turn, and each event go to the tables under the lock
 * (python3 took 40 k to 280 k such lookups a run, by where ASLR put its
 * libraries, against 37 k to 40 k with sets of two). */
START_TEST(test_a_stack_cache_keeps_two_stacks_whose_hashes_meet)
{
	pthread_t t;
	void *rc;

	mt_stack_cache_init();
	ck_assert_int_eq(pthread_create(&t, NULL, two_stacks_of_one_set, NULL), 0);
	ck_assert_int_eq(pthread_join(t, &rc), 0);
	ck_assert_msg((long)rc != -1, "no stack of 100,000 took the first one's set");
	ck_assert_msg((long)rc == 1, "a stack met again put the other of its set out");
}
END_TEST

/* A thread's new stack cache is not read before its first entry is
 * written: a read of a page not yet written maps a page of zeros, and
 * the write faults on it again.  A forked child's cache, wiped, is
 * likewise. */
START_TEST(test_a_new_stack_cache_is_not_read_before_its_first_entry)
{
	uint64_t ips[3] = { 0x501000, 0x502000, 0x503000 }, gen = 0;
	pthread_t t;
	pid_t pid;
	void *rc;

	/* The code run once here: its pages are then in this process's
	 * page tables, and the thread's faults are its cache's. */
	mt_stack_cache_init();
	ck_assert_uint_eq(mt_stack_cached(ips, 3, &gen), 0);
	mt_stack_remember(ips, 3, 41);
	ck_assert_int_eq(pthread_create(&t, NULL, new_cache_faults, (void *)__func__), 0);
	ck_assert_int_eq(pthread_join(t, &rc), 0);
	if ((long)rc == -1)
		return;
	mt_quiet((long)rc != -2, "the entry was not found after it was written");
	mt_quiet((long)rc == 1, "the first lookup took %ld faults and the first entry %ld, not 0 and 1",
		 (long)rc / 10, (long)rc % 10);
	if (!wipeonfork_works(__func__))
		return;
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd;
		uint64_t at;

		touch_stack();
		fd = fault_counter(__func__);
		(void)faults(fd);
		mt_stack_fork_child();
		at = faults(fd);
		mt_stack_cached(ips, 3, &gen);
		_exit(faults(fd) == at ? 0 : 1);
	}
	child_passes(pid, "the forked child read its wiped stack cache");
}
END_TEST

START_TEST(test_a_rings_first_lap_is_written_without_a_fault_a_page)
{
	enum { SLOTS = 4096 }; /* 256 KiB of slots, 64 pages */
	size_t len = MT_RING_HDR_SIZE + SLOTS * sizeof(mt_ring_slot_t);
	mt_spawn_ring_t saved = mt_record_ring;
	uint64_t before, pos;
	char *map;
	int fd;

	if (!prefault_works(__func__) || (fd = fault_counter(__func__)) < 0)
		return;
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(map, MAP_FAILED);
	mt_record_ring.hdr = (mt_ring_hdr_t *)map;
	mt_record_ring.slots = (mt_ring_slot_t *)(map + MT_RING_HDR_SIZE);
	mt_record_ring.hdr->nslots = SLOTS;
	atomic_store(&mt_record_ring.hdr->state, MT_RING_WRITING);
	mt_record_seen_tail = 0;
	before = faults(fd);
	mt_record_prefault_start();
	/* The writers' path: records of one to three slots up to the lap's
	 * end. */
	for (unsigned n = 1; mt_record_ring.hdr->head + n <= SLOTS; n = n % 3 + 1) {
		ck_assert_int_eq(mt_record_reserve(n, &pos), 0);
		memset(mt_record_slot(pos), 0x5a, n * sizeof(mt_ring_slot_t));
	}
	ck_assert_msg(faults(fd) - before < 8, "%llu faults writing 64 pages of slots",
		      (unsigned long long)(faults(fd) - before));
	mt_record_ring = saved;
	munmap(map, len);
	close(fd);
}
END_TEST

/* A socket in the abstract namespace that takes registrations as
 * record's collector's does, named in sock (ending in suffix); its
 * descriptor.  Nothing accepts them: the rings stay queued until it is
 * closed. */
static int listen_as_record(char *sock, size_t cap, const char *suffix)
{
	static int made;
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	size_t k = (size_t)snprintf(sock, cap, "mt-check-register-%d-%d%s", (int)getpid(),
				    made++, suffix);
	int lfd;

	memcpy(addr.sun_path + 1, sock, k);
	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(lfd, 0);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&addr,
			      (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + k)), 0);
	ck_assert_int_eq(listen(lfd, 4), 0);
	return lfd;
}

/* A ring handed to record's collector has its header written, before
 * it is sent, on a page made resident for it: a fault on a new page of
 * the memfd cost a start more than populating it. */
START_TEST(test_a_registered_rings_header_is_written_without_a_fault)
{
	mt_spawn_ring_t r[2];
	char sock[64];
	uint64_t before;
	int lfd, fd;

	if (!prefault_works(__func__) || (fd = fault_counter(__func__)) < 0)
		return;
	lfd = listen_as_record(sock, sizeof(sock), "");
	/* The first brings the code and the stack in. */
	ck_assert_int_eq(mt_spawn_register(sock, "t", 0, 1024, 0, 1, 0, &r[0]), 0);
	before = faults(fd);
	ck_assert_int_eq(mt_spawn_register(sock, "t", 0, 1024, 0, 1, 0, &r[1]), 0);
	ck_assert_msg(faults(fd) == before, "%llu faults registering a ring",
		      (unsigned long long)(faults(fd) - before));
	ck_assert(r[1].nowait);
	ck_assert_uint_eq(r[1].hdr->magic, MT_RING_MAGIC);
	ck_assert_uint_eq(r[1].hdr->nslots, 1024);
	mt_spawn_unmap(&r[0]);
	mt_spawn_unmap(&r[1]);
	close(lfd);
	close(fd);
}
END_TEST

/* The registration taken from a socket of listen_as_record's: the
 * message into msg, its length into *len; returns how many descriptors
 * came with it (closed). */
static int take_registration(int lfd, mt_register_msg_t *msg, ssize_t *len)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = { msg, sizeof(*msg) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
			     .msg_controllen = sizeof(control.buf) };
	int fd = accept(lfd, NULL, NULL), n = 0;

	ck_assert_int_ge(fd, 0);
	*len = recvmsg(fd, &mh, 0);
	ck_assert_int_gt(*len, 0);
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++, n++) {
			int got;

			memcpy(&got, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			close(got);
		}
	close(fd);
	return n;
}

/* A program that registers itself with a collector that takes a pidfd
 * of it from the connection (its socket's name says so) opens none and
 * sends only the ring, and still reads no answer; to any other
 * collector it sends a pidfd of itself with the ring.  A go-between
 * child, which is not the program, always sends the program's. */
START_TEST(test_a_program_registering_itself_sends_no_pidfd_where_the_collector_takes_its_own)
{
	mt_register_msg_t msg;
	ssize_t len;
	mt_spawn_ring_t r;
	char sock[96];
	int lfd;

	lfd = listen_as_record(sock, sizeof(sock), MT_REGISTER_PEER_PIDFD);
	ck_assert_int_eq(mt_spawn_register(sock, "t", 0, 1024, 0, 1, 0, &r), 0);
	ck_assert(r.nowait);
	mt_spawn_unmap(&r);
	ck_assert_int_eq(take_registration(lfd, &msg, &len), 1);
	ck_assert(msg.head.peer_pidfd && !msg.head.has_pidfd && msg.head.nowait);
	ck_assert_int_eq(msg.head.pid, getpid());
	ck_assert_int_eq(mt_spawn_register(sock, "t", 0, 1024, 0, 0, 0, &r), 0);
	mt_spawn_unmap(&r);
	ck_assert_int_eq(take_registration(lfd, &msg, &len), 2);
	ck_assert(!msg.head.peer_pidfd && msg.head.has_pidfd && msg.head.via_child && msg.head.nowait);
	close(lfd);
	lfd = listen_as_record(sock, sizeof(sock), "");
	ck_assert_int_eq(mt_spawn_register(sock, "t", 0, 1024, 0, 1, 0, &r), 0);
	ck_assert(r.nowait);
	mt_spawn_unmap(&r);
	ck_assert_int_eq(take_registration(lfd, &msg, &len), 2);
	ck_assert(!msg.head.peer_pidfd && msg.head.has_pidfd && msg.head.nowait);
	close(lfd);
}
END_TEST

/* A registration is its head and the trace's name with its NUL, no
 * more: the name's own length, not the longest a name may be. */
START_TEST(test_a_registration_is_as_long_as_its_trace_name)
{
	const char *names[] = { "t", "/a/longer/name/memtrace.123.jsonl.zst" };
	mt_register_msg_t msg;
	mt_spawn_ring_t r;
	char sock[96];
	ssize_t len;
	int lfd = listen_as_record(sock, sizeof(sock), "");

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		ck_assert_int_eq(mt_spawn_register(sock, names[i], 0, 1024, 0, 1, 0, &r), 0);
		mt_spawn_unmap(&r);
		ck_assert_int_eq(take_registration(lfd, &msg, &len), 2);
		ck_assert_int_eq(len, offsetof(mt_register_msg_t, name) + strlen(names[i]) + 1);
		ck_assert_str_eq(msg.name, names[i]);
	}
	close(lfd);
}
END_TEST

/* The loader's count of objects unloaded (dlpi_subs). */
static int count_unloads(struct dl_phdr_info *info, size_t size, void *arg)
{
	*(uint64_t *)arg = mt_elf_unloads(info, size);
	ck_assert_uint_ne(*(uint64_t *)arg, UINT64_MAX);
	return 1;
}

/* The table of rules a fork shares keeps a rule only for code that was
 * there when it was made and is there still: an address in an object
 * loaded then, read by a process whose count of unloads, the hooks'
 * (generation) and the loader's own, is the table's.  A rule read after
 * an unload that no hook saw (glibc unloads iconv's modules itself) is
 * not shared. */
START_TEST(test_a_fork_shares_rules_only_for_the_code_its_table_was_made_for)
{
	uint64_t unloads = 0, rule = 0, ip = (uint64_t)(uintptr_t)&count_unloads + 1;

	dl_iterate_phdr(count_unloads, &unloads);
	mt_unwind_share_reset();
	mt_unwind_share_fork_prepare(7);
	mt_unwind_share_add(ip, 7, unloads + 1, 0x1234);
	ck_assert(!mt_unwind_share_find(ip, 7, &rule));
	mt_unwind_share_add(ip, 7, unloads, 0x1234);
	ck_assert(mt_unwind_share_find(ip, 7, &rule));
	ck_assert_uint_eq(rule, 0x1234);
	/* Another count of the hooks' unloads: nothing. */
	ck_assert(!mt_unwind_share_find(ip, 8, &rule));
	mt_unwind_share_add(ip + 16, 8, unloads, 0x5678);
	ck_assert(!mt_unwind_share_find(ip + 16, 7, &rule));
	/* Outside every object loaded when it was made: nothing. */
	mt_unwind_share_add(0x1000, 7, unloads, 0x9abc);
	ck_assert(!mt_unwind_share_find(0x1000, 7, &rule));
	mt_unwind_share_reset();
}
END_TEST

/* A short process's trace fits in the header's first page and the first
 * page of slots (a /bin/true's takes 3 slots): a new ring makes just those
 * two resident, as each page of a memfd costs its allocation, zeroing and
 * freeing on both sides. */
START_TEST(test_a_new_ring_makes_only_the_pages_a_short_trace_writes_resident)
{
	mt_spawn_ring_t saved = mt_record_ring, r;
	unsigned char vec[16];
	char sock[64];
	int lfd;

	if (!prefault_works(__func__))
		return;
	lfd = listen_as_record(sock, sizeof(sock), "");
	ck_assert_int_eq(mt_spawn_register(sock, "t", 0, 1024, 0, 1, 0, &r), 0);
	mt_record_ring = r;
	mt_record_prefault_start();
	mt_record_ring = saved;
	ck_assert_int_eq(mincore(r.hdr, sizeof(vec) * 4096, vec), 0);
	ck_assert_msg((vec[0] & 1) && !(vec[1] & 1),
		      "the header's pages resident: %d %d", vec[0] & 1, vec[1] & 1);
	ck_assert_msg((vec[2] & 1) && !(vec[3] & 1),
		      "the first two pages of slots resident: %d %d", vec[2] & 1, vec[3] & 1);
	for (size_t i = 4; i < sizeof(vec); i++)
		ck_assert_msg(!(vec[i] & 1), "page %zu of the ring resident", i);
	/* What a short trace writes stays there. */
	ck_assert_uint_le(offsetof(mt_ring_hdr_t, path) + strlen(r.hdr->path), MT_RING_HDR_HOT);
	ck_assert_uint_le(offsetof(mt_ring_hdr_t, said) + sizeof(r.hdr->said), MT_RING_HDR_HOT);
	mt_spawn_unmap(&r);
	close(lfd);
}
END_TEST

Suite *mt_suite_core(void)
{
	Suite *s = suite_create("core");
	TCase *trace = tcase_create("trace");
	TCase *parts = tcase_create("parts");
	TCase *names = tcase_create("names");
	TCase *settings = tcase_create("settings");
	TCase *prefault = tcase_create("prefault");
	TCase *registration = tcase_create("registration");
	TCase *rules = tcase_create("rules");

	tcase_set_timeout(trace, 60);
	tcase_add_test(trace, test_core_trace_of_nothing_is_the_smallest_complete_trace);
	tcase_add_test(trace, test_core_records_every_event_kind_as_the_spec_names_it);
	tcase_add_test(trace, test_core_declares_each_frame_and_stack_once_before_use);
	tcase_add_test(trace, test_core_ignores_events_after_stop);
	tcase_add_test(trace, test_core_write_failure_keeps_what_fits_warns_once_and_stops_tracing);
	tcase_add_test(trace, test_core_threads_share_one_contiguous_seq);
	tcase_add_test(trace, test_core_threads_that_forbid_rdtsc_are_traced_without_it);
	tcase_add_test(trace, test_core_a_thread_that_forbids_rdtsc_later_is_asked_again);
	tcase_add_test(trace, test_core_threads_write_t_in_seq_order);
	suite_add_tcase(s, trace);
	tcase_add_test(parts, test_jsonl_block_layout_is_the_appenders_bytes);
	tcase_add_test(parts, test_a_forked_child_gets_the_frame_and_stack_tables_empty);
	tcase_add_test(parts, test_a_forked_child_keeps_the_tables_mappings_and_finds_them_empty);
	tcase_add_test(parts, test_a_forked_child_hashes_into_its_tables_first_page);
	tcase_add_test(parts, test_a_forked_child_reads_nothing_from_its_empty_table);
	tcase_add_test(parts, test_a_new_stack_cache_is_not_read_before_its_first_entry);
	tcase_add_test(parts, test_a_stack_cache_keeps_two_stacks_whose_hashes_meet);
	tcase_add_test(parts, test_symbols_name_static_functions_and_their_module);
	tcase_add_test(parts, test_symbols_read_a_modules_headers_when_a_frame_in_it_is_first_named);
	tcase_add_test(parts, test_symbols_read_the_module_table_at_the_first_frame_named);
	tcase_add_test(parts, test_name_cache_answers_only_for_the_same_address_in_the_same_file);
	tcase_add_test(parts, test_name_cache_is_shared_with_every_child_forked_since);
	tcase_add_test(parts, test_name_cache_keeps_nothing_more_once_full);
	tcase_add_test(parts, test_name_cache_shared_by_processes_adding_at_once_gives_whole_names);
	tcase_add_test(parts, test_name_cache_is_made_when_the_program_locks_down);
	tcase_add_test(parts, test_symbols_lock_down_makes_the_name_cache);
	tcase_add_test(parts, test_symbols_take_a_kept_name_without_reading_the_module);
	tcase_add_test(parts, test_real_arena_serves_bootstrap_memory_zeroed_and_aligned);
	tcase_add_test(parts, test_real_arena_gives_a_freed_block_out_again_zeroed);
	tcase_add_test(parts, test_jsonl_long_strings_are_cut_validly_and_marked);
	tcase_add_test(parts, test_jsonl_escapes_controls_and_replaces_bad_utf8);
	tcase_add_test(parts, test_stack_fork_waits_for_every_unwind_under_way);
	tcase_add_test(parts, test_stack_fork_waits_for_unwinds_in_shared_shards);
	tcase_add_test(parts, test_stack_no_unwind_begins_between_prepare_and_parent);
	tcase_add_test(parts, test_stack_fork_from_inside_an_unwind_waits_for_nothing);
	tcase_add_test(parts, test_stack_fork_child_forgets_the_parents_unwinds);
	tcase_add_test(parts, test_stack_an_unwind_nested_in_one_under_way_passes_a_closed_gate);
	tcase_add_test(parts, test_stack_a_fast_walk_goes_on_while_a_fork_is_pending);
	suite_add_tcase(s, parts);
	tcase_add_test(names, test_name_puts_the_pid_before_a_two_part_extension);
	tcase_add_test(names, test_name_puts_the_pid_before_the_last_components_extension);
	tcase_add_test(names, test_name_keeps_a_pattern_that_names_the_pid);
	tcase_add_test(names, test_name_reads_a_doubled_percent_as_a_literal_one);
	tcase_add_test(names, test_name_refuses_a_name_that_does_not_fit_rather_than_cut_it);
	suite_add_tcase(s, names);
	tcase_add_test(settings, test_settings_depth_is_a_number_of_frames_capped_at_the_most);
	tcase_add_test(settings, test_settings_ring_slots_are_a_power_of_two_from_64_to_16777216);
	tcase_add_test(settings, test_settings_fail_at_is_a_plain_decimal_and_empty_is_unset);
	tcase_add_test(settings, test_settings_unwind_names_libunwind_fast_or_verify);
	tcase_add_test(settings,
		       test_verify_says_the_first_frame_where_the_stacks_differ_and_ends_the_trace);
	tcase_add_test(settings, test_verify_says_none_past_the_end_of_the_shorter_stack);
	tcase_add_test(settings, test_settings_sample_takes_bytes_with_a_binary_suffix);
	tcase_add_test(settings, test_settings_stats_are_on_only_for_1);
	tcase_add_test(settings, test_settings_a_record_socket_too_long_leaves_the_program_untraced);
	suite_add_tcase(s, settings);
	tcase_add_test(prefault, test_prefault_makes_exactly_the_pages_asked_resident);
	tcase_add_test(prefault, test_prefault_is_off_where_a_seccomp_filter_is_in_place);
	tcase_add_test(prefault, test_prefault_goes_off_for_good_when_the_program_locks_down);
	tcase_add_test(prefault, test_prefault_goes_off_at_the_first_refusal);
	tcase_add_test(prefault, test_prefault_data_takes_the_variables_and_leaves_the_cold_arrays);
	tcase_add_test(prefault, test_prefault_data_leaves_a_small_cold_array_between_others_cold);
	tcase_add_test(prefault, test_the_preloads_small_variables_lie_together_and_its_cold_tables_last);
	tcase_add_test(prefault, test_a_grown_table_takes_no_fault_a_page);
	tcase_add_test(prefault, test_a_rings_first_lap_is_written_without_a_fault_a_page);
	tcase_add_test(prefault, test_a_registered_rings_header_is_written_without_a_fault);
	tcase_add_test(prefault, test_a_new_ring_makes_only_the_pages_a_short_trace_writes_resident);
	suite_add_tcase(s, prefault);
	tcase_add_test(registration,
		       test_a_program_registering_itself_sends_no_pidfd_where_the_collector_takes_its_own);
	tcase_add_test(registration, test_a_registration_is_as_long_as_its_trace_name);
	suite_add_tcase(s, registration);
	tcase_add_test(rules, test_a_fork_shares_rules_only_for_the_code_its_table_was_made_for);
	suite_add_tcase(s, rules);
	return s;
}
