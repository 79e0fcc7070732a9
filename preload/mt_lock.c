/*
 * mt_lock: the table lock (mt_lock.h).  It must never allocate or change
 * errno: it is taken inside hooks and fork handlers, through the raw
 * system call (mt_real.h).
 */
#include "mt_lock.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/syscall.h>

#include "../common/mt_cpu.h"
#include "mt_real.h"

/* 0 free, 1 held, 2 held with sleepers. */
static atomic_int tlock;

static void futex(atomic_int *word, int op, int val)
{
	int saved = errno;

	mt_real_syscall6(SYS_futex, (long)word, op | FUTEX_PRIVATE_FLAG, val, 0, 0, 0);
	errno = saved;
}

void mt_lock_take(void)
{
	int c = 0;

	if (atomic_compare_exchange_strong_explicit(&tlock, &c, 1, memory_order_acquire,
						    memory_order_relaxed))
		return;
	for (int i = 0; i < 100; i++) {
		mt_cpu_relax();
		c = 0;
		if (atomic_load_explicit(&tlock, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_strong_explicit(&tlock, &c, 1,
							    memory_order_acquire,
							    memory_order_relaxed))
			return;
	}
	c = atomic_exchange_explicit(&tlock, 2, memory_order_acquire);
	while (c) {
		futex(&tlock, FUTEX_WAIT, 2);
		c = atomic_exchange_explicit(&tlock, 2, memory_order_acquire);
	}
}

void mt_lock_give(void)
{
	if (atomic_exchange_explicit(&tlock, 0, memory_order_release) == 2)
		futex(&tlock, FUTEX_WAKE, 1);
}

void mt_lock_reset(void)
{
	atomic_store(&tlock, 0);
}
