/*
 * mt_prefault: pages made resident in bulk (mt_prefault.h).  It must never
 * make a call once the program may have a seccomp filter it did not see
 * installed, nor turn a refusal into anything but "off".
 */
#include "mt_prefault.h"

#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "mt_real.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define PAGE 4096u

/* 0 until mt_prefault_init() says the process has no filter. */
static atomic_int on;

void mt_prefault_init(void)
{
	atomic_store(&on, mt_real_syscall6(SYS_prctl, PR_GET_SECCOMP, 0, 0, 0, 0, 0) == 0);
}

void mt_prefault_stop(void)
{
	atomic_store(&on, 0);
}

int mt_prefault_on(void)
{
	return atomic_load_explicit(&on, memory_order_relaxed);
}

int mt_prefault_map_flags(void)
{
	return mt_prefault_on() ? MAP_POPULATE : 0;
}

void mt_prefault_range(void *start, size_t len)
{
	uintptr_t from = (uintptr_t)start & ~(uintptr_t)(PAGE - 1);
	uintptr_t to = ((uintptr_t)start + len + PAGE - 1) & ~(uintptr_t)(PAGE - 1);

	if (!len || !mt_prefault_on())
		return;
	if (mt_real_syscall6(SYS_madvise, (long)from, (long)(to - from), MADV_POPULATE_WRITE,
			     0, 0, 0) < 0)
		atomic_store(&on, 0);
}
