/*
 * check_pipe: the two-thread pass.
 *
 *   mt_pipe     order, exactly-once, drains, idling, alignment, the
 *               consumer thread's life and the CPU count
 *   mt_reader   the read-ahead mode against the plain reader, line for
 *               line, on files built to stress it, with and without a
 *               second thread making its reads
 *   analysis    mt_analysis_run() with MEMTRACE_ANALYZER_THREADS=1 and =2
 *               on generated traces big enough that the second thread
 *               starts: the same verdict, messages, line numbers and heap,
 *               `memtrace summary` byte for byte, and out of memory
 *
 * The pass only starts its thread once a batch of 1024 held block events
 * is full, so the generated traces keep runs of block events longer than
 * that between the lines that drain the pipe, and the tests check (with
 * an observer) that the second thread did apply events.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "mt_test.h"
#include "../analyzer/mt_analysis.h"
#include "../analyzer/mt_error.h"
#include "../analyzer/mt_mem.h"
#include "../analyzer/mt_pipe.h"
#include "../analyzer/mt_reader.h"

/* The reader's read(2) size (mt_reader.c): lines are put across it. */
#define READER_CHUNK MT_READER_CHUNK

/* ---- shared ---- */

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A short pause of random length: mostly a few dozen spins, now and then
 * a yield or a sleep, so that each side of a pipe finds the other both
 * busy and asleep on its futex. */
static void jitter(uint64_t *s)
{
	uint64_t r = rng_next(s);

	if (r % 8192 == 0)
		usleep(50 + (useconds_t)((r >> 20) % 200));
	else if (r % 1024 == 1)
		sched_yield();
	else
		for (unsigned i = (unsigned)((r >> 32) % 48); i; i--)
			__asm__ __volatile__("" ::: "memory");
}

static void set_threads(const char *v)
{
	mt_quiet_int_eq(setenv("MEMTRACE_ANALYZER_THREADS", v, 1), 0);
}

/* Threads of this process now. */
static int task_count(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;

	mt_quiet(d != NULL, "opendir /proc/self/task: %s", strerror(errno));
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* A joined thread's entry may outlive the join by a moment. */
static void await_task_count(int want)
{
	for (int i = 0; i < 10000 && task_count() != want; i++)
		usleep(1000);
	mt_quiet_int_eq(task_count(), want);
}

/* read(2) calls this thread has made (/proc/thread-self/io), or -1.  The
 * call's own read counts only in the next one's answer. */
static long thread_reads(void)
{
	char buf[1024];
	int fd = open("/proc/thread-self/io", O_RDONLY | O_CLOEXEC);
	const char *p;
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "syscr:");
	return p ? strtol(p + 6, NULL, 10) : -1;
}

/* Whether thread_reads() can count: the kernel's task I/O accounting
 * (CONFIG_TASK_IO_ACCOUNTING) and a /proc that shows it; where it cannot,
 * found says what was there. */
static int thread_reads_countable(char *found, size_t size)
{
	int fd = open("/proc/thread-self/io", O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		snprintf(found, size, "/proc/thread-self/io: %s", strerror(errno));
		return 0;
	}
	close(fd);
	if (thread_reads() < 0) {
		snprintf(found, size, "/proc/thread-self/io has no syscr");
		return 0;
	}
	return 1;
}

static void write_file(const char *dir, const char *name, const char *data,
		       size_t len, char **path)
{
	*path = mt_test_path(dir, name);
	mt_test_write(*path, data, len);
}

/* ---- mt_pipe: order and exactly once ---- */

#define ORDER_WORDS 6

typedef struct {
	pthread_t producer;
	uint64_t expect, seen, off_thread, torn, misordered, first_bad;
	uint64_t rng;
} order_t;

static uint64_t order_word(uint64_t i, int k)
{
	return i * (uint64_t)(k + 1) + (uint64_t)k;
}

static void order_consume(void *ctx, void *slot)
{
	order_t *c = ctx;
	uint64_t *w = slot;

	if (!pthread_equal(pthread_self(), c->producer))
		c->off_thread++;
	jitter(&c->rng);
	for (int k = 1; k < ORDER_WORDS; k++)
		if (w[k] != order_word(w[0], k)) {
			if (!c->torn++ && !c->misordered)
				c->first_bad = c->seen;
			break;
		}
	if (w[0] != c->expect) {
		if (!c->misordered++ && !c->torn)
			c->first_bad = c->seen;
	}
	c->expect = w[0] + 1;
	c->seen++;
	/* A slot handed back to the producer before this returns, or
	 * consumed again before it is refilled, shows as torn or
	 * misordered. */
	memset(slot, 0xa5, ORDER_WORDS * sizeof(uint64_t));
}

static void order_run(unsigned nslots, uint64_t n, uint64_t seed)
{
	int64_t before = mt_mem_outstanding();
	uint64_t rng = seed;
	order_t c;
	mt_pipe_t p;

	memset(&c, 0, sizeof(c));
	c.producer = pthread_self();
	c.rng = seed * 31 + 7;
	mt_quiet_int_eq(mt_pipe_init(&p, ORDER_WORDS * sizeof(uint64_t), nslots,
				     order_consume, &c),
			MT_OK);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t *w = mt_pipe_slot(&p);

		/* A pause between the words: a consumer reading a slot
		 * still being filled sees it torn. */
		w[0] = i;
		for (int k = 1; k < ORDER_WORDS; k++) {
			if (k == 3)
				jitter(&rng);
			w[k] = order_word(i, k);
		}
		mt_pipe_publish(&p);
		jitter(&rng);
	}
	mt_pipe_drain(&p);
	mt_quiet(!c.torn && !c.misordered,
		 "%u slots: %ju torn, %ju out of order, the first at %ju",
		 nslots, (uintmax_t)c.torn, (uintmax_t)c.misordered,
		 (uintmax_t)c.first_bad);
	mt_quiet_uint_eq(c.seen, n);
	mt_quiet_uint_eq(c.expect, n);
	/* Every consume() on the thread the first publish started. */
	mt_quiet_uint_eq(c.off_thread, n);
	mt_pipe_release(&p);
	mt_quiet_uint_eq(c.seen, n);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}

START_TEST(pipe_consumes_each_slot_once_in_publish_order)
{
	order_run(4, 100000, 1);
	order_run(1, 20000, 2);
	order_run(2, 30000, 3);
	order_run(8, 30000, 4);
}
END_TEST

/* ---- mt_pipe: drains ---- */

typedef struct {
	uint64_t count, sum;
	uint64_t *log; /* consume()'s record of each value, in plain memory */
	uint64_t rng;
} vis_t;

static void vis_consume(void *ctx, void *slot)
{
	vis_t *c = ctx;
	uint64_t v = *(const uint64_t *)slot;

	jitter(&c->rng);
	c->log[c->count] = v * 3 + 1;
	c->sum += v;
	c->count++;
}

START_TEST(pipe_drain_makes_the_consumers_writes_visible)
{
	const uint64_t total = 40000;
	int64_t before = mt_mem_outstanding();
	uint64_t published = 0, sum = 0, checked = 0, rng = 11;
	vis_t c;
	mt_pipe_t p;

	memset(&c, 0, sizeof(c));
	c.rng = 5;
	c.log = calloc(total, sizeof(uint64_t));
	mt_quiet_ptr_nonnull(c.log);
	mt_quiet_int_eq(mt_pipe_init(&p, sizeof(uint64_t), 4, vis_consume, &c),
			MT_OK);
	while (published < total) {
		uint64_t k = 1 + rng_next(&rng) % 40;

		for (; k && published < total; k--) {
			*(uint64_t *)mt_pipe_slot(&p) = published;
			sum += published++;
			mt_pipe_publish(&p);
		}
		mt_pipe_drain(&p);
		/* Everything consume() wrote for the slots so far, and not
		 * one slot more. */
		mt_quiet_uint_eq(c.count, published);
		mt_quiet_uint_eq(c.sum, sum);
		for (; checked < published; checked++)
			mt_quiet_uint_eq(c.log[checked], checked * 3 + 1);
		/* A drain with nothing in flight returns at once. */
		mt_pipe_drain(&p);
		mt_quiet_uint_eq(c.count, published);
	}
	mt_pipe_release(&p);
	mt_quiet_uint_eq(c.count, total);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
	free(c.log);
}
END_TEST

/* ---- mt_pipe: idling ---- */

typedef struct {
	pthread_t producer;
	atomic_uint by_producer, by_consumer, wrong_ctx;
	/* consume() returns once the producer has idled: it is waiting for
	 * it, whatever the scheduler makes of a sleep. */
	atomic_int consume_awaits_producer;
} idle_ctx_t;

/* Long enough to mean "never" for a side that is waiting and idling. */
#define IDLE_DEADLINE_US 10000000u
#define IDLE_POLL_US 200u

/* Sleep until *count is above 0, or IDLE_DEADLINE_US have passed (the
 * assertion after it then fails). */
static void idle_await(atomic_uint *count)
{
	for (unsigned waited = 0; !atomic_load(count) && waited < IDLE_DEADLINE_US;
	     waited += IDLE_POLL_US)
		usleep(IDLE_POLL_US);
}

static idle_ctx_t *idle_expected;

static void idle_count(void *ctx)
{
	idle_ctx_t *c = ctx;

	if (c != idle_expected) {
		atomic_fetch_add(&idle_expected->wrong_ctx, 1);
		return;
	}
	if (pthread_equal(pthread_self(), c->producer))
		atomic_fetch_add(&c->by_producer, 1);
	else
		atomic_fetch_add(&c->by_consumer, 1);
}

static void idle_consume(void *ctx, void *slot)
{
	idle_ctx_t *c = ctx;

	(void)slot;
	if (atomic_load(&c->consume_awaits_producer))
		idle_await(&c->by_producer);
}

