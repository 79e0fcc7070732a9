/*
 * mt_pipe: a single-producer, single-consumer ring of batches with a
 * consumer thread.  It must never lose, reorder or run a slot twice, and
 * never leave a thread behind: mt_pipe_release() joins it.
 */
#include "mt_pipe.h"

#include <assert.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../common/mt_cpu.h"
#include "mt_error.h"
#include "mt_mem.h"

/* About 10 to 40 microseconds of pause before sleeping: a batch takes the
 * other side a few, so a wait usually ends while spinning, and a sleep
 * costs a system call on each side. */
#define SPINS 4000

static void futex(atomic_uint *word, int op, unsigned val)
{
	syscall(SYS_futex, word, op | FUTEX_PRIVATE_FLAG, val, NULL, NULL, 0);
}

/* Wait until *word is no longer old.  The waiter counts itself before
 * its last look and the waker stores before it looks for waiters, both
 * sequentially consistent, so one of them always sees the other: no wake
 * is lost. */
static void wait_change(mt_pipe_t *p, atomic_uint *word, unsigned old,
			atomic_int *waits)
{
	for (int i = 0; i < SPINS; i++) {
		if (atomic_load_explicit(word, memory_order_acquire) != old)
			return;
		if (p->idle && i % 64 == 0)
			p->idle(p->ctx);
		else
			mt_cpu_relax();
	}
	atomic_fetch_add(waits, 1);
	while (atomic_load(word) == old)
		futex(word, FUTEX_WAIT, old);
	atomic_fetch_sub(waits, 1);
}

static void store_and_wake(atomic_uint *word, unsigned v, atomic_int *waits)
{
	atomic_store(word, v);
	if (atomic_load(waits))
		futex(word, FUTEX_WAKE, INT_MAX);
}

static void *slot_at(const mt_pipe_t *p, unsigned i)
{
	/* A power of two: the index stays right when i wraps at 2^32. */
	return p->slots + (size_t)(i & (p->nslots - 1)) * p->slot_size;
}

static void *consumer(void *arg)
{
	mt_pipe_t *p = arg;
	unsigned done = 0;

	for (;;) {
		unsigned have = atomic_load_explicit(&p->produced, memory_order_acquire);

		if (have == done) {
			wait_change(p, &p->produced, done, &p->consumer_waits);
			continue;
		}
		/* Set before the count that woke us moved past the last slot,
		 * which mt_pipe_release() drained first: nothing is left. */
		if (atomic_load(&p->closing))
			return NULL;
		while (done != have) {
			p->consume(p->ctx, slot_at(p, done));
			done++;
			store_and_wake(&p->consumed, done, &p->producer_waits);
		}
	}
}

int mt_pipe_init(mt_pipe_t *p, size_t slot_size, unsigned nslots,
		 mt_pipe_consume_t *consume, void *ctx)
{
	assert(nslots && !(nslots & (nslots - 1)));
	memset(p, 0, sizeof(*p));
	/* Slots on lines of their own: the two threads write neighbours. */
	slot_size = (slot_size + 63) & ~(size_t)63;
	p->slots = mt_mem_calloc_line(nslots, slot_size);
	if (!p->slots)
		return MT_ENOMEM;
	p->slot_size = slot_size;
	p->nslots = nslots;
	p->consume = consume;
	p->ctx = ctx;
	return MT_OK;
}

void mt_pipe_set_idle(mt_pipe_t *p, mt_pipe_idle_t *idle)
{
	p->idle = idle;
}

void *mt_pipe_slot(mt_pipe_t *p)
{
	for (;;) {
		unsigned done = atomic_load_explicit(&p->consumed, memory_order_acquire);

		if (p->next - done < p->nslots)
			return slot_at(p, p->next);
		wait_change(p, &p->consumed, done, &p->producer_waits);
	}
}

void mt_pipe_publish(mt_pipe_t *p)
{
	if (!p->started)
		p->started = pthread_create(&p->thread, NULL, consumer, p) ? -1 : 1;
	if (p->started < 0) {
		/* No second thread: the same work, in the same order, here. */
		p->consume(p->ctx, slot_at(p, p->next));
		p->next++;
		atomic_store(&p->consumed, p->next);
		return;
	}
	p->next++;
	store_and_wake(&p->produced, p->next, &p->consumer_waits);
}

void mt_pipe_drain(mt_pipe_t *p)
{
	for (;;) {
		unsigned done = atomic_load_explicit(&p->consumed, memory_order_acquire);

		if (done == p->next)
			return;
		wait_change(p, &p->consumed, done, &p->producer_waits);
	}
}

void mt_pipe_release(mt_pipe_t *p)
{
	if (p->started > 0) {
		mt_pipe_drain(p);
		atomic_store(&p->closing, 1);
		/* One count past the last slot: a waiting consumer wakes (its
		 * futex sees the word changed) and finds closing set. */
		store_and_wake(&p->produced, p->next + 1, &p->consumer_waits);
		pthread_join(p->thread, NULL);
	}
	mt_mem_free_line(p->slots);
	memset(p, 0, sizeof(*p));
}

int mt_pipe_cpus(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return 1;
	n = CPU_COUNT(&set);
	return n > 0 ? n : 1;
}
