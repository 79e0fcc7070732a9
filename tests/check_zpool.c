/*
 * check_zpool: the collector's zstd workers (collector/mt_zpool): they
 * run at the lowest priority, the caller leaves the frames to them while
 * they run, and once one held a frame too long (starved) the caller
 * compresses every frame itself; the frames come back in order, each the
 * buffer queued, whoever compressed it.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "mt_test.h"
#include "../collector/mt_out.h"
#include "../collector/mt_zpool.h"

#define CAP 4096
#define NFRAMES 8

/* What the test expander saw of each frame (its buffer's first byte). */
static struct {
	_Atomic int on_caller[NFRAMES]; /* expanded on the test's thread */
	_Atomic int nice[NFRAMES];      /* the expanding thread's nice value */
	_Atomic int done[NFRAMES];      /* expanded */
	_Atomic int hold;               /* a worker holds frame 0 while set */
	_Atomic int held;               /* a worker is holding it */
	pthread_t caller;
} seen;

/* Copies the records as they are; a worker that meets frame 0 while
 * seen.hold is set waits until it is cleared. */
static size_t copy_expand(void *state, const char *in, size_t len, size_t *pos,
			  char *lines, size_t cap)
{
	int k = (unsigned char)in[0] % NFRAMES, on_caller = pthread_equal(pthread_self(), seen.caller);
	size_t n = len - *pos;

	(void)state;
	if (n > cap)
		n = cap;
	errno = 0;
	atomic_store(&seen.nice[k], getpriority(PRIO_PROCESS, 0));
	atomic_store(&seen.on_caller[k], on_caller);
	if (!on_caller && k == 0 && atomic_load(&seen.hold)) {
		atomic_store(&seen.held, 1);
		while (atomic_load(&seen.hold))
			usleep(1000);
	}
	memcpy(lines, in + *pos, n);
	*pos += n;
	atomic_store(&seen.done[k], 1);
	return n;
}

static const mt_zpool_expander_t copy_expander = { copy_expand, 0, 2 };

/* Frame k: CAP bytes, each k (so the expander knows it). */
static void queue_frame(mt_zpool_t *p, int k)
{
	char *b = mt_zpool_buf(p);

	mt_quiet(b != NULL, "no buffer for frame %d", k);
	memset(b, k, CAP);
	mt_zpool_queue(p, CAP);
}

/* The oldest frame, waited for: frame k's CAP bytes. */
static void take_frame(mt_zpool_t *p, int k)
{
	char out[CAP];
	const char *z;
	size_t n, r;

	mt_quiet_int_eq(mt_zpool_oldest(p, 1, &z, &n), 1);
	r = ZSTD_decompress(out, sizeof(out), z, n);
	mt_quiet(!ZSTD_isError(r) && r == CAP, "frame %d decodes to %zu bytes", k, r);
	for (size_t i = 0; i < CAP; i++)
		if (out[i] != (char)k)
			mt_quiet(0, "frame %d has byte %d at %zu", k, out[i], i);
	mt_zpool_pop(p);
}

/* Let the held worker go ms after it took frame 0 and the frames in
 * mask (bit k: frame k) are expanded. */
typedef struct {
	long ms;
	unsigned mask;
} release_t;

static void *release_after(void *arg)
{
	const release_t *r = arg;

	while (!atomic_load(&seen.held))
		usleep(1000);
	for (int k = 0; k < NFRAMES; k++)
		while ((r->mask >> k & 1) && !atomic_load(&seen.done[k]))
			usleep(1000);
	mt_test_sleep_ms(r->ms);
	atomic_store(&seen.hold, 0);
	return NULL;
}

/* A pool whose workers have started. */
static mt_zpool_t *start(int workers)
{
	mt_zpool_t *p;

	memset(&seen, 0, sizeof(seen));
	seen.caller = pthread_self();
	mt_quiet_int_eq(mt_zpool_create(&p, workers, MT_OUT_LEVEL, CAP), 0);
	mt_quiet_int_eq(mt_zpool_set_expander(p, &copy_expander), 0);
	mt_zpool_start(p);
	return p;
}