START_TEST(pipe_a_waiting_side_calls_the_idle_work)
{
	int64_t before = mt_mem_outstanding();
	idle_ctx_t c;
	mt_pipe_t p;

	memset(&c, 0, sizeof(c));
	c.producer = pthread_self();
	idle_expected = &c;
	mt_quiet_int_eq(mt_pipe_init(&p, 64, 4, idle_consume, &c), MT_OK);
	mt_pipe_set_idle(&p, idle_count);

	/* The producer waits in a drain for a consume() that waits for the
	 * producer to idle. */
	atomic_store(&c.consume_awaits_producer, 1);
	mt_pipe_slot(&p);
	mt_pipe_publish(&p);
	mt_pipe_drain(&p);
	mt_quiet_uint_gt(atomic_load(&c.by_producer), 0);

	/* The consumer waits for a slot while the producer does nothing. */
	atomic_store(&c.consume_awaits_producer, 0);
	atomic_store(&c.by_consumer, 0);
	mt_pipe_slot(&p);
	mt_pipe_publish(&p);
	idle_await(&c.by_consumer);
	mt_pipe_drain(&p);
	mt_quiet_uint_gt(atomic_load(&c.by_consumer), 0);

	/* And the producer waits for a free slot: the first consume() waits
	 * for the producer to idle, so four slots fill the ring and the
	 * fifth mt_pipe_slot() waits. */
	atomic_store(&c.by_producer, 0);
	atomic_store(&c.consume_awaits_producer, 1);
	for (int i = 0; i < 5; i++) {
		mt_pipe_slot(&p);
		mt_pipe_publish(&p);
	}
	mt_quiet_uint_gt(atomic_load(&c.by_producer), 0);
	mt_pipe_release(&p);
	mt_quiet_uint_eq(atomic_load(&c.wrong_ctx), 0);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

/* ---- mt_pipe: slots ---- */

static void count_consume(void *ctx, void *slot)
{
	(void)slot;
	(*(uint64_t *)ctx)++;
}

static size_t distance(const unsigned char *a, const unsigned char *b)
{
	return a > b ? (size_t)(a - b) : (size_t)(b - a);
}

START_TEST(pipe_slots_are_aligned_cache_lines_that_never_overlap)
{
	static const size_t sizes[] = { 1, 8, 63, 64, 65, 200, 4104 };
	int64_t before = mt_mem_outstanding();

	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
		for (unsigned nslots = 1; nslots <= 8; nslots *= 2) {
			unsigned char *addr[8];
			uint64_t calls = 0;
			mt_pipe_t p;

			mt_quiet_int_eq(mt_pipe_init(&p, sizes[si], nslots,
						     count_consume, &calls),
					MT_OK);
			for (unsigned j = 0; j < 3 * nslots; j++) {
				unsigned char *s = mt_pipe_slot(&p);

				mt_quiet((uintptr_t)s % 64 == 0,
					 "size %zu, %u slots: slot %u at %p",
					 sizes[si], nslots, j, (void *)s);
				/* All of it writable (the sanitizers see
				 * a write past the end). */
				memset(s, (int)j, sizes[si]);
				if (j < nslots)
					addr[j] = s;
				mt_pipe_publish(&p);
				mt_pipe_drain(&p);
			}
			/* Any nslots slots in a row may be in flight at
			 * once: no two of them share a byte. */
			for (unsigned a = 0; a < nslots; a++)
				for (unsigned b = a + 1; b < nslots; b++) {
					size_t d = distance(addr[a], addr[b]);

					mt_quiet(d >= sizes[si],
						 "size %zu: slots %u and %u "
						 "are %zu bytes apart",
						 sizes[si], a, b, d);
				}
			mt_pipe_release(&p);
			mt_quiet_uint_eq(calls, 3 * nslots);
		}
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

/* ---- mt_pipe: the thread's life ---- */

START_TEST(pipe_release_without_a_publish_starts_no_thread_and_frees_all)
{
	int64_t before = mt_mem_outstanding();
	int tasks = task_count();
	uint64_t calls = 0;
	mt_pipe_t p;

	mt_quiet_int_eq(mt_pipe_init(&p, 100, 4, count_consume, &calls), MT_OK);
	mt_quiet_uint_gt(mt_mem_outstanding(), before);
	memset(mt_pipe_slot(&p), 1, 100);
	mt_pipe_drain(&p); /* nothing published: returns at once */
	mt_quiet_int_eq(task_count(), tasks);
	mt_pipe_release(&p);
	mt_quiet_uint_eq(calls, 0);
	mt_quiet_int_eq(task_count(), tasks);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

/* What a pipe whose thread could not start did with each slot. */
typedef struct {
	pid_t tid;
	uint64_t next, wrong_thread, wrong_order;
} here_t;

static void here_consume(void *ctx, void *slot)
{
	here_t *h = ctx;

	if ((pid_t)syscall(SYS_gettid) != h->tid)
		h->wrong_thread++;
	if (*(uint64_t *)slot != h->next)
		h->wrong_order++;
	h->next++;
}

START_TEST(pipe_without_its_thread_consumes_each_slot_on_the_producer)
{
	int64_t before = mt_mem_outstanding();
	int tasks = task_count();
	here_t h = { .tid = (pid_t)syscall(SYS_gettid) };
	mt_pipe_t p;

	mt_quiet_int_eq(mt_pipe_init(&p, sizeof(uint64_t), 4, here_consume, &h),
			MT_OK);
	/* What mt_pipe_publish() records when pthread_create() fails. */
	p.started = -1;
	for (uint64_t i = 0; i < 1000; i++) {
		*(uint64_t *)mt_pipe_slot(&p) = i;
		mt_pipe_publish(&p);
		if (i % 100 == 0)
			mt_pipe_drain(&p);
	}
	mt_pipe_drain(&p);
	mt_quiet_uint_eq(h.next, 1000);
	mt_quiet_uint_eq(h.wrong_thread, 0);
	mt_quiet_uint_eq(h.wrong_order, 0);
	mt_quiet_int_eq(task_count(), tasks);
	mt_pipe_release(&p);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

START_TEST(pipe_init_out_of_memory_leaves_a_releasable_pipe)
{
	int64_t before = mt_mem_outstanding();
	uint64_t calls = 0;
	mt_pipe_t p;

	mt_mem_fail_at(1, 0);
	mt_quiet_int_eq(mt_pipe_init(&p, 4096, 4, count_consume, &calls),
			MT_ENOMEM);
	mt_mem_fail_at(0, 0);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
	mt_pipe_release(&p);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
	mt_quiet_uint_eq(calls, 0);
}
END_TEST

typedef struct {
	atomic_uint count;
} slow_t;

static void slow_consume(void *ctx, void *slot)
{
	slow_t *c = ctx;

	(void)slot;
	usleep(10000);
	atomic_fetch_add(&c->count, 1);
}

START_TEST(pipe_release_consumes_every_published_slot_and_joins_its_thread)
{
	int64_t before = mt_mem_outstanding();
	int tasks = task_count(), running;
	slow_t c;
	mt_pipe_t p;

	atomic_init(&c.count, 0);
	mt_quiet_int_eq(mt_pipe_init(&p, 64, 4, slow_consume, &c), MT_OK);
	mt_pipe_slot(&p);
	mt_pipe_publish(&p);
	/* The first publish started the consumer (and under TSan, the
	 * sanitizer's own thread may have started with it). */
	running = task_count();
	mt_quiet_uint_gt(running, tasks);
	for (int i = 0; i < 3; i++) {
		mt_pipe_slot(&p);
		mt_pipe_publish(&p);
	}
	/* Published, most of them not consumed yet: release waits. */
	mt_pipe_release(&p);
	mt_quiet_uint_eq(atomic_load(&c.count), 4);
	await_task_count(running - 1);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

START_TEST(pipe_cpus_counts_the_affinity_mask)
{
	cpu_set_t all, some;
	int n, first = -1, second = -1;

	mt_quiet_int_eq(sched_getaffinity(0, sizeof(all), &all), 0);
	n = CPU_COUNT(&all);
	mt_quiet_int_eq(mt_pipe_cpus(), n);
	mt_quiet_uint_ge(mt_pipe_cpus(), 1);
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &all)) {
			if (first < 0)
				first = i;
			else if (second < 0)
				second = i;
		}
	CPU_ZERO(&some);
	CPU_SET(first, &some);
	mt_quiet_int_eq(sched_setaffinity(0, sizeof(some), &some), 0);
	mt_quiet_int_eq(mt_pipe_cpus(), 1);
	if (second >= 0) {
		CPU_SET(second, &some);
		mt_quiet_int_eq(sched_setaffinity(0, sizeof(some), &some), 0);
		mt_quiet_int_eq(mt_pipe_cpus(), 2);
	}
	mt_quiet_int_eq(sched_setaffinity(0, sizeof(all), &all), 0);
	mt_quiet_int_eq(mt_pipe_cpus(), n);
	if (second < 0)
		MT_TEST_SKIP("a mask of two CPUs is not counted here, one is "
			     "(affinity mask: %d CPU)", n);
}
END_TEST

/* ---- mt_reader: read-ahead against the plain reader ---- */

typedef struct {
	uint64_t number;
	size_t len, off; /* its data is bytes[off..off + len) */
	int terminated, too_long;
} rec_t;

typedef struct {
	rec_t *v;
	size_t n, cap;
	char *bytes;
	size_t nbytes, bcap;
	int zero_padded;
	long helper_reads; /* -1: no helper */
} rlog_t;

static void rlog_add(rlog_t *g, uint64_t number, const char *data, size_t len,
		     int terminated, int too_long)
{
	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 1024;
		g->v = realloc(g->v, g->cap * sizeof(*g->v));
		mt_quiet_ptr_nonnull(g->v);
	}
	if (g->nbytes + len > g->bcap) {
		while (g->nbytes + len > g->bcap)
			g->bcap = g->bcap ? 2 * g->bcap : 1 << 16;
		g->bytes = realloc(g->bytes, g->bcap);
		mt_quiet_ptr_nonnull(g->bytes);
	}
	if (len)
		memcpy(g->bytes + g->nbytes, data, len);
	g->v[g->n++] = (rec_t){ .number = number,
				.len = len,
				.off = g->nbytes,
				.terminated = terminated,
				.too_long = too_long };
	g->nbytes += len;
}

static void rlog_free(rlog_t *g)
{
	free(g->v);
	free(g->bytes);
	memset(g, 0, sizeof(*g));
}

/* A thread calling mt_reader_ahead_run() without pause until stopped,
 * counting the read(2) calls it made.  helper_start() returns once it
 * runs: a thread the scheduler starts late could otherwise miss a whole
 * test's reads. */
typedef struct {
	mt_reader_t *r;
	atomic_int stop, running;
	pthread_t thread;
	long reads;
} helper_t;

static void *helper_main(void *arg)
{
	helper_t *h = arg;
	long start = thread_reads(), end;

	atomic_store_explicit(&h->running, 1, memory_order_release);
	while (!atomic_load_explicit(&h->stop, memory_order_acquire))
		mt_reader_ahead_run(h->r);
	end = thread_reads();
	h->reads = start < 0 || end < 0 ? -1 : end - start - 1;
	return NULL;
}

static void helper_start(helper_t *h, mt_reader_t *r)
{
	h->r = r;
	h->reads = -1;
	atomic_init(&h->stop, 0);
	atomic_init(&h->running, 0);
	mt_quiet_int_eq(pthread_create(&h->thread, NULL, helper_main, h), 0);
	while (!atomic_load_explicit(&h->running, memory_order_acquire))
		sched_yield();
}

static long helper_stop(helper_t *h)
{
	atomic_store_explicit(&h->stop, 1, memory_order_release);
	mt_quiet_int_eq(pthread_join(h->thread, NULL), 0);
	return h->reads;
}

enum {
	R_AHEAD = 1,  /* mt_reader_ahead_enable() */
	R_HELPER = 2, /* with a helper_t spinning on mt_reader_ahead_run() */
	R_TAKE = 4,   /* every other line by window and take, as the pass */
};

static void reader_open_ok(mt_reader_t *r, const char *path)
{
	int rc = mt_reader_open(r, path);

	mt_quiet(rc == MT_OK, "mt_reader_open(%s) = %d: %s", path, rc,
		 strerror(errno));
}

/* Every line to the end, then the end again. */
static void read_lines(mt_reader_t *r, int take, rlog_t *g)
{
	mt_line_t line;
	int got;

	for (;;) {
		size_t avail;
		const char *w = mt_reader_window(r, &avail);
		const char *nl = avail ? memchr(w, '\n', avail) : NULL;

		if (take && nl && (size_t)(nl - w) <= MT_READER_LINE_MAX &&
		    g->n % 2) {
			size_t len = (size_t)(nl - w);
			const char *data = w;
			uint64_t number = mt_reader_take(r, len);

			rlog_add(g, number, data, len, 1, 0);
			continue;
		}
		got = mt_reader_next(r, &line);
		mt_quiet(got >= 0, "mt_reader_next = %d: %s", got,
			 strerror(errno));
		if (!got)
			break;
		rlog_add(g, line.number, line.data, line.len, line.terminated,
			 line.too_long);
	}
	mt_quiet_int_eq(mt_reader_next(r, &line), 0);
	mt_quiet_int_eq(mt_reader_next(r, &line), 0);
}

static void read_log(const char *path, int mode, rlog_t *g)
{
	int64_t before = mt_mem_outstanding();
	mt_reader_t r;
	helper_t h;

	memset(g, 0, sizeof(*g));
	g->helper_reads = -1;
	reader_open_ok(&r, path);
	if (mode & R_AHEAD)
		mt_quiet_int_eq(mt_reader_ahead_enable(&r), MT_OK);
	if (mode & R_HELPER)
		helper_start(&h, &r);
	read_lines(&r, mode & R_TAKE, g);
	g->zero_padded = r.zero_padded;
	/* The helper still spinning while the reader goes. */
	mt_reader_release(&r);
	if (mode & R_HELPER)
		g->helper_reads = helper_stop(&h);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}

static void same_log(const char *what, int mode, const rlog_t *a,
		     const rlog_t *b)
{
	mt_quiet(a->n == b->n, "%s, mode %d: %zu lines vs %zu", what, mode,
		 a->n, b->n);
	mt_quiet_int_eq(a->zero_padded, b->zero_padded);
	for (size_t i = 0; i < a->n; i++) {
		const rec_t *x = &a->v[i], *y = &b->v[i];

		mt_quiet(x->number == y->number && x->len == y->len &&
				 x->terminated == y->terminated &&
				 x->too_long == y->too_long,
			 "%s, mode %d, line %zu: number %ju/%ju, len %zu/%zu, "
			 "terminated %d/%d, too_long %d/%d",
			 what, mode, i + 1, (uintmax_t)x->number,
			 (uintmax_t)y->number, x->len, y->len, x->terminated,
			 y->terminated, x->too_long, y->too_long);
		mt_quiet(!memcmp(a->bytes + x->off, b->bytes + y->off, x->len),
			 "%s, mode %d: line %ju's bytes differ", what, mode,
			 (uintmax_t)x->number);
	}
}

/* The files.  Each builder returns a malloc'd file and its length. */

static void fill_text(char *p, size_t n, size_t salt)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (char)('!' + (salt + i) % 90);
}

static char *build_chunk_crossing(size_t *len)
{
	/* Lines of 1 to 700 bytes over three reads' worth, some ending
	 * exactly at a multiple of the read size, one byte before or after
	 * it. */
	size_t cap = 3 * READER_CHUNK, n = 0, lines = 0;
	char *d = malloc(cap + 4096);

	mt_quiet_ptr_nonnull(d);
	while (n < cap) {
		size_t k = 1 + (lines * 7919) % 700;
		size_t to_chunk = READER_CHUNK - n % READER_CHUNK;

		if (lines % 61 == 0 && to_chunk > 2 && to_chunk < 800)
			k = to_chunk - 2 + lines % 3;
		fill_text(d + n, k, lines);
		n += k;
		d[n++] = '\n';
		lines++;
	}
	*len = n;
	return d;
}

static char *build_long_lines(size_t *len)
{
	/* Lines as long as the reader keeps, each after a short one: each
	 * one's start is copied across a swap. */
	static const size_t longs[] = { 300000, 5, 600000, 1000000,
					MT_READER_LINE_MAX - 1, 17, 270000 };
	size_t n = 0;
	char *d = malloc(8u << 20);

	mt_quiet_ptr_nonnull(d);
	for (size_t i = 0; i < sizeof(longs) / sizeof(longs[0]); i++) {
		n += (size_t)sprintf(d + n, "short %zu\n", i);
		fill_text(d + n, longs[i], i);
		n += longs[i];
		d[n++] = '\n';
	}
	*len = n;
	return d;
}

/* A line of exactly MT_READER_LINE_MAX bytes, one of one more and one of
 * 5 MiB, each after a line whose length puts it at offset in its read,
 * and an unterminated last line of MT_READER_LINE_MAX. */
static char *build_line_max_at(size_t *len, size_t offset)
{
	size_t n = 0;
	/* Three pads of less than a read, the three lines, the last one. */
	char *d = malloc(3 * READER_CHUNK + 3 * MT_READER_LINE_MAX + (5u << 20) + 64);

	mt_quiet_ptr_nonnull(d);
	for (int i = 0; i < 3; i++) {
		size_t pad = (offset + READER_CHUNK - n % READER_CHUNK - 1) %
			     READER_CHUNK;
		size_t big = i == 0 ? MT_READER_LINE_MAX :
			     i == 1 ? MT_READER_LINE_MAX + 1 : 5u << 20;

		fill_text(d + n, pad, 3);
		n += pad;
		d[n++] = '\n';
		fill_text(d + n, big, (size_t)i);
		n += big;
		d[n++] = '\n';
	}
	n += (size_t)sprintf(d + n, "d\n");
	memset(d + n, 'q', MT_READER_LINE_MAX);
	n += MT_READER_LINE_MAX;
	*len = n;
	return d;
}

static char *build_line_max(size_t *len)
{
	return build_line_max_at(len, 0);
}

static char *build_line_max_late(size_t *len)
{
	return build_line_max_at(len, READER_CHUNK - 3);
}

static char *build_too_long_last(size_t *len)
{
	size_t n = 0;
	char *d = malloc(MT_READER_LINE_MAX + 64);

	mt_quiet_ptr_nonnull(d);
	n += (size_t)sprintf(d, "x\n");
	memset(d + n, 'z', MT_READER_LINE_MAX + 7);
	*len = n + MT_READER_LINE_MAX + 7;
	return d;
}

static char *build_no_final_newline(size_t *len)
{
	size_t n = 0;
	char *d = malloc(1u << 20);

	mt_quiet_ptr_nonnull(d);
	for (int i = 0; i < 5000; i++)
		n += (size_t)sprintf(d + n, "{\"line\":%d}\n", i);
	n += (size_t)sprintf(d + n, "last");
	*len = n;
	return d;
}

static char *build_zero_tail(size_t *len)
{
	/* Content of more than two reads, the last one short of a chunk:
	 * the read asked for ahead must stop where the padding starts. */
	size_t n = 0, pad = 200000, want = 2 * READER_CHUNK + READER_CHUNK / 2;
	char *d = calloc(1, want + 64 + pad);

	mt_quiet_ptr_nonnull(d);
	for (int i = 0; n < want; i++)
		n += (size_t)sprintf(d + n, "line %d\n", i);
	*len = n + pad;
	return d;
}

static char *build_cut_into_zeros(size_t *len)
{
	size_t n = 0, pad = 70000;
	char *d = calloc(1, (1u << 20) + pad);

	mt_quiet_ptr_nonnull(d);
	for (int i = 0; i < 40000; i++)
		n += (size_t)sprintf(d + n, "%d\n", i);
	n += (size_t)sprintf(d + n, "partial");
	*len = n + pad;
	return d;
}

static char *build_too_long_into_zeros(size_t *len)
{
	size_t n = 0, pad = 100000;
	char *d = calloc(1, (6u << 20) + pad);

	mt_quiet_ptr_nonnull(d);
	n += (size_t)sprintf(d, "first\n");
	memset(d + n, 'y', 5u << 20);
	*len = n + (5u << 20) + pad;
	return d;
}

static char *build_empty(size_t *len)
{
	*len = 0;
	return calloc(1, 1);
}

static char *build_only_zeros(size_t *len)
{
	*len = 300000;
	return calloc(1, 300000);
}

static char *build_one_zero(size_t *len)
{
	*len = 1;
	return calloc(1, 1);
}

static char *build_many_short(size_t *len)
{
	size_t n = 0, lines = 700000;
	char *d = malloc(lines * 4);

	mt_quiet_ptr_nonnull(d);
	for (size_t i = 0; i < lines; i++) {
		size_t k = (i * 2654435761u) % 4;

		fill_text(d + n, k, i);
		n += k;
		d[n++] = '\n';
	}
	*len = n;
	return d;
}

/* Exactly two reads' worth, its last byte a '\n' or not. */
static char *build_exact_reads(size_t *len, int terminated)
{
	size_t n = 0, want = 2 * READER_CHUNK;
	char *d = malloc(want);

	mt_quiet_ptr_nonnull(d);
	while (n < want) {
		size_t k = 1 + n % 97;

		if (k > want - n - 1)
			k = want - n - 1;
		fill_text(d + n, k, n);
		n += k;
		d[n++] = '\n';
	}
	if (!terminated)
		d[want - 1] = 'e';
	*len = want;
	return d;
}

static char *build_exact_reads_terminated(size_t *len)
{
	return build_exact_reads(len, 1);
}

static char *build_exact_reads_unterminated(size_t *len)
{
	return build_exact_reads(len, 0);
}

static char *build_inner_zeros(size_t *len)
{
	/* Runs of NUL bytes inside, not at the end: content. */
	size_t n = 0;
	char *d = calloc(1, 1u << 20);

	mt_quiet_ptr_nonnull(d);
	for (int i = 0; i < 300; i++) {
		n += (size_t)sprintf(d + n, "line %d", i);
		n += (size_t)(i % 7) * 300; /* zeros */
		d[n++] = '\n';
	}
	n += (size_t)sprintf(d + n, "end\n");
	*len = n;
	return d;
}

typedef struct {
	const char *name;
	char *(*build)(size_t *len);
} rfile_case_t;

static const rfile_case_t reader_files[] = {
	{ "chunk_crossing", build_chunk_crossing },
	{ "long_lines", build_long_lines },
	{ "line_max", build_line_max },
	{ "line_max_late", build_line_max_late },
	{ "too_long_last", build_too_long_last },
	{ "no_final_newline", build_no_final_newline },
	{ "zero_tail", build_zero_tail },
	{ "cut_into_zeros", build_cut_into_zeros },
	{ "too_long_into_zeros", build_too_long_into_zeros },
	{ "empty", build_empty },
	{ "only_zeros", build_only_zeros },
	{ "one_zero", build_one_zero },
	{ "many_short", build_many_short },
	{ "exact_reads", build_exact_reads_terminated },
	{ "exact_reads_unterminated", build_exact_reads_unterminated },
	{ "inner_zeros", build_inner_zeros },
};
#define NREADER_FILES (sizeof(reader_files) / sizeof(reader_files[0]))

/* Read every file plainly and in each of modes, and compare; returns the
 * reads the helpers made, where thread_reads() counts them (count). */
static long reader_modes_match(const int *modes, size_t nmodes, int count)
{
	char *dir = mt_test_tmpdir();
	long helper_reads = 0;

	for (size_t f = 0; f < NREADER_FILES; f++) {
		size_t len;
		char *data = reader_files[f].build(&len);
		char *path;
		rlog_t plain;

		mt_quiet_ptr_nonnull(data);
		write_file(dir, reader_files[f].name, data, len, &path);
		free(data);
		read_log(path, 0, &plain);
		for (size_t m = 0; m < nmodes; m++) {
			rlog_t ahead;

			read_log(path, modes[m], &ahead);
			same_log(reader_files[f].name, modes[m], &plain,
				 &ahead);
			if ((modes[m] & R_HELPER) && count) {
				mt_quiet(ahead.helper_reads >= 0,
					 "/proc/thread-self/io is unreadable");
				helper_reads += ahead.helper_reads;
			}
			rlog_free(&ahead);
		}
		rlog_free(&plain);
		free(path);
	}
	mt_test_rmdir(dir);
	free(dir);
	return helper_reads;
}

START_TEST(reader_ahead_gives_the_plain_readers_lines)
{
	static const int modes[] = { R_AHEAD, R_AHEAD | R_TAKE };

	reader_modes_match(modes, 2, 0);
}
END_TEST

START_TEST(reader_ahead_gives_the_plain_readers_lines_with_a_helper_reading)
{
	static const int modes[] = { R_AHEAD | R_HELPER,
				     R_AHEAD | R_HELPER | R_TAKE };
	char found[256];
	int count = thread_reads_countable(found, sizeof(found));
	long reads = reader_modes_match(modes, 2, count);

	/* The helper did make reads: the comparison covered them. */
	if (!count) {
		MT_TEST_SKIP("the helpers' reads go uncounted, their lines "
			     "compared all the same (%s)", found);
		return;
	}
	mt_quiet(reads > 0, "the helper threads made %ld reads", reads);
}
END_TEST

/* A pipe on standard input, fed in chunks of random size by a writer
 * thread, so that reads come back short. */
typedef struct {
	int fd;
	const char *data;
	size_t len;
	uint64_t rng;
} feeder_t;

static void *feeder_main(void *arg)
{
	feeder_t *f = arg;
	size_t off = 0;

	while (off < f->len) {
		size_t k = 1 + rng_next(&f->rng) % 100000;
		ssize_t w;

		if (k > f->len - off)
			k = f->len - off;
		w = write(f->fd, f->data + off, k);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	close(f->fd);
	return NULL;
}

static void read_stdin_log(const char *data, size_t len, int mode,
			   uint64_t seed, rlog_t *g)
{
	int64_t before = mt_mem_outstanding();
	int fds[2], saved = dup(0);
	pthread_t th;
	feeder_t f;
	mt_reader_t r;
	helper_t h;

	mt_quiet(saved >= 0, "dup: %s", strerror(errno));
	mt_quiet_int_eq(pipe(fds), 0);
	mt_quiet_int_eq(dup2(fds[0], 0), 0);
	close(fds[0]);
	f = (feeder_t){ .fd = fds[1], .data = data, .len = len, .rng = seed };
	mt_quiet_int_eq(pthread_create(&th, NULL, feeder_main, &f), 0);
	memset(g, 0, sizeof(*g));
	reader_open_ok(&r, "-");
	if (mode & R_AHEAD)
		mt_quiet_int_eq(mt_reader_ahead_enable(&r), MT_OK);
	if (mode & R_HELPER)
		helper_start(&h, &r);
	read_lines(&r, mode & R_TAKE, g);
	g->zero_padded = r.zero_padded;
	mt_reader_release(&r);
	if (mode & R_HELPER)
		helper_stop(&h);
	mt_quiet_int_eq(pthread_join(th, NULL), 0);
	mt_quiet_int_eq(dup2(saved, 0), 0);
	close(saved);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}

START_TEST(reader_ahead_gives_the_plain_readers_lines_from_a_pipe)
{
	static char *(*const builds[])(size_t *) = {
		build_chunk_crossing, build_line_max, build_many_short,
		build_zero_tail, build_no_final_newline, build_empty,
	};
	static const int modes[] = { R_AHEAD, R_AHEAD | R_HELPER,
				     R_AHEAD | R_HELPER | R_TAKE };

	for (size_t b = 0; b < sizeof(builds) / sizeof(builds[0]); b++) {
		size_t len;
		char *data = builds[b](&len);
		rlog_t plain;

		mt_quiet_ptr_nonnull(data);
		read_stdin_log(data, len, 0, 1 + b, &plain);
		for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
			rlog_t ahead;
			char what[32];

			snprintf(what, sizeof(what), "pipe %zu", b);
			read_stdin_log(data, len, modes[m], 100 + b * 7 + m,
				       &ahead);
			same_log(what, modes[m], &plain, &ahead);
			rlog_free(&ahead);
		}
		rlog_free(&plain);
		free(data);
	}
}
END_TEST

static void spin_us(uint64_t us)
{
	struct timespec t0, t;
	int64_t ns;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		clock_gettime(CLOCK_MONOTONIC, &t);
		ns = (int64_t)(t.tv_sec - t0.tv_sec) * 1000000000 +
		     (t.tv_nsec - t0.tv_nsec);
	} while (ns < (int64_t)us * 1000);
}

