/*
 * mt_record: appending records to the ring, and waiting for the
 * collector.  It must never take a lock on the common path, never call
 * malloc or a hooked function, and never wait for a collector that is
 * gone.
 */
#include "mt_record.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

#include "../common/mt_cpu.h"
#include "../common/mt_fmt.h"
#include "mt_prefault.h"
#include "mt_real.h"

mt_spawn_ring_t mt_record_ring;
int mt_record_prefetchw = -1;
__thread uint64_t mt_record_seen_tail __attribute__((tls_model("initial-exec")));

#define WAIT_NS (10 * 1000 * 1000)

static uint64_t now_ns(void)
{
	struct timespec ts;

	mt_real_syscall6(SYS_clock_gettime, CLOCK_MONOTONIC, (long)&ts, 0, 0, 0, 0);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A wait on a word the collector shares: not FUTEX_PRIVATE_FLAG. */
static void futex_wait(_Atomic uint32_t *word, uint32_t val, long ns)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = ns };

	mt_real_syscall6(SYS_futex, (long)word, FUTEX_WAIT, val, (long)&ts, 0, 0);
}

/* Whether pid is a zombie (its state in /proc/PID/stat is Z): a collector
 * that ended and that no one reaps (a subreaper that does not wait). */
static int zombie(pid_t pid)
{
	char path[64] = "/proc/", buf[256], num[MT_FMT_U64_MAX + 1];
	long fd, n;
	char *p;

	num[mt_fmt_u64(num, (uint64_t)pid)] = '\0';
	strcat(strcat(path, num), "/stat");
	fd = mt_real_syscall6(SYS_open, (long)path, O_RDONLY | O_CLOEXEC, 0, 0, 0, 0);
	if (fd < 0)
		return 0;
	n = mt_real_syscall6(SYS_read, fd, (long)buf, sizeof(buf) - 1, 0, 0, 0);
	mt_real_syscall6(SYS_close, fd, 0, 0, 0, 0, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'Z';
}

/*
 * A collector stopped or slow (a write to a slow disk) is waited for:
 * that is backpressure.  One that has ended is not.  The collector owns
 * the ring's drainer word through its robust futex list (mt_ring.h): the
 * kernel marks it when the collector ends, zombie or reaped, so the
 * program learns it with a load and no system call, which a program that
 * has locked its system calls down may refuse.  A collector that could
 * not take the word (zero) is asked with kill(2) and /proc.
 */
static int drainer_gone(void)
{
	mt_ring_hdr_t *h = mt_record_ring.hdr;
	uint32_t w = atomic_load(&h->drainer);

	if (w)
		return (w & MT_RING_DRAINER_DIED) != 0;
	return mt_real_syscall6(SYS_kill, mt_record_ring.collector, 0, 0, 0, 0, 0) == -ESRCH ||
	       zombie(mt_record_ring.collector);
}

/* Whether the collector has finished, failed, or is no more: a load or
 * two while it has its word, cheap enough for the periodic check. */
static int collector_ended(void)
{
	uint32_t st = atomic_load(&mt_record_ring.hdr->state);

	return st == MT_RING_DONE || st == MT_RING_FAILED || drainer_gone();
}

int mt_record_collector_alive(void)
{
	return !collector_ended();
}

/* Ring the doorbell of a collector napping on an empty ring (its nap is
 * a millisecond): for a writer that waits for room, and for a STOP or
 * UNSTOP the program waits for.  The fence orders the record published
 * before the look at sleeping, against the collector's store of sleeping
 * before its look at the slot: one of the two sees the other. */
static void wake_collector(void)
{
	mt_ring_hdr_t *h = mt_record_ring.hdr;

	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load(&h->sleeping)) {
		atomic_fetch_add(&h->doorbell, 1);
		mt_real_syscall6(SYS_futex, (long)&h->doorbell, FUTEX_WAKE, 1, 0, 0, 0);
	}
}

/* Slots [from, from + steps steps) made resident, within the first lap. */
static void prefault_from(uint64_t from, unsigned steps)
{
	uint64_t nslots = mt_record_ring.hdr->nslots;
	uint64_t to = from + ((uint64_t)steps << MT_RECORD_STEP_SHIFT);

	if (from >= nslots)
		return;
	if (to > nslots)
		to = nslots;
	mt_prefault_range(&mt_record_ring.slots[from], (size_t)(to - from) * sizeof(mt_ring_slot_t));
}

void mt_record_prefault_start(void)
{
	uint64_t first = (uint64_t)1 << MT_RECORD_STEP_SHIFT, nslots = mt_record_ring.hdr->nslots;

#if defined(__x86_64__)
	if (mt_record_prefetchw < 0) {
		unsigned a, b, c, d;

		/* Every x86-64 has the leaf (its long mode bit is there):
		 * one CPUID, which a hypervisor traps (1.4 us here). */
		__cpuid(0x80000001, a, b, c, d);
		(void)a, (void)b, (void)d;
		mt_record_prefetchw = (c & bit_PRFCHW) != 0;
	}
#endif

	/* The first step; the header's first page was made resident when
	 * the ring was mapped (mt_spawn.c). */
	mt_prefault_range(mt_record_ring.slots,
			  (size_t)(first < nslots ? first : nslots) * sizeof(mt_ring_slot_t));
}