/* This process's threads, from /proc/self/status; -1 unknown. */
static int threads_now(void)
{
	char line[256];
	int n = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

START_TEST(test_zpool_workers_start_only_when_asked_and_the_caller_compresses_till_then)
{
	int before = threads_now();
	mt_zpool_t *p;

	memset(&seen, 0, sizeof(seen));
	seen.caller = pthread_self();
	mt_quiet_int_eq(mt_zpool_create(&p, 2, MT_OUT_LEVEL, CAP), 0);
	mt_quiet_int_eq(mt_zpool_set_expander(p, &copy_expander), 0);
	for (int k = 1; k <= 3; k++)
		queue_frame(p, k);
	mt_test_sleep_ms(20);
	mt_quiet_int_eq(mt_zpool_oldest(p, 0, &(const char *){ 0 }, &(size_t){ 0 }), 0);
	for (int k = 1; k <= 3; k++) {
		take_frame(p, k);
		mt_quiet(atomic_load(&seen.on_caller[k]), "a worker compressed frame %d", k);
	}
	mt_quiet(before > 0, "no thread count in /proc/self/status");
	mt_quiet_int_eq(threads_now(), before);
	mt_zpool_start(p);
	mt_quiet_int_eq(threads_now(), before + 2);
	mt_zpool_start(p);
	mt_quiet_int_eq(threads_now(), before + 2);
	mt_zpool_destroy(p);
	mt_quiet_int_eq(threads_now(), before);
}
END_TEST

/* A thread's try at nice 19, as a worker makes it: its errno, or 0. */
static void *try_nice(void *arg)
{
	*(int *)arg = setpriority(PRIO_PROCESS, (id_t)gettid(), 19) < 0 ? errno : 0;
	return NULL;
}

START_TEST(test_zpool_workers_run_at_the_lowest_priority)
{
	mt_zpool_t *p;
	pthread_t t;
	int err = 0;

	/* A seccomp profile may refuse setpriority(); the worker works on
	 * at the nice value it has. */
	mt_quiet_int_eq(pthread_create(&t, NULL, try_nice, &err), 0);
	pthread_join(t, NULL);
	if (err) {
		MT_TEST_SKIP("this process may not set a thread's nice value (%s)", strerror(err));
		return;
	}
	p = start(1);
	/* One worker takes the frame (the caller only waits for it). */
	queue_frame(p, 1);
	while (!atomic_load(&seen.done[1]))
		usleep(1000);
	take_frame(p, 1);
	mt_quiet(!atomic_load(&seen.on_caller[1]), "the caller took the only frame queued");
	mt_quiet_int_eq(atomic_load(&seen.nice[1]), 19);
	mt_zpool_destroy(p);
}
END_TEST

START_TEST(test_zpool_a_caller_leaves_the_frames_to_workers_that_run)
{
	mt_zpool_t *p = start(1);
	release_t r = { 20, 0 };
	uint64_t longest = 0;
	pthread_t t;

	/* The one worker holds frame 0 for 20 ms (a starved worker's is
	 * 50): the caller waits, and the worker does 1 and 2 after. */
	atomic_store(&seen.hold, 1);
	queue_frame(p, 0);
	while (!atomic_load(&seen.held))
		usleep(1000);
	queue_frame(p, 1);
	queue_frame(p, 2);
	mt_quiet_int_eq(pthread_create(&t, NULL, release_after, &r), 0);
	for (int k = 0; k < 3; k++) {
		uint64_t from = mt_test_now_ms();

		take_frame(p, k);
		longest = mt_test_now_ms() - from > longest ? mt_test_now_ms() - from : longest;
	}
	pthread_join(t, NULL);
	mt_quiet_int_eq(mt_zpool_oldest(p, 1, &(const char *){ 0 }, &(size_t){ 0 }), 0);
	/* A worker this machine starved anyway (a wait of 50 ms) leaves
	 * the caller to compress: nothing to judge then. */
	if (longest >= 50) {
		MT_TEST_SKIP("the machine starved the worker (a wait of %" PRIu64 " ms)", longest);
	} else {
		for (int k = 0; k < 3; k++)
			mt_quiet(!atomic_load(&seen.on_caller[k]), "the caller compressed frame %d", k);
	}
	mt_zpool_destroy(p);
}
END_TEST

START_TEST(test_zpool_a_worker_that_holds_a_frame_too_long_leaves_every_later_one_to_the_caller)
{
	mt_zpool_t *p = start(1);
	release_t r = { 600, 0 };
	uint64_t from, took;
	pthread_t t;

	/* The worker holds frame 0 for 600 ms, a starved worker's: the
	 * caller takes it over after 50 and has it long before. */
	atomic_store(&seen.hold, 1);
	queue_frame(p, 0);
	while (!atomic_load(&seen.held))
		usleep(1000);
	mt_quiet_int_eq(pthread_create(&t, NULL, release_after, &r), 0);
	from = mt_test_now_ms();
	take_frame(p, 0);
	took = mt_test_now_ms() - from;
	mt_quiet(atomic_load(&seen.hold), "frame 0 came back only after the worker let go");
	mt_quiet(took >= 50, "frame 0 was taken over after %" PRIu64 " ms", took);
	mt_quiet(atomic_load(&seen.on_caller[0]), "the caller did not compress frame 0");
	/* The next frames stay queued until the caller waits for them and
	 * compresses them, while the worker still holds frame 0's input
	 * and after it let it go. */
	for (int round = 0; round < 2; round++) {
		queue_frame(p, 3);
		queue_frame(p, 4);
		mt_test_sleep_ms(20);
		mt_quiet_int_eq(mt_zpool_oldest(p, 0, &(const char *){ 0 }, &(size_t){ 0 }), 0);
		take_frame(p, 3);
		take_frame(p, 4);
		mt_quiet(atomic_load(&seen.on_caller[3]) && atomic_load(&seen.on_caller[4]),
			 "a worker took a frame after it held one too long");
		atomic_store(&seen.on_caller[3], 0);
		atomic_store(&seen.on_caller[4], 0);
		if (!round)
			pthread_join(t, NULL);
	}
	mt_zpool_destroy(p);
}
END_TEST

/* Two workers and the caller, frames queued as fast as they come back:
 * every one is its buffer, in order. */
START_TEST(test_zpool_frames_come_back_in_order_whoever_compressed_them)
{
	mt_zpool_t *p = start(2);
	int queued = 0, taken = 0;

	while (taken < 200) {
		while (queued < 200 && mt_zpool_buf(p))
			queue_frame(p, queued++ % NFRAMES);
		take_frame(p, taken++ % NFRAMES);
	}
	mt_zpool_destroy(p);
}
END_TEST

Suite *mt_suite_zpool(void)
{
	Suite *s = suite_create("zpool");
	TCase *tc = tcase_create("zpool");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_zpool_workers_start_only_when_asked_and_the_caller_compresses_till_then);
	tcase_add_test(tc, test_zpool_workers_run_at_the_lowest_priority);
	tcase_add_test(tc, test_zpool_a_caller_leaves_the_frames_to_workers_that_run);
	tcase_add_test(tc, test_zpool_a_worker_that_holds_a_frame_too_long_leaves_every_later_one_to_the_caller);
	tcase_add_test(tc, test_zpool_frames_come_back_in_order_whoever_compressed_them);
	suite_add_tcase(s, tc);
	return s;
}