/*
 * Released after a few lines, while the read asked for next may be in
 * flight on the helper: the release waits for it (or cancels it) before
 * it frees the buffer it lands in.  The sanitizers see a read into freed
 * memory; here the helpers must at least have made some of those reads.
 */
START_TEST(reader_ahead_release_mid_file_waits_for_a_read_in_flight)
{
	char *dir = mt_test_tmpdir();
	int64_t before = mt_mem_outstanding();
	uint64_t rng = 77;
	long reads = 0;
	size_t len;
	char *data = build_chunk_crossing(&len);
	char *path, found[256];
	int cpus = mt_test_cpus();
	int count = thread_reads_countable(found, sizeof(found));

	write_file(dir, "trace.jsonl", data, len, &path);
	free(data);
	for (int i = 0; i < 300; i++) {
		uint64_t lines = rng_next(&rng) % 64;
		mt_reader_t r;
		mt_line_t line;
		helper_t h;
		long got;

		reader_open_ok(&r, path);
		mt_quiet_int_eq(mt_reader_ahead_enable(&r), MT_OK);
		helper_start(&h, &r);
		for (uint64_t k = 0; k <= lines; k++)
			mt_quiet_int_eq(mt_reader_next(&r, &line), 1);
		/* Long enough, at times, for the helper to start and be
		 * amid the read. */
		spin_us(rng_next(&rng) % 200);
		mt_reader_release(&r);
		got = helper_stop(&h);
		mt_quiet(got >= 0 || !count, "/proc/thread-self/io is unreadable");
		reads += got;
		mt_quiet_int_eq(mt_mem_outstanding(), before);
	}
	mt_test_rmdir(dir);
	free(dir);
	free(path);
	/* A helper amid a read as the reader goes needs a CPU of its own:
	 * on one, it runs when the reader is done (0 reads in 300 rounds). */
	if (!count)
		MT_TEST_SKIP("the helpers' reads go uncounted (%s)", found);
	else if (cpus < 2)
		MT_TEST_SKIP("no helper reads amid a release on one CPU "
			     "(affinity mask: %d CPU)", cpus);
	else
		mt_quiet(reads > 0, "the helpers made %ld reads", reads);
}
END_TEST