int mt_record_checkpoint(uint64_t pos, unsigned n)
{
	mt_ring_hdr_t *h = mt_record_ring.hdr;
	uint64_t end = pos + n;

	/* The step the writer entered (made resident when the one before
	 * was entered, unless a record leapt over it) and the next. */
	prefault_from(end >> MT_RECORD_STEP_SHIFT << MT_RECORD_STEP_SHIFT, 2);
	if (((end ^ pos) >> MT_RECORD_CHECK_SHIFT) && collector_ended())
		return -1;
	if (pos + n - mt_record_seen_tail > h->nslots)
		return mt_record_wait_room(pos, n);
	return 0;
}

int mt_record_wait_room(uint64_t pos, unsigned n)
{
	mt_ring_hdr_t *h = mt_record_ring.hdr;
	uint64_t need = pos + n - h->nslots, tail;
	int saved = errno;

	for (int i = 0; i < 200; i++) {
		tail = atomic_load_explicit(&h->tail, memory_order_acquire);
		if (tail >= need)
			goto room;
		mt_cpu_relax();
	}
	for (;;) {
		uint32_t moves;

		wake_collector();
		atomic_fetch_add(&h->waiters, 1);
		moves = atomic_load(&h->tail_moves);
		tail = atomic_load_explicit(&h->tail, memory_order_acquire);
		if (tail < need)
			futex_wait(&h->tail_moves, moves, WAIT_NS);
		atomic_fetch_sub(&h->waiters, 1);
		tail = atomic_load_explicit(&h->tail, memory_order_acquire);
		if (tail >= need)
			goto room;
		if (!mt_record_collector_alive()) {
			errno = saved;
			return -1;
		}
	}
room:
	mt_record_seen_tail = tail;
	errno = saved;
	return 0;
}

int mt_record_text(const char *line, size_t len)
{
	unsigned n = len <= MT_RING_PAYLOAD ? 1 :
		     (unsigned)((len + MT_RING_PAYLOAD - 1) / MT_RING_PAYLOAD);
	uint64_t pos;

	if (len > MT_RING_TEXT_MAX)
		return -1;
	if (mt_record_reserve(n, &pos) < 0)
		return -1;
	for (unsigned i = 0; i < n; i++) {
		mt_ring_slot_t *s = mt_record_slot(pos + i);
		size_t off = (size_t)i * MT_RING_PAYLOAD;
		size_t k = len - off < MT_RING_PAYLOAD ? len - off : MT_RING_PAYLOAD;

		memcpy(s->payload, line + off, k);
		if (i)
			atomic_store_explicit(&s->word,
					      MT_RING_WORD(MT_REC_CONT, 0, 0, 0, 0),
					      memory_order_relaxed);
	}
	mt_record_publish(pos, MT_RING_WORD(MT_REC_TEXT, n, 0, 0, len));
	return 0;
}

static int one_slot(unsigned type, unsigned reason, uint64_t t,
		    uint64_t dropped, uint64_t *end)
{
	mt_ring_stop_t *s;
	uint64_t pos;

	if (mt_record_reserve(1, &pos) < 0)
		return -1;
	s = (mt_ring_stop_t *)mt_record_slot(pos);
	s->t = t;
	s->dropped = dropped;
	mt_record_publish(pos, MT_RING_WORD(type, 1, reason, 0, 0));
	*end = pos + 1;
	/* The program waits for what follows: the collector looks now. */
	wake_collector();
	return 0;
}

int mt_record_stop(unsigned reason, uint64_t t, uint64_t dropped, uint64_t *end)
{
	return one_slot(MT_REC_STOP, reason, t, dropped, end);
}

int mt_record_unstop(uint64_t *end)
{
	return one_slot(MT_REC_UNSTOP, 0, 0, 0, end);
}

int mt_record_wait_collector(uint64_t end, int ack, unsigned timeout_ms)
{
	mt_ring_hdr_t *h = mt_record_ring.hdr;
	uint64_t until = timeout_ms ? now_ns() + timeout_ms * 1000000ull : 0;
	int saved = errno, rc = -1;

	for (;;) {
		uint32_t acks = atomic_load(&h->acks), st = atomic_load(&h->state);

		if (ack ? atomic_load(&h->acked) >= end : st == MT_RING_DONE) {
			rc = 0;
			break;
		}
		if (!mt_record_collector_alive() || (until && now_ns() > until))
			break;
		if (ack)
			futex_wait(&h->acks, acks, WAIT_NS);
		else
			futex_wait(&h->state, st, WAIT_NS);
	}
	errno = saved;
	return rc;
}

int mt_record_wait_open(void)
{
	mt_ring_hdr_t *h = mt_record_ring.hdr;
	int saved = errno, rc;

	for (;;) {
		uint32_t st = atomic_load(&h->state);

		if (st != MT_RING_STARTING) {
			rc = st == MT_RING_DONE ? MT_RING_FAILED : (int)st;
			break;
		}
		if (drainer_gone()) {
			rc = -1;
			break;
		}
		futex_wait(&h->state, st, WAIT_NS);
	}
	errno = saved;
	return rc;
}
