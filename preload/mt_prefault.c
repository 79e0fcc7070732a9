/*
 * mt_prefault: pages made resident in bulk (mt_prefault.h).  It must never
 * make a call once the program may have a seccomp filter it did not see
 * installed, nor turn a refusal into anything but "off".
 */
#include "mt_prefault.h"

#include <elf.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
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

int mt_prefault_init(void)
{
	int filtered = mt_real_syscall6(SYS_prctl, PR_GET_SECCOMP, 0, 0, 0, 0, 0) != 0;

	atomic_store(&on, !filtered);
	return filtered;
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

/* The object this file is linked into (the preload, or a test
 * program): its headers. */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));

#define MAX_COLD 32
/* Cold arrays at most this far apart (alignment) lie next to each other. */
#define ADJACENT 64

/* The cold arrays, [from, to) in bytes each, in address order. */
static uintptr_t cold[MAX_COLD][2];
static size_t ncold;

void mt_prefault_cold(const void *at, size_t len)
{
	uintptr_t from = (uintptr_t)at;
	size_t k = ncold;

	if (!len || ncold == MAX_COLD)
		return;
	while (k > 0 && cold[k - 1][0] > from) {
		memcpy(cold[k], cold[k - 1], sizeof(cold[k]));
		k--;
	}
	cold[k][0] = from;
	cold[k][1] = from + len;
	ncold++;
}

/* The cold arrays' whole pages into pages[], [from, to) each, in address
 * order.  Arrays that lie next to each other count as one: an array of a
 * page or less between two others has no whole page of its own, and its
 * pages would otherwise be taken as the variables' (the preload keeps
 * its cold arrays together, mt_layout.h).  Returns how many. */
static size_t cold_pages(uintptr_t (*pages)[2])
{
	size_t n = 0;

	for (size_t i = 0; i < ncold;) {
		uintptr_t from = cold[i][0], to = cold[i][1];

		for (i++; i < ncold && cold[i][0] <= to + ADJACENT; i++)
			if (cold[i][1] > to)
				to = cold[i][1];
		from = (from + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
		to &= ~(uintptr_t)(PAGE - 1);
		if (from < to) {
			pages[n][0] = from;
			pages[n][1] = to;
			n++;
		}
	}
	return n;
}

/* The writable pages no relocation makes read-only: the writable PT_LOAD
 * past PT_GNU_RELRO.  0 when there is none. */
static int writable(uintptr_t *lo, uintptr_t *hi)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)__ehdr_start;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(__ehdr_start + eh->e_phoff);
	uintptr_t base = (uintptr_t)__ehdr_start, relro = 0;

	*lo = *hi = 0;
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_W)) {
			*lo = base + ph[i].p_vaddr;
			*hi = base + ph[i].p_vaddr + ph[i].p_memsz;
		} else if (ph[i].p_type == PT_GNU_RELRO) {
			relro = base + ph[i].p_vaddr + ph[i].p_memsz;
		}
	}
	if (relro > *lo)
		*lo = relro;
	*lo = (*lo + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
	*hi = (*hi + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
	return *lo < *hi;
}

size_t mt_prefault_data_ranges(uintptr_t (*out)[2], size_t max)
{
	uintptr_t lo, hi, at, pages[MAX_COLD][2];
	size_t n = 0, np;

	/* No cold array known yet: the constructors have not run. */
	if (!ncold || !writable(&lo, &hi))
		return 0;
	np = cold_pages(pages);
	at = lo;
	for (size_t i = 0; i <= np && n < max; i++) {
		uintptr_t end = i < np ? pages[i][0] : hi;

		if (end > hi)
			end = hi;
		/* One page after a cold array, before the next or the end:
		 * in the preload it holds only the arrays' edges (they lie
		 * together last, mt_layout.h), not worth a system call. */
		if (end > at && !(i > 0 && end - at == PAGE)) {
			out[n][0] = at;
			out[n][1] = end;
			n++;
		}
		if (i < np && pages[i][1] > at)
			at = pages[i][1];
	}
	return n;
}

void mt_prefault_data(void)
{
	uintptr_t r[MAX_COLD + 1][2];
	size_t n;

	if (!mt_prefault_on())
		return;
	n = mt_prefault_data_ranges(r, MAX_COLD + 1);
	for (size_t i = 0; i < n; i++)
		mt_prefault_range((void *)r[i][0], r[i][1] - r[i][0]);
}