/* Standard input the write end of a pipe: the first read fails. */
START_TEST(reader_ahead_reports_a_read_error_as_the_plain_reader_does)
{
	static const int modes[] = { 0, R_AHEAD, R_AHEAD | R_HELPER };

	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		int64_t before = mt_mem_outstanding();
		int fds[2], saved = dup(0), rc;
		mt_reader_t r;
		mt_line_t line;
		helper_t h;

		mt_quiet(saved >= 0, "dup: %s", strerror(errno));
		mt_quiet_int_eq(pipe(fds), 0);
		mt_quiet_int_eq(dup2(fds[1], 0), 0);
		close(fds[1]);
		reader_open_ok(&r, "-");
		if (modes[m] & R_AHEAD)
			mt_quiet_int_eq(mt_reader_ahead_enable(&r), MT_OK);
		if (modes[m] & R_HELPER)
			helper_start(&h, &r);
		errno = 0;
		rc = mt_reader_next(&r, &line);
		mt_quiet(rc == MT_EIO && errno == EBADF,
			 "mode %d: mt_reader_next = %d, errno %d", modes[m], rc,
			 errno);
		mt_reader_release(&r);
		if (modes[m] & R_HELPER)
			helper_stop(&h);
		mt_quiet_int_eq(dup2(saved, 0), 0);
		close(saved);
		close(fds[0]);
		mt_quiet_int_eq(mt_mem_outstanding(), before);
	}
}
END_TEST

START_TEST(reader_ahead_enable_out_of_memory_leaves_a_working_plain_reader)
{
	char *dir = mt_test_tmpdir();
	int64_t start = mt_mem_outstanding(), opened;
	size_t len;
	char *data = build_chunk_crossing(&len);
	char *path, found[256];
	rlog_t plain, got;
	mt_reader_t r;
	helper_t h;

	write_file(dir, "trace.jsonl", data, len, &path);
	free(data);
	read_log(path, 0, &plain);
	reader_open_ok(&r, path);
	opened = mt_mem_outstanding();
	mt_mem_fail_at(1, 0);
	mt_quiet_int_eq(mt_reader_ahead_enable(&r), MT_ENOMEM);
	mt_mem_fail_at(0, 0);
	mt_quiet_int_eq(mt_mem_outstanding(), opened);
	/* A helper finds no read asked for, ever. */
	helper_start(&h, &r);
	memset(&got, 0, sizeof(got));
	read_lines(&r, 1, &got);
	got.zero_padded = r.zero_padded;
	mt_reader_release(&r);
	if (thread_reads_countable(found, sizeof(found)))
		mt_quiet_int_eq(helper_stop(&h), 0);
	else {
		helper_stop(&h);
		MT_TEST_SKIP("the helper's reads go uncounted, the rest checked "
			     "all the same (%s)", found);
	}
	mt_quiet_int_eq(mt_mem_outstanding(), start);
	same_log("after a failed enable", 0, &plain, &got);
	rlog_free(&plain);
	rlog_free(&got);
	mt_test_rmdir(dir);
	free(dir);
	free(path);
}
END_TEST

/* ---- generated traces ---- */

enum {
	GEN_MALFORMED = 1 << 0,    /* lines the parser rejects, one too long */
	GEN_GAP = 1 << 1,          /* seqs skipped forward and back */
	GEN_LATE_STACK = 1 << 2,   /* frames and stacks declared midway */
	GEN_UNKNOWN_FREE = 1 << 3, /* frees of blocks never allocated */
	GEN_REJECTED = 1 << 4,     /* events the heap rejects */
	GEN_BIG_ALLOCATOR = 1 << 5, /* allocator ids of 2^32 and beyond */
	GEN_AFTER_STOP = 1 << 6,   /* the stop at 80 %, events after it */
	GEN_CUT = 1 << 7,          /* the last line cut off mid-write */
	GEN_UNTERMINATED = 1 << 8, /* the last line a whole event, no '\n' */
	GEN_ZERO_PAD = 1 << 9,     /* zero bytes after the last line */
	GEN_NO_STOP = 1 << 10,     /* no trace.stop */
	GEN_LAYOUTS = 1 << 11,     /* block events the exact matcher declines */
	GEN_NEW_TIDS = 1 << 12,    /* the last 300 events each from a new tid */
};
#define GEN_SPECIALS (GEN_MALFORMED | GEN_GAP | GEN_LATE_STACK | \
		      GEN_UNKNOWN_FREE | GEN_REJECTED | GEN_BIG_ALLOCATOR)

#define ALLOC_EDGE 0xffffffffull     /* the largest id a batch holds */
#define ALLOC_WIDE 0x100000000ull    /* truncated to 32 bits: id 0 */
#define ALLOC_WIDER 0x100000007ull

typedef struct {
	uint64_t allocator, ptr;
} glive_t;

typedef struct {
	char *buf;
	size_t len, cap;
	uint64_t seq, t, rng, i;
	glive_t *live;
	size_t nlive;
	uint64_t next_ptr;
	uint64_t stacks[64];
	size_t nstacks;
	uint64_t next_frame, next_stack;
	uint64_t new_tids_from; /* 0: none */
	unsigned flags, specials, malformed, gaps;
} gen_t;

static void gen_raw(gen_t *g, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void gen_raw(gen_t *g, const char *fmt, ...)
{
	for (;;) {
		size_t room = g->cap - g->len;
		va_list ap;
		int n;

		va_start(ap, fmt);
		n = vsnprintf(g->buf + g->len, room, fmt, ap);
		va_end(ap);
		mt_quiet(n >= 0, "vsnprintf failed");
		if ((size_t)n < room) {
			g->len += (size_t)n;
			return;
		}
		g->cap = 2 * g->cap + (size_t)n;
		g->buf = realloc(g->buf, g->cap);
		mt_quiet_ptr_nonnull(g->buf);
	}
}

static void gen_bytes(gen_t *g, int c, size_t n)
{
	if (g->len + n + 1 > g->cap) {
		g->cap = 2 * g->cap + n + 1;
		g->buf = realloc(g->buf, g->cap);
		mt_quiet_ptr_nonnull(g->buf);
	}
	memset(g->buf + g->len, c, n);
	g->len += n;
}

/* An event line's start, through its seq, in the preload's layout or (a
 * few, with GEN_LAYOUTS) in others the exact matcher declines. */
static void ev_open(gen_t *g)
{
	uint64_t seq = g->seq++;
	uint64_t r = (g->flags & GEN_LAYOUTS) ? rng_next(&g->rng) : 2;

	if (r % 25 == 0)
		gen_raw(g, "{\"seq\":%" PRIu64 ",\"v\":1,", seq);
	else if (r % 25 == 1)
		gen_raw(g, "{ \"v\": 1, \"seq\": %" PRIu64 ", ", seq);
	else
		gen_raw(g, "{\"v\":1,\"seq\":%" PRIu64 ",", seq);
}

static uint64_t gen_tid(gen_t *g, uint64_t r)
{
	/* New threads keep appearing, well after the second one started. */
	uint64_t k = 2 + g->i / 3000;

	if (g->new_tids_from && g->i >= g->new_tids_from)
		return 1000 + g->i;
	return 100 + r % (k > 12 ? 12 : k);
}

/* stack (when with_stack), tid and t, each now and then absent. */
static void ev_close(gen_t *g, uint64_t r, int with_stack)
{
	if (with_stack && r % 31 != 0) {
		uint64_t s = g->stacks[(r >> 24) % g->nstacks];

		gen_raw(g, ",\"stack\":%" PRIu64, s);
	}
	if (r % 41 != 3)
		gen_raw(g, ",\"tid\":%" PRIu64, gen_tid(g, r >> 28));
	if (r % 59 != 5)
		gen_raw(g, ",\"t\":%" PRIu64, g->t);
	gen_raw(g, "}\n");
}

static void gen_alloc(gen_t *g, uint64_t allocator, uint64_t ptr, uint64_t r)
{
	uint64_t size = r % 97 == 0 ? (uint64_t)1 << 20 : 1 + (r >> 12) % 512;

	ev_open(g);
	gen_raw(g, "\"kind\":\"alloc\",\"allocator_id\":%" PRIu64
		",\"ptr\":\"0x%" PRIx64 "\",\"size\":%" PRIu64,
		allocator, ptr, size);
	if (r % 20 == 7)
		gen_raw(g, ",\"fn\":\"posix_memalign\",\"align\":64");
	else
		gen_raw(g, ",\"fn\":\"%s\"", r % 3 ? "malloc" : "calloc");
	ev_close(g, r, 1);
}

static uint64_t gen_fresh_ptr(gen_t *g, uint64_t r)
{
	g->next_ptr += 16 * (1 + r % 4);
	return g->next_ptr;
}

static uint64_t gen_allocator(gen_t *g, uint64_t r)
{
	if ((g->flags & GEN_BIG_ALLOCATOR) && g->i > 3000) {
		if (r % 53 == 0)
			return ALLOC_EDGE;
		if (r % 307 == 1)
			return r & 64 ? ALLOC_WIDE : ALLOC_WIDER;
	}
	return r % 8 == 2;
}

static void gen_live_add(gen_t *g, uint64_t allocator, uint64_t ptr)
{
	g->live[g->nlive].allocator = allocator;
	g->live[g->nlive].ptr = ptr;
	g->nlive++;
}

/* One block event of the workload: allocations, frees, resizes, remaps
 * and failures over up to 3000 live blocks. */
static void gen_block(gen_t *g)
{
	uint64_t r = rng_next(&g->rng);
	unsigned op = (unsigned)(r % 100);

	g->t += 1 + (r >> 40) % 50;
	if (g->nlive >= 3000)
		op = 50;
	if (op < 45 || !g->nlive) {
		uint64_t a = gen_allocator(g, r >> 8);
		uint64_t ptr = gen_fresh_ptr(g, r >> 16);

		if (op == 44 && g->nlive) {
			/* Over a live block: an overlapping alloc. */
			glive_t *e = &g->live[(r >> 20) % g->nlive];

			gen_alloc(g, e->allocator, e->ptr, r);
			return;
		}
		gen_alloc(g, a, ptr, r);
		gen_live_add(g, a, ptr);
	} else if (op < 80) {
		size_t k = (size_t)((r >> 20) % g->nlive);
		glive_t e = g->live[k];

		g->live[k] = g->live[--g->nlive];
		ev_open(g);
		gen_raw(g, "\"kind\":\"free\",\"allocator_id\":%" PRIu64
			",\"ptr\":\"0x%" PRIx64 "\",\"fn\":\"free\"",
			e.allocator, e.ptr);
		ev_close(g, r, 0);
	} else if (op < 90) {
		glive_t *e = &g->live[(r >> 20) % g->nlive];

		ev_open(g);
		gen_raw(g, "\"kind\":\"resize\",\"allocator_id\":%" PRIu64
			",\"ptr\":\"0x%" PRIx64 "\",\"size\":%" PRIu64
			",\"fn\":\"realloc\"",
			e->allocator, e->ptr, 1 + (r >> 30) % 4096);
		ev_close(g, r, 1);
	} else if (op < 98) {
		glive_t *e = &g->live[(r >> 20) % g->nlive];
		uint64_t to = gen_fresh_ptr(g, r >> 44);

		ev_open(g);
		gen_raw(g, "\"kind\":\"remap\",\"allocator_id\":%" PRIu64
			",\"ptr\":\"0x%" PRIx64 "\",\"new_ptr\":\"0x%" PRIx64
			"\",\"size\":%" PRIu64 ",\"fn\":\"realloc\"",
			e->allocator, e->ptr, to, 1 + (r >> 30) % 65536);
		ev_close(g, r, 1);
		e->ptr = to;
	} else {
		ev_open(g);
		gen_raw(g, "\"kind\":\"alloc.fail\",\"allocator_id\":0,"
			"\"size\":%" PRIu64 ",\"fn\":\"malloc\"",
			(uint64_t)1 << 40);
		ev_close(g, r, 1);
	}
}

static void gen_malformed(gen_t *g)
{
	unsigned m = g->malformed++;

	switch (m % 7) {
	case 0:
		gen_raw(g, "{\"v\":1,\n");
		g->seq++;
		break;
	case 1:
		ev_open(g);
		gen_raw(g, "\"kind\":\"alloc\",\"allocator_id\":0}\n");
		break;
	case 2:
		gen_raw(g, "{\"v\":2,\"seq\":%" PRIu64 ",\"kind\":\"free\"}\n",
			g->seq++);
		break;
	case 3:
		gen_raw(g, "\n");
		break;
	case 4:
		ev_open(g);
		gen_raw(g, "\"kind\":\"no.such.kind\"}\n");
		break;
	case 5:
		if (m == 5) {
			/* Once: a line too long to keep. */
			ev_open(g);
			gen_raw(g, "\"kind\":\"frame\",\"frame_id\":9999,"
				"\"symbol\":\"");
			gen_bytes(g, 'x', MT_READER_LINE_MAX);
			gen_raw(g, "\"}\n");
			break;
		}
		ev_open(g);
		gen_raw(g, "\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":"
			"\"0x10\",\"size\":-5,\"fn\":\"malloc\"}\n");
		break;
	default:
		/* Two in a row. */
		gen_raw(g, "not json\n");
		ev_open(g);
		gen_raw(g, "\"kind\":\"free\",\"allocator_id\":0,"
			"\"ptr\":\"0xZZ\",\"fn\":\"free\"}\n");
		break;
	}
}

static void gen_special(gen_t *g)
{
	unsigned kinds[6], n = 0, k;

	for (unsigned b = 0; b < 6; b++)
		if (g->flags & (1u << b) & GEN_SPECIALS)
			kinds[n++] = 1u << b;
	k = kinds[g->specials % n];
	g->specials++;
	switch (k) {
	case GEN_MALFORMED:
		gen_malformed(g);
		break;
	case GEN_GAP:
		/* Within held events: the next block event shows it. */
		if (g->gaps % 4 == 3)
			g->seq -= 2;
		else
			g->seq += 1 + g->gaps % 3;
		g->gaps++;
		gen_block(g);
		break;
	case GEN_LATE_STACK: {
		uint64_t f = g->next_frame++;
		uint64_t s = ((uint64_t)1 << 40) + g->specials;

		if (g->specials % 2)
			s = g->next_stack++;

		ev_open(g);
		gen_raw(g, "\"kind\":\"frame\",\"frame_id\":%" PRIu64
			",\"ip\":\"0x50%" PRIx64 "\"}\n", f, f);
		ev_open(g);
		gen_raw(g, "\"kind\":\"stack\",\"stack_id\":%" PRIu64
			",\"frames\":[%" PRIu64 ",1]}\n", s, f);
		if (g->nstacks < 64)
			g->stacks[g->nstacks++] = s;
		break;
	}
	case GEN_UNKNOWN_FREE:
		ev_open(g);
		gen_raw(g, "\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"0x%"
			PRIx64 "\",\"fn\":\"free\",\"tid\":100,\"t\":%" PRIu64
			"}\n", (uint64_t)0xdead0000 + 16 * g->specials, g->t);
		break;
	case GEN_REJECTED:
		ev_open(g);
		if (g->specials % 3 == 0)
			gen_raw(g, "\"kind\":\"alloc\",\"allocator_id\":0,"
				"\"ptr\":\"0x77\",\"size\":8,\"fn\":\"malloc\","
				"\"stack\":987654,\"tid\":100,\"t\":%" PRIu64
				"}\n", g->t);
		else if (g->specials % 3 == 1)
			gen_raw(g, "\"kind\":\"alloc\",\"allocator_id\":55,"
				"\"ptr\":\"0x78\",\"size\":8,\"fn\":\"malloc\","
				"\"tid\":100,\"t\":%" PRIu64 "}\n", g->t);
		else
			gen_raw(g, "\"kind\":\"frame\",\"frame_id\":1,"
				"\"ip\":\"0x1\"}\n");
		break;
	default: { /* GEN_BIG_ALLOCATOR */
		uint64_t a = g->specials % 2 ? ALLOC_WIDE : ALLOC_WIDER;
		uint64_t ptr = gen_fresh_ptr(g, g->specials);

		gen_alloc(g, a, ptr, rng_next(&g->rng));
		gen_live_add(g, a, ptr);
		break;
	}
	}
}

/* Runs of held events between specials: batch boundaries and about. */
static const unsigned special_runs[] = { 1024, 1023, 1025, 2048, 1,
					 3000, 2049, 1500, 2, 4096 };
#define NRUNS (sizeof(special_runs) / sizeof(special_runs[0]))

static char *gen_trace(unsigned flags, unsigned events, uint64_t seed,
		       size_t *len)
{
	gen_t g;
	uint64_t next_special = 1500;
	unsigned run = 0;

	memset(&g, 0, sizeof(g));
	g.cap = (size_t)events * 140 + (2u << 20);
	g.buf = malloc(g.cap);
	g.live = malloc(3100 * sizeof(*g.live));
	mt_quiet(g.buf && g.live, "out of memory");
	g.seq = 1;
	g.rng = seed;
	g.flags = flags;
	g.next_ptr = 0x10000;
	ev_open(&g);
	gen_raw(&g, "\"kind\":\"trace.start\",\"pid\":77,\"argv\":[\"gen\"],"
		"\"stack_depth\":8}\n");
	ev_open(&g);
	gen_raw(&g, "\"kind\":\"allocator\",\"allocator_id\":0,"
		"\"name\":\"libc\"}\n");
	ev_open(&g);
	gen_raw(&g, "\"kind\":\"allocator\",\"allocator_id\":1,"
		"\"name\":\"arena\"}\n");
	if (flags & GEN_BIG_ALLOCATOR) {
		static const uint64_t ids[] = { ALLOC_EDGE, ALLOC_WIDE,
						ALLOC_WIDER };

		for (int k = 0; k < 3; k++) {
			ev_open(&g);
			gen_raw(&g, "\"kind\":\"allocator\",\"allocator_id\":%"
				PRIu64 "}\n", ids[k]);
		}
	}
	for (int f = 1; f <= 8; f++) {
		ev_open(&g);
		gen_raw(&g, "\"kind\":\"frame\",\"frame_id\":%d,"
			"\"ip\":\"0x40%d000\",\"symbol\":\"fn_%d\","
			"\"offset\":\"0x10\",\"module\":\"/bin/gen\","
			"\"module_offset\":\"0x%x\"}\n",
			f, f, f, f * 4096);
	}
	for (int s = 1; s <= 20; s++) {
		ev_open(&g);
		gen_raw(&g, "\"kind\":\"stack\",\"stack_id\":%d,\"frames\":"
			"[%d,%d,%d]}\n", s, 1 + s % 8, 1 + (s / 3) % 8,
			1 + (s * 5) % 8);
		g.stacks[g.nstacks++] = (uint64_t)s;
	}
	/* A sparse id: the stacks map, not the dense table. */
	ev_open(&g);
	gen_raw(&g, "\"kind\":\"stack\",\"stack_id\":1000000007,"
		"\"frames\":[8,1]}\n");
	g.stacks[g.nstacks++] = 1000000007;
	g.next_frame = 100;
	g.next_stack = 21;
	if ((flags & GEN_NEW_TIDS) && events > 300)
		g.new_tids_from = events - 300;

	for (g.i = 0; g.i < events; g.i++) {
		if ((flags & GEN_SPECIALS) && g.i == next_special) {
			gen_special(&g);
			next_special += special_runs[run++ % NRUNS];
		}
		if ((flags & GEN_AFTER_STOP) && g.i == events / 10 * 8) {
			ev_open(&g);
			gen_raw(&g, "\"kind\":\"trace.stop\","
				"\"reason\":\"exit\",\"dropped\":2,"
				"\"t\":%" PRIu64 "}\n", g.t);
		}
		gen_block(&g);
	}
	if (!(flags & (GEN_NO_STOP | GEN_AFTER_STOP | GEN_CUT |
		       GEN_UNTERMINATED))) {
		ev_open(&g);
		gen_raw(&g, "\"kind\":\"trace.stop\",\"reason\":\"exit\","
			"\"dropped\":0,\"t\":%" PRIu64 "}\n", g.t + 1);
	}
	if (flags & GEN_CUT) {
		ev_open(&g);
		gen_raw(&g, "\"kind\":\"alloc\",\"allocator_id\":0,"
			"\"ptr\":\"0x1");
	}
	if (flags & GEN_UNTERMINATED) {
		ev_open(&g);
		gen_raw(&g, "\"kind\":\"free\",\"allocator_id\":%" PRIu64
			",\"ptr\":\"0x%" PRIx64 "\",\"fn\":\"free\","
			"\"tid\":100}",
			g.live[0].allocator, g.live[0].ptr);
	}
	if (flags & GEN_ZERO_PAD)
		gen_bytes(&g, 0, 70000);
	free(g.live);
	*len = g.len;
	return g.buf;
}

static char *gen_file(const char *dir, const char *name, unsigned flags,
		      unsigned events, uint64_t seed)
{
	size_t len;
	char *data = gen_trace(flags, events, seed, &len);
	char *path;

	write_file(dir, name, data, len, &path);
	free(data);
	return path;
}

/* ---- comparing analyses ---- */

#define SAME(field)                                                         \
	mt_quiet(x->field == y->field, "%s: %s: %ju vs %ju", what, #field,  \
		 (uintmax_t)x->field, (uintmax_t)y->field)

static void same_str(const char *what, const char *name, const char *a,
		     const char *b)
{
	if (!a || !b)
		mt_quiet(a == b, "%s: %s: %s vs %s", what, name,
			 a ? a : "(null)", b ? b : "(null)");
	else
		mt_quiet(!strcmp(a, b), "%s: %s: '%s' vs '%s'", what, name, a,
			 b);
}

static void same_integrity(const char *what, const mt_integrity_t *x,
			   const mt_integrity_t *y)
{
	SAME(invalid);
	same_str(what, "invalid_message", x->invalid_message,
		 y->invalid_message);
	SAME(caveats);
	for (int c = 0; c < MT_CAVEAT_COUNT; c++)
		same_str(what, mt_integrity_caveat_name((mt_caveat_t)c),
			 x->message[c], y->message[c]);
	SAME(malformed);
	SAME(first_malformed_line);
	same_str(what, "first_malformed_why", x->first_malformed_why,
		 y->first_malformed_why);
	SAME(stop_line);
	SAME(after_stop);
	SAME(first_after_stop_line);
	SAME(last_line);
	SAME(cut_line);
	SAME(cut_unterminated);
	SAME(zero_padded);
	same_str(what, "status", mt_integrity_status(x),
		 mt_integrity_status(y));
	same_str(what, "message", mt_integrity_message(x),
		 mt_integrity_message(y));
	/* And every byte, the messages' buffers included. */
	mt_quiet(!memcmp(x, y, sizeof(*x)), "%s: the integrity differs", what);
}

static void same_blocks(const char *what, uint64_t id, const mt_blocks_t *x,
			const mt_blocks_t *y)
{
	mt_quiet(mt_blocks_count(x) == mt_blocks_count(y),
		 "%s: allocator %ju: %zu live blocks vs %zu", what,
		 (uintmax_t)id, mt_blocks_count(x), mt_blocks_count(y));
	for (size_t i = 0; i < x->cap; i++) {
		const mt_blocks_slot_t *s = &x->slots[i];
		const mt_block_t *b;

		if (!s->key)
			continue;
		b = mt_blocks_find(y, s->key - 1);
		mt_quiet(b && !memcmp(b, &s->block, sizeof(*b)),
			 "%s: allocator %ju: block 0x%jx differs", what,
			 (uintmax_t)id, (uintmax_t)(s->key - 1));
	}
	SAME(has_side);
	if (x->has_side)
		mt_quiet(!memcmp(&x->side, &y->side, sizeof(x->side)),
			 "%s: the block at 2^64 - 1 differs", what);
}

static void same_allocator(const char *what, const mt_allocator_t *x,
			   const mt_allocator_t *y)
{
	SAME(id);
	same_str(what, "allocator name", x->name, y->name);
	SAME(allocations);
	SAME(frees);
	SAME(resizes);
	SAME(remaps);
	SAME(live_bytes);
	SAME(peak_live_bytes);
	same_blocks(what, x->id, &x->blocks, &y->blocks);
}

static void same_heap(const char *what, const mt_heap_t *x, const mt_heap_t *y)
{
	size_t pos = 0;
	uint64_t key;
	void *v;

	SAME(events);
	SAME(allocations);
	SAME(frees);
	SAME(resizes);
	SAME(remaps);
	SAME(failed_allocations);
	SAME(unknown_frees);
	SAME(overlapping_allocs);
	SAME(bytes_allocated);
	SAME(bytes_freed);
	SAME(live_allocations);
	SAME(live_bytes);
	SAME(peak_live_bytes);
	SAME(peak_live_allocations);
	SAME(peak_seq);
	SAME(peak_epoch);
	SAME(temporary_allocations);
	SAME(duration_ns);
	SAME(serial);
	SAME(no_tid_serial);
	SAME(nsites);
	mt_quiet(mt_heap_threads(x) == mt_heap_threads(y),
		 "%s: %ju threads vs %ju", what, (uintmax_t)mt_heap_threads(x),
		 (uintmax_t)mt_heap_threads(y));
	mt_quiet(!memcmp(&x->no_stack, &y->no_stack, sizeof(x->no_stack)),
		 "%s: the site without a stack differs", what);
	for (size_t i = 1; i <= x->nsites; i++) {
		mt_quiet(!memcmp(&x->sites[i], &y->sites[i], sizeof(mt_site_t)),
			 "%s: site %zu differs", what, i);
		mt_quiet(mt_heap_site_at_peak(x, &x->sites[i]) ==
				 mt_heap_site_at_peak(y, &y->sites[i]),
			 "%s: site %zu at the peak differs", what, i);
	}
	while (mt_map_iter(&x->threads, &pos, &key, &v)) {
		const uint32_t *w = mt_map_find(&y->threads, key);
		uint32_t t = *(const uint32_t *)v;

		mt_quiet(w && *w == t, "%s: tid %ju's index differs", what,
			 (uintmax_t)key);
		mt_quiet(x->thread_last[t] == y->thread_last[t],
			 "%s: tid %ju's last serial differs", what,
			 (uintmax_t)key);
	}
	mt_quiet_uint_eq(mt_map_count(&x->stacks), mt_map_count(&y->stacks));
	pos = 0;
	while (mt_map_iter(&x->stacks, &pos, &key, &v)) {
		const mt_stack_t *s = *(mt_stack_t *const *)v;
		void *w = mt_map_find(&y->stacks, key);
		const mt_stack_t *t = w ? *(mt_stack_t *const *)w : NULL;

		mt_quiet(t && t->id == s->id &&
				 t->site_index == s->site_index &&
				 t->nframes == s->nframes &&
				 !memcmp(t->frames, s->frames,
					 s->nframes * sizeof(uint64_t)),
			 "%s: stack %ju differs", what, (uintmax_t)key);
	}
	mt_quiet_uint_eq(mt_map_count(&x->frames), mt_map_count(&y->frames));
	pos = 0;
	while (mt_map_iter(&x->frames, &pos, &key, &v)) {
		const mt_frame_t *f = v, *g = mt_map_find(&y->frames, key);

		mt_quiet(g && f->ip == g->ip && f->offset == g->offset &&
				 f->module_offset == g->module_offset &&
				 f->has == g->has,
			 "%s: frame %ju differs", what, (uintmax_t)key);
		same_str(what, "frame symbol", f->symbol, g->symbol);
		same_str(what, "frame module", f->module, g->module);
	}
	mt_quiet_uint_eq(mt_map_count(&x->allocators),
			 mt_map_count(&y->allocators));
	pos = 0;
	while (mt_map_iter(&x->allocators, &pos, &key, &v)) {
		void *w = mt_map_find(&y->allocators, key);

		mt_quiet(w != NULL, "%s: allocator %ju is missing", what,
			 (uintmax_t)key);
		same_allocator(what, *(mt_allocator_t *const *)v,
			       *(mt_allocator_t *const *)w);
	}
}

static void same_analysis(const char *what, int rc_x, const mt_analysis_t *x,
			  int rc_y, const mt_analysis_t *y)
{
	mt_quiet(rc_x == rc_y, "%s: rc %d vs %d", what, rc_x, rc_y);
	SAME(error_errno);
	SAME(json_c_lines);
	same_integrity(what, &x->integrity, &y->integrity);
	same_heap(what, &x->heap, &y->heap);
}

/* What an observer sees, event by event: the event's fields that a block
 * event has (as has and kind say) and the heap's counters after it. */
typedef struct {
	uint64_t seq, fields, live_bytes, live_allocations, events, peak;
} seen_t;

typedef struct {
	pthread_t main;
	uint64_t off_main; /* calls from another thread */
	int record;
	seen_t *v;
	size_t n, cap;
} watch_t;

static uint64_t event_fields(const mt_event_t *ev)
{
	uint64_t h = (uint64_t)ev->kind * 0x100000001b3ull ^ ev->allocator_id;
	unsigned has = ev->has & (MT_HAS_STACK | MT_HAS_TID | MT_HAS_T);

	h = h * 31 + has;
	if (ev->kind != MT_KIND_ALLOC_FAIL)
		h = h * 31 + ev->ptr;
	if (ev->kind == MT_KIND_REMAP)
		h = h * 31 + ev->new_ptr;
	if (ev->kind != MT_KIND_FREE)
		h = h * 31 + ev->size;
	if (has & MT_HAS_STACK)
		h = h * 31 + ev->stack;
	if (has & MT_HAS_TID)
		h = h * 31 + ev->tid;
	if (has & MT_HAS_T)
		h = h * 31 + ev->t;
	return h;
}

static void watch(void *ctx, const mt_heap_t *h, const mt_event_t *ev)
{
	watch_t *w = ctx;

	if (!pthread_equal(pthread_self(), w->main))
		w->off_main++;
	if (!w->record)
		return;
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 4096;
		w->v = realloc(w->v, w->cap * sizeof(*w->v));
		/* Maybe on the pass's second thread: no Check call here. */
		if (!w->v)
			abort();
	}
	w->v[w->n++] = (seen_t){ .seq = ev->seq, .fields = event_fields(ev),
				 .live_bytes = h->live_bytes,
				 .live_allocations = h->live_allocations,
				 .events = h->events,
				 .peak = h->peak_live_bytes };
}

static void watch_init(watch_t *w, int record)
{
	memset(w, 0, sizeof(*w));
	w->main = pthread_self();
	w->record = record;
}

/* One pass over path with the given threads setting; observed when w. */
static int run_threads(mt_analysis_t *a, const char *path, const char *threads,
		       watch_t *w)
{
	if (threads)
		set_threads(threads);
	else
		unsetenv("MEMTRACE_ANALYZER_THREADS");
	return w ? mt_analysis_run_observed(a, path, watch, w) :
		   mt_analysis_run(a, path);
}

/* The batch of mt_analysis.c's pipe, in events. */
#define BATCH_EVENTS 1024

/*
 * The timed pass (not told its threads, on two CPUs) switching between
 * the pipe and this thread after every probe and keep of the schedules
 * below, as often as every batch, gives what one thread gave, to an
 * observer too; with both_wanted, the second thread applied some of the
 * events, and fewer than the pass always piped (piped_off_main).
 */
static void timed_way(const char *path, int both_wanted, uint64_t piped_off_main)
{
	static const uint64_t schedules[][2] = {
		{ BATCH_EVENTS, BATCH_EVENTS }, { 3 * BATCH_EVENTS, 1 },
		{ 1, 2 * BATCH_EVENTS }, { 5000, 700 },
	};
	int64_t before = mt_mem_outstanding();
	watch_t w1, wt;
	mt_analysis_t again, timed;
	int rc1, rct;

	watch_init(&w1, 1);
	rc1 = run_threads(&again, path, "1", &w1);
	for (size_t k = 0; k < sizeof(schedules) / sizeof(schedules[0]); k++) {
		mt_analysis_test_schedule(schedules[k][0], schedules[k][1]);
		watch_init(&wt, 1);
		rct = run_threads(&timed, path, NULL, &wt);
		mt_analysis_test_schedule(0, 0);
		same_analysis(path, rc1, &again, rct, &timed);
		mt_quiet_uint_eq(w1.n, wt.n);
		if (both_wanted)
			mt_quiet(wt.off_main > 0 && wt.off_main < piped_off_main,
				 "%s, schedule %zu: %ju events applied off the "
				 "first thread, where always piped %ju",
				 path, k, (uintmax_t)wt.off_main,
				 (uintmax_t)piped_off_main);
		for (size_t i = 0; i < w1.n; i++)
			mt_quiet(!memcmp(&w1.v[i], &wt.v[i], sizeof(seen_t)),
				 "%s, schedule %zu: observed event %zu (seq %ju) "
				 "differs", path, k, i, (uintmax_t)w1.v[i].seq);
		free(wt.v);
		mt_analysis_release(&timed);
	}
	free(w1.v);
	mt_analysis_release(&again);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}

/*
 * The pass over path with one thread and with two gives the same result,
 * and the same events to an observer in the same order with the same
 * heap after each; with two, the second thread applied some of them
 * when started_wanted.  The one-thread run is left in *out, for the caller
 * to check what the trace holds and release.
 */
static void both_ways(const char *path, int started_wanted, mt_analysis_t *out)
{
	int64_t before = mt_mem_outstanding();
	mt_analysis_t one, two;
	watch_t w1, w2;
	int rc1, rc2;

	rc1 = run_threads(&one, path, "1", NULL);
	rc2 = run_threads(&two, path, "2", NULL);
	same_analysis(path, rc1, &one, rc2, &two);
	mt_analysis_release(&two);
	mt_analysis_release(&one);
	mt_quiet_int_eq(mt_mem_outstanding(), before);

	watch_init(&w1, 1);
	watch_init(&w2, 1);
	rc1 = run_threads(&one, path, "1", &w1);
	rc2 = run_threads(&two, path, "2", &w2);
	same_analysis(path, rc1, &one, rc2, &two);
	mt_quiet_uint_eq(w1.off_main, 0);
	if (started_wanted)
		mt_quiet(w2.off_main > 0,
			 "%s: the second thread applied no event", path);
	mt_quiet_uint_eq(w1.n, w2.n);
	for (size_t i = 0; i < w1.n; i++)
		mt_quiet(!memcmp(&w1.v[i], &w2.v[i], sizeof(seen_t)),
			 "%s: observed event %zu (seq %ju) differs", path, i,
			 (uintmax_t)w1.v[i].seq);
	free(w1.v);
	free(w2.v);
	mt_analysis_release(&two);
	unsetenv("MEMTRACE_ANALYZER_THREADS");
	timed_way(path, started_wanted, w2.off_main);
	*out = one;
}

#define EVENTS 50000

/* Generate, compare both ways, and hand back the one-thread result. */
static void gen_both_ways(unsigned flags, uint64_t seed, mt_analysis_t *a)
{
	char *dir = mt_test_tmpdir();
	char *path = gen_file(dir, "trace.jsonl", flags, EVENTS, seed);

	both_ways(path, 1, a);
	mt_quiet_int_eq(a->integrity.invalid, 0);
	mt_quiet_uint_ge(a->heap.events, EVENTS);
	mt_test_rmdir(dir);
	free(dir);
	free(path);
}

START_TEST(analysis_two_threads_match_one_on_a_complete_trace)
{
	mt_analysis_t a;

	gen_both_ways(0, 1, &a);
	ck_assert_str_eq(mt_integrity_status(&a.integrity), "complete");
	mt_quiet_uint_gt(a.heap.resizes, 0);
	mt_quiet_uint_gt(a.heap.remaps, 0);
	mt_quiet_uint_gt(a.heap.failed_allocations, 0);
	mt_quiet_uint_gt(a.heap.overlapping_allocs, 0);
	mt_quiet_uint_gt(a.heap.temporary_allocations, 0);
	mt_quiet_uint_ge(mt_heap_threads(&a.heap), 10);
	mt_analysis_release(&a);
}
END_TEST

START_TEST(analysis_two_threads_match_one_with_malformed_lines)
{
	mt_analysis_t a;

	gen_both_ways(GEN_MALFORMED, 2, &a);
	mt_quiet_uint_ge(a.integrity.malformed, 10);
	mt_quiet(a.integrity.caveats & (1u << MT_CAVEAT_MALFORMED),
		 "no malformed caveat");
	mt_analysis_release(&a);
}
END_TEST

START_TEST(analysis_two_threads_match_one_with_sequence_gaps)
{
	mt_analysis_t a;

	gen_both_ways(GEN_GAP, 3, &a);
	mt_quiet(a.integrity.caveats & (1u << MT_CAVEAT_SEQUENCE_GAP),
		 "no sequence gap");
	mt_analysis_release(&a);
}
END_TEST

START_TEST(analysis_two_threads_match_one_with_stacks_declared_midway)
{
	mt_analysis_t a;

	gen_both_ways(GEN_LATE_STACK, 4, &a);
	mt_quiet_uint_ge(mt_map_count(&a.heap.stacks), 30);
	mt_analysis_release(&a);
}
END_TEST

START_TEST(analysis_two_threads_match_one_with_unknown_frees_and_rejections)
{
	mt_analysis_t a;

	gen_both_ways(GEN_UNKNOWN_FREE | GEN_REJECTED, 5, &a);
	mt_quiet_uint_ge(a.heap.unknown_frees, 5);
	mt_quiet_uint_ge(a.integrity.malformed, 5);
	mt_analysis_release(&a);
}
END_TEST

START_TEST(analysis_two_threads_match_one_with_allocator_ids_past_32_bits)
{
	mt_analysis_t a;
	static const uint64_t ids[] = { ALLOC_EDGE, ALLOC_WIDE, ALLOC_WIDER };

	gen_both_ways(GEN_BIG_ALLOCATOR, 6, &a);
	mt_quiet_uint_eq(mt_map_count(&a.heap.allocators), 5);
	for (int k = 0; k < 3; k++) {
		void *v = mt_map_find(&a.heap.allocators, ids[k]);

		mt_quiet_ptr_nonnull(v);
		mt_quiet_uint_gt((*(mt_allocator_t **)v)->allocations, 0);
	}
	mt_analysis_release(&a);
}
END_TEST

START_TEST(analysis_two_threads_match_one_with_events_after_the_stop)
{
	mt_analysis_t a;

	gen_both_ways(GEN_AFTER_STOP, 7, &a);
	mt_quiet_uint_ge(a.integrity.after_stop, EVENTS / 10);
	mt_quiet(a.integrity.caveats & (1u << MT_CAVEAT_DROPPED), "no drops");
	mt_analysis_release(&a);
}
END_TEST

START_TEST(analysis_two_threads_match_one_with_a_cut_off_last_line)
{
	mt_analysis_t a;

	gen_both_ways(GEN_CUT, 8, &a);
	mt_quiet_uint_gt(a.integrity.cut_line, 0);
	mt_quiet_int_eq(a.integrity.cut_unterminated, 1);
	mt_analysis_release(&a);
	gen_both_ways(GEN_UNTERMINATED | GEN_MALFORMED, 9, &a);
	mt_quiet_uint_gt(a.integrity.cut_line, 0);
	mt_analysis_release(&a);
}
END_TEST

START_TEST(analysis_two_threads_match_one_with_zero_padding)
{
	mt_analysis_t a;

	gen_both_ways(GEN_ZERO_PAD | GEN_NO_STOP, 10, &a);
	mt_quiet_int_eq(a.integrity.zero_padded, 1);
	mt_analysis_release(&a);
	gen_both_ways(GEN_ZERO_PAD | GEN_CUT, 11, &a);
	mt_quiet_int_eq(a.integrity.zero_padded, 1);
	mt_analysis_release(&a);
}
END_TEST

START_TEST(analysis_two_threads_match_one_with_other_layouts)
{
	mt_analysis_t a;

	gen_both_ways(GEN_LAYOUTS, 12, &a);
	mt_quiet_uint_gt(a.json_c_lines + a.heap.events, EVENTS);
	mt_analysis_release(&a);
}
END_TEST

START_TEST(analysis_two_threads_match_one_with_everything_at_once)
{
	mt_analysis_t a;

	gen_both_ways(GEN_SPECIALS | GEN_LAYOUTS | GEN_AFTER_STOP | GEN_CUT |
			      GEN_ZERO_PAD,
		      13, &a);
	mt_analysis_release(&a);
}
END_TEST

START_TEST(analysis_two_threads_match_one_on_short_traces)
{
	/* Fewer held events than a batch: no thread starts, and the batch
	 * is applied where it is. */
	char *dir = mt_test_tmpdir();
	static const unsigned sizes[] = { 0, 1, 15, 16, 17, 1023, 1024, 1025 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char name[32];
		char *path;
		mt_analysis_t a;

		snprintf(name, sizeof(name), "short_%u.jsonl", sizes[i]);
		path = gen_file(dir, name, i % 2 ? GEN_NO_STOP : 0, sizes[i],
				20 + i);
		both_ways(path, 0, &a);
		mt_analysis_release(&a);
		free(path);
	}
	mt_test_rmdir(dir);
	free(dir);
}
END_TEST

/*
 * A batch keeps only its first line's number: every held event must
 * still be judged at its own line.  For each position p of a batch, a
 * trace whose first sequence gap is at position 1023 - p of the first
 * batch and whose one rejected event (an undeclared stack) is at position
 * p of the second: both are reported at their lines.
 */
START_TEST(analysis_two_threads_judge_each_batch_position_at_its_line)
{
	char *dir = mt_test_tmpdir();
	char *path = mt_test_path(dir, "trace.jsonl");
	size_t cap = 1u << 20;
	char *t = malloc(cap);

	mt_quiet_ptr_nonnull(t);
	set_threads("2");
	for (unsigned p = 0; p < 1024; p++) {
		const unsigned header = 4, held = 2 * 1024 + 8;
		uint64_t seq = 1, gap_line = 0, gap_expected = 0, bad_line = 0;
		size_t n = 0;
		char want[MT_INTEGRITY_MSG_MAX];
		mt_analysis_t a;
		watch_t w;

#define TLINE(...) (n += (size_t)snprintf(t + n, cap - n, __VA_ARGS__))
		TLINE("{\"v\":1,\"seq\":%" PRIu64
		      ",\"kind\":\"trace.start\"}\n", seq++);
		TLINE("{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"allocator\","
		      "\"allocator_id\":0}\n", seq++);
		TLINE("{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"frame\","
		      "\"frame_id\":1,\"ip\":\"0x10\"}\n", seq++);
		TLINE("{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"stack\","
		      "\"stack_id\":1,\"frames\":[1]}\n", seq++);
		for (unsigned i = 0; i < held; i++) {
			uint64_t line = header + 1 + i;

			if (i == 1023 - p) {
				gap_line = line;
				gap_expected = seq;
				seq += 3;
			}
			if (i == 1024 + p)
				bad_line = line;
			TLINE("{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"alloc\","
			      "\"allocator_id\":0,\"ptr\":\"0x%x\",\"size\":8,"
			      "\"fn\":\"malloc\",\"stack\":%d,\"tid\":1,"
			      "\"t\":%u}\n",
			      seq++, 0x1000 + 16 * i,
			      i == 1024 + p ? 77 : 1, i);
		}
		TLINE("{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"trace.stop\","
		      "\"reason\":\"exit\",\"dropped\":0}\n", seq++);
#undef TLINE
		mt_quiet(n < cap, "the trace is %zu bytes", n);
		mt_test_write(path, t, n);
		watch_init(&w, 0);
		mt_quiet_int_eq(mt_analysis_run_observed(&a, path, watch, &w),
				MT_OK);
		mt_quiet_uint_gt(w.off_main, 0);
		mt_quiet_uint_eq(a.integrity.malformed, 1);
		mt_quiet(a.integrity.first_malformed_line == bad_line,
			 "position %u: the rejected event at line %ju, "
			 "reported at %ju", p, (uintmax_t)bad_line,
			 (uintmax_t)a.integrity.first_malformed_line);
		snprintf(want, sizeof(want),
			 "sequence gap at line %ju: expected seq %ju, "
			 "found %ju",
			 (uintmax_t)gap_line, (uintmax_t)gap_expected,
			 (uintmax_t)gap_expected + 3);
		mt_quiet(!strcmp(a.integrity.message[MT_CAVEAT_SEQUENCE_GAP],
				 want),
			 "position %u: '%s', want '%s'", p,
			 a.integrity.message[MT_CAVEAT_SEQUENCE_GAP], want);
		mt_quiet_uint_eq(a.integrity.last_line, header + held + 1);
		mt_analysis_release(&a);
	}
	unsetenv("MEMTRACE_ANALYZER_THREADS");
	mt_test_rmdir(dir);
	free(dir);
	free(path);
	free(t);
}
END_TEST

/* The choice itself: told, or timed on two CPUs. */
START_TEST(analysis_chooses_two_threads_when_told_or_given_two_cpus)
{
	static const struct {
		const char *env;
		int cpus, want;
	} cases[] = {
		{ "1", 8, 1 }, { "2", 1, 2 }, { "2", 2, 2 }, { NULL, 1, 1 },
		{ NULL, 2, MT_ANALYSIS_TIMED }, { NULL, 64, MT_ANALYSIS_TIMED },
		{ "", 2, MT_ANALYSIS_TIMED }, { "", 1, 1 },
		{ "0", 2, MT_ANALYSIS_TIMED }, { "3", 1, 1 },
		{ "12", 2, MT_ANALYSIS_TIMED }, { "2x", 1, 1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		mt_quiet(mt_analysis_choose_threads(cases[i].env, cases[i].cpus) ==
				 cases[i].want,
			 "env %s, %d CPUs: want %d threads",
			 cases[i].env ? cases[i].env : "(unset)", cases[i].cpus,
			 cases[i].want);
}
END_TEST

/* Where the pass decides on its threads without being told. */
START_TEST(analysis_uses_a_second_thread_when_told_or_given_two_cpus)
{
	char *dir = mt_test_tmpdir();
	char *path = gen_file(dir, "trace.jsonl", 0, 8000, 30);
	static const char *const defaults[] = { NULL, "", "0", "3", "12",
						"2x" };
	const int ndefaults = (int)(sizeof(defaults) / sizeof(defaults[0]));
	cpu_set_t all, one, two;
	int first = -1, second = -1;

	mt_quiet_int_eq(sched_getaffinity(0, sizeof(all), &all), 0);
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &all)) {
			if (first < 0)
				first = i;
			else if (second < 0)
				second = i;
		}
	CPU_ZERO(&one);
	CPU_SET(first, &one);
	two = one;
	if (second >= 0)
		CPU_SET(second, &two);
	for (int cpus = 1; cpus <= 2; cpus++) {
		if (cpus == 2 && second < 0)
			break;
		mt_quiet_int_eq(sched_setaffinity(0, sizeof(one),
						  cpus == 1 ? &one : &two),
				0);
		for (int k = -2; k < ndefaults; k++) {
			const char *v = k == -2 ? "1" : k == -1 ? "2" :
							defaults[k];
			int want = k == -2 ? 0 : k == -1 ? 1 : cpus == 2;
			mt_analysis_t a;
			watch_t w;

			watch_init(&w, 0);
			mt_quiet_int_eq(run_threads(&a, path, v, &w), MT_OK);
			mt_quiet(!!w.off_main == want,
				 "%d CPUs, THREADS=%s: %ju events off the "
				 "first thread",
				 cpus, v ? v : "(unset)",
				 (uintmax_t)w.off_main);
			mt_analysis_release(&a);
		}
	}
	mt_quiet_int_eq(sched_setaffinity(0, sizeof(all), &all), 0);
	unsetenv("MEMTRACE_ANALYZER_THREADS");
	mt_test_rmdir(dir);
	free(dir);
	free(path);
	if (second < 0)
		MT_TEST_SKIP("the pass is not given two CPUs here, only told "
			     "(affinity mask: %d CPU)", CPU_COUNT(&all));
}
END_TEST

/* ---- memtrace summary, both ways ---- */

static void summary_both_ways(const char *path)
{
	static char *const env1[] = { "MEMTRACE_ANALYZER_THREADS=1", NULL };
	static char *const env2[] = { "MEMTRACE_ANALYZER_THREADS=2", NULL };
	const char *args[] = { "summary", path, "--top", "20", NULL };
	mt_test_run_t r1, r2;

	mt_test_memtrace_in_argv(&r1, NULL, env1, args);
	mt_test_memtrace_in_argv(&r2, NULL, env2, args);
	mt_quiet(r1.status < 128, "%s: memtrace died: %d: %s", path,
		 r1.status, r1.err);
	mt_quiet(r1.status == r2.status, "%s: exit %d vs %d: %s / %s", path,
		 r1.status, r2.status, r1.err, r2.err);
	mt_quiet(r1.out_len == r2.out_len &&
			 !memcmp(r1.out, r2.out, r1.out_len),
		 "%s: stdout differs:\n%s\nvs\n%s", path, r1.out, r2.out);
	mt_quiet(r1.err_len == r2.err_len &&
			 !memcmp(r1.err, r2.err, r1.err_len),
		 "%s: stderr differs:\n%s\nvs\n%s", path, r1.err, r2.err);
	mt_test_run_release(&r1);
	mt_test_run_release(&r2);
}

START_TEST(summary_is_the_same_both_ways_on_generated_traces)
{
	static const unsigned variants[] = {
		0,
		GEN_MALFORMED,
		GEN_GAP | GEN_LATE_STACK,
		GEN_UNKNOWN_FREE | GEN_REJECTED,
		GEN_BIG_ALLOCATOR,
		GEN_AFTER_STOP | GEN_LAYOUTS,
		GEN_CUT | GEN_ZERO_PAD,
		GEN_UNTERMINATED | GEN_NO_STOP,
		GEN_SPECIALS | GEN_LAYOUTS | GEN_AFTER_STOP | GEN_ZERO_PAD,
	};
	char *dir = mt_test_tmpdir();

	for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
		char name[32];
		char *path;

		snprintf(name, sizeof(name), "gen_%zu.jsonl", i);
		path = gen_file(dir, name, variants[i], EVENTS, 40 + i);
		summary_both_ways(path);
		free(path);
	}
	mt_test_rmdir(dir);
	free(dir);
}
END_TEST

/* Every .jsonl under dir, recursively; returns how many. */
static int summary_both_ways_under(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	mt_quiet(d != NULL, "opendir %s: %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char *path;
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		path = mt_test_path(dir, de->d_name);
		mt_quiet_int_eq(stat(path, &st), 0);
		if (S_ISDIR(st.st_mode)) {
			n += summary_both_ways_under(path);
		} else if (len > 6 && !strcmp(de->d_name + len - 6, ".jsonl")) {
			summary_both_ways(path);
			n++;
		}
		free(path);
	}
	closedir(d);
	return n;
}

START_TEST(summary_is_the_same_both_ways_on_every_fixture)
{
	char *dir = mt_test_path(mt_test_source_dir(), "fixtures");

	mt_quiet_uint_ge(summary_both_ways_under(dir), 80);
	free(dir);
}
END_TEST

/* ---- out of memory with two threads ---- */

#define MAX_SWEEP 20000

/*
 * For N = 1, 2, ...: fail the Nth allocation (and every later one when
 * sticky), run, release.  While it fails the run must say MT_ENOMEM and
 * leave nothing allocated; the first N past the run's last allocation
 * must give the one-thread run's result.  Returns how many failing runs
 * had the second thread apply events first.
 */
static uint64_t oom_sweep(const char *path, int sticky, int observed)
{
	int64_t start = mt_mem_outstanding(), base;
	mt_analysis_t ref, a;
	uint64_t n, late = 0;
	int rc_ref, rc;

	rc_ref = run_threads(&ref, path, "1", NULL);
	mt_quiet_int_eq(rc_ref, MT_OK);
	base = mt_mem_outstanding();
	set_threads("2");
	for (n = 1; n < MAX_SWEEP; n++) {
		uint64_t calls;
		watch_t w;

		watch_init(&w, 0);
		mt_mem_fail_at(n, sticky);
		rc = observed ? mt_analysis_run_observed(&a, path, watch, &w) :
				mt_analysis_run(&a, path);
		calls = mt_mem_calls();
		mt_mem_fail_at(0, 0);
		if (calls < n) {
			mt_quiet(rc == MT_OK, "no failure, yet rc %d", rc);
			same_analysis("after the sweep", rc_ref, &ref, rc, &a);
			mt_analysis_release(&a);
			break;
		}
		mt_quiet(rc == MT_ENOMEM, "allocation %ju failed%s: rc %d",
			 (uintmax_t)n, sticky ? " (sticky)" : "", rc);
		mt_analysis_release(&a);
		mt_quiet(mt_mem_outstanding() == base,
			 "allocation %ju failed%s: %jd blocks left",
			 (uintmax_t)n, sticky ? " (sticky)" : "",
			 (intmax_t)(mt_mem_outstanding() - base));
		if (w.off_main)
			late++;
	}
	mt_quiet(n < MAX_SWEEP, "the sweep never ended");
	mt_quiet_uint_gt(n, 10);
	mt_analysis_release(&ref);
	unsetenv("MEMTRACE_ANALYZER_THREADS");
	mt_quiet_int_eq(mt_mem_outstanding(), start);
	return late;
}

/* A trace whose heap keeps growing after the second thread starts: new
 * live blocks, threads and stacks until its end, the last batch (after
 * the last line that drains the pipe) included. */
static char *oom_trace(const char *dir)
{
	const unsigned flags = GEN_LATE_STACK | GEN_MALFORMED |
			       GEN_BIG_ALLOCATOR | GEN_LAYOUTS | GEN_NEW_TIDS;
	char *path = gen_file(dir, "trace.jsonl", flags, 12000, 50);
	mt_analysis_t a;
	watch_t w;

	/* The sweep covers the two-thread path: the thread does start. */
	watch_init(&w, 0);
	mt_quiet_int_eq(run_threads(&a, path, "2", &w), MT_OK);
	mt_quiet_uint_gt(w.off_main, 0);
	mt_analysis_release(&a);
	return path;
}

START_TEST(analysis_two_threads_out_of_memory_fails_cleanly_then_matches_one)
{
	char *dir = mt_test_tmpdir();
	char *path = oom_trace(dir);

	oom_sweep(path, 0, 0);
	mt_test_rmdir(dir);
	free(dir);
	free(path);
}
END_TEST

START_TEST(analysis_two_threads_sticky_out_of_memory_fails_then_matches_one)
{
	char *dir = mt_test_tmpdir();
	char *path = oom_trace(dir);

	/* Some failures come once the second thread has applied events. */
	mt_quiet_uint_gt(oom_sweep(path, 1, 1), 0);
	mt_test_rmdir(dir);
	free(dir);
	free(path);
}
END_TEST

/* The pipe's stores ask for their lines for writing: a plain prefetch
 * (what __builtin_prefetch(p, 1) gives without -mprfchw) brings them in
 * shared, and the two-thread pass takes 1.27 times as long (measured on
 * the bench trace). */
START_TEST(pipe_stores_are_prefetched_for_writing_in_the_binary)
{
	char found[256];

	if (!mt_test_objdump_by_name(found, sizeof(found))) {
		MT_TEST_SKIP("no objdump that disassembles a function by name (%s)",
			     found);
		return;
	}
#if defined(__x86_64__)
	mt_quiet(mt_test_disassembly_count("mt_analysis_run_observed",
					   "\tprefetchw") >= 1,
		 "the pass's stores into the pipe lost their prefetchw");
#elif defined(__aarch64__)
	mt_quiet(mt_test_disassembly_count("mt_analysis_run_observed",
					   "pstl1keep") >= 1,
		 "the pass's stores into the pipe lost their prefetch");
#endif
}
END_TEST

Suite *mt_suite_pipe(void)
{
	Suite *s = suite_create("pipe");
	TCase *tc;

	tc = tcase_create("pipe");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, pipe_consumes_each_slot_once_in_publish_order);
	tcase_add_test(tc, pipe_drain_makes_the_consumers_writes_visible);
	tcase_add_test(tc, pipe_a_waiting_side_calls_the_idle_work);
	tcase_add_test(
		tc, pipe_slots_are_aligned_cache_lines_that_never_overlap);
	tcase_add_test(
		tc, pipe_release_without_a_publish_starts_no_thread_and_frees_all);
	tcase_add_test(tc, pipe_init_out_of_memory_leaves_a_releasable_pipe);
	tcase_add_test(
		tc, pipe_without_its_thread_consumes_each_slot_on_the_producer);
	tcase_add_test(
		tc, pipe_release_consumes_every_published_slot_and_joins_its_thread);
	tcase_add_test(tc, pipe_cpus_counts_the_affinity_mask);
	tcase_add_test(
		tc, pipe_stores_are_prefetched_for_writing_in_the_binary);
	suite_add_tcase(s, tc);

	tc = tcase_create("reader_ahead");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, reader_ahead_gives_the_plain_readers_lines);
	tcase_add_test(
		tc, reader_ahead_gives_the_plain_readers_lines_with_a_helper_reading);
	tcase_add_test(
		tc, reader_ahead_gives_the_plain_readers_lines_from_a_pipe);
	tcase_add_test(
		tc, reader_ahead_release_mid_file_waits_for_a_read_in_flight);
	tcase_add_test(
		tc, reader_ahead_reports_a_read_error_as_the_plain_reader_does);
	tcase_add_test(
		tc, reader_ahead_enable_out_of_memory_leaves_a_working_plain_reader);
	suite_add_tcase(s, tc);

	tc = tcase_create("analysis_both_ways");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, analysis_two_threads_match_one_on_a_complete_trace);
	tcase_add_test(tc, analysis_two_threads_match_one_with_malformed_lines);
	tcase_add_test(tc, analysis_two_threads_match_one_with_sequence_gaps);
	tcase_add_test(
		tc, analysis_two_threads_match_one_with_stacks_declared_midway);
	tcase_add_test(
		tc, analysis_two_threads_match_one_with_unknown_frees_and_rejections);
	tcase_add_test(
		tc, analysis_two_threads_match_one_with_allocator_ids_past_32_bits);
	tcase_add_test(
		tc, analysis_two_threads_match_one_with_events_after_the_stop);
	tcase_add_test(
		tc, analysis_two_threads_match_one_with_a_cut_off_last_line);
	tcase_add_test(tc, analysis_two_threads_match_one_with_zero_padding);
	tcase_add_test(tc, analysis_two_threads_match_one_with_other_layouts);
	tcase_add_test(
		tc, analysis_two_threads_match_one_with_everything_at_once);
	tcase_add_test(tc, analysis_two_threads_match_one_on_short_traces);
	tcase_add_test(
		tc, analysis_two_threads_judge_each_batch_position_at_its_line);
	tcase_add_test(
		tc, analysis_uses_a_second_thread_when_told_or_given_two_cpus);
	tcase_add_test(tc, analysis_chooses_two_threads_when_told_or_given_two_cpus);
	tcase_add_test(tc, summary_is_the_same_both_ways_on_generated_traces);
	tcase_add_test(tc, summary_is_the_same_both_ways_on_every_fixture);
	suite_add_tcase(s, tc);

	tc = tcase_create("analysis_oom");
	tcase_set_timeout(tc, 120);
	tcase_add_test(
		tc, analysis_two_threads_out_of_memory_fails_cleanly_then_matches_one);
	tcase_add_test(
		tc, analysis_two_threads_sticky_out_of_memory_fails_then_matches_one);
	suite_add_tcase(s, tc);
	return s;
}
