/*
 * mt_mem: counted allocation wrappers with fault injection.  It must never
 * be bypassed by analyzer code: a raw malloc would escape the
 * out-of-memory tests.
 */
#include "../base/mt_mem.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Atomic, so that any thread a command may run can allocate; the pass
 * allocates seldom (its tables grow by doubling), so it costs nothing
 * measurable.  Set by the
 * tests between commands only, so fail_at and fail_sticky need not be. */
static uint64_t fail_at;
static int fail_sticky;
static _Atomic uint64_t calls;
static _Atomic int64_t outstanding;

static int should_fail(void)
{
	uint64_t n = atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed) + 1;

	if (!fail_at)
		return 0;
	if (n == fail_at || (fail_sticky && n > fail_at)) {
		errno = ENOMEM;
		return 1;
	}
	return 0;
}

void *mt_mem_malloc(size_t size)
{
	void *p;

	if (should_fail())
		return NULL;
	p = malloc(size ? size : 1);
	if (p)
		atomic_fetch_add_explicit(&outstanding, 1, memory_order_relaxed);
	return p;
}

void *mt_mem_calloc(size_t n, size_t size)
{
	void *p;

	if (should_fail())
		return NULL;
	p = calloc(n ? n : 1, size ? size : 1);
	if (p)
		atomic_fetch_add_explicit(&outstanding, 1, memory_order_relaxed);
	return p;
}

/*
 * A table of MT_MEM_HUGE bytes or more (the live blocks' table, the sites)
 * is its own mapping, aligned to 2 MiB and offered to the kernel for
 * transparent huge pages (MADV_HUGEPAGE: the default "madvise" setting
 * gives them only to mappings that ask).  Its lines are reached at random,
 * one or two new ones an event; with 4 KiB pages nearly each is a TLB miss
 * too, and a nested page walk under a hypervisor.  Side by side on the
 * bench trace, a few per cent less time, 5 on the -u one (docs/
 * performance.md, "The live-block table").  Where the
 * kernel has no huge pages to give, the advice is ignored and the mapping
 * is an ordinary one.
 *
 * A mapped table starts on the huge page boundary itself, and the two
 * words that say how to free it (the mapping's address and length) sit
 * at the end of a small page of the mapping just before it: every huge
 * page of the table, the first included, can then be given back while
 * it is copied out (mt_mem_discard_line()) without losing them.  From
 * calloc, the start is the first line at least 16 bytes into the block,
 * with the same two words before it (the length 0: from calloc).
 */
#define LINE 64
#define HUGE_PAGE ((size_t)2 << 20)
#define SMALL_PAGE ((size_t)4096)

static void *huge_calloc(size_t bytes)
{
	/* Room to align the table on a huge page with a small page before
	 * it, the table to whole small pages; the caller keeps bytes below
	 * SIZE_MAX - 2 huge pages, so none of it overflows. */
	size_t want, maplen;
	unsigned char *mem, *base, *start;

	want = (bytes + SMALL_PAGE - 1) & ~(SMALL_PAGE - 1);
	maplen = SMALL_PAGE + want + HUGE_PAGE;
	mem = mmap(NULL, maplen, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return NULL;
	base = (unsigned char *)(((uintptr_t)mem + SMALL_PAGE + HUGE_PAGE - 1) &
				 ~(uintptr_t)(HUGE_PAGE - 1));
	start = base - SMALL_PAGE;
	/* What alignment left over on each side goes back at once. */
	if (start > mem)
		munmap(mem, (size_t)(start - mem));
	if (mem + maplen > base + want)
		munmap(base + want, (size_t)(mem + maplen - (base + want)));
	/* Advice, not a promise: a kernel without THP says EINVAL, and the
	 * table works the same on small pages. */
	(void)madvise(base, want, MADV_HUGEPAGE);
	((void **)(void *)base)[-1] = start;
	((size_t *)(void *)base)[-2] = SMALL_PAGE + want;
	return base;
}

void *mt_mem_calloc_line(size_t n, size_t size)
{
	unsigned char *mem, *start;

	if (size && n > (SIZE_MAX - 2 * HUGE_PAGE) / size)
		return NULL;
	if (n * size >= MT_MEM_HUGE) {
		if (should_fail())
			return NULL;
		start = huge_calloc(n * size);
		if (!start) {
			errno = ENOMEM;
			return NULL;
		}
		atomic_fetch_add_explicit(&outstanding, 1, memory_order_relaxed);
		return start;
	}
	mem = mt_mem_calloc(1, n * size + 2 * LINE);
	if (!mem)
		return NULL;
	/* At least the two words' 16 bytes before the start, at most
	 * 16 + 63: within the two lines' slack whatever malloc's alignment. */
	start = (unsigned char *)(((uintptr_t)mem + 2 * sizeof(void *) + LINE - 1) &
				  ~(uintptr_t)(LINE - 1));
	((void **)(void *)start)[-1] = mem;
	((size_t *)(void *)start)[-2] = 0;
	return start;
}

void mt_mem_free_line(void *p)
{
	size_t maplen;

	if (!p)
		return;
	maplen = ((size_t *)p)[-2];
	if (!maplen) {
		mt_mem_free(((void **)p)[-1]);
		return;
	}
	atomic_fetch_sub_explicit(&outstanding, 1, memory_order_relaxed);
	munmap(((void **)p)[-1], maplen);
}

void mt_mem_discard_line(void *p, size_t from, size_t to)
{
	uintptr_t start, end;

	if (!p || !((size_t *)p)[-2])
		return;
	/* A mapped table starts on a huge page: whole ones only, so that
	 * none is split to free a part.  The page from starts in is below
	 * to, so all of it is done. */
	start = (uintptr_t)p + from / HUGE_PAGE * HUGE_PAGE;
	end = (uintptr_t)p + to / HUGE_PAGE * HUGE_PAGE;
	if (end > start)
		(void)madvise((void *)start, end - start, MADV_DONTNEED);
}

size_t mt_mem_populate_line(void *p, size_t from, size_t to)
{
	size_t start, end, limit;

	if (!p || !((size_t *)p)[-2] || to <= from)
		return to;
	/* Whole huge pages around the range, within the table. */
	limit = ((size_t *)p)[-2] - SMALL_PAGE;
	start = from / HUGE_PAGE * HUGE_PAGE;
	end = (to + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
	if (end > limit)
		end = limit;
	if (end <= start)
		return to;
#ifdef MADV_POPULATE_WRITE
	/* Advice: a kernel without it says EINVAL, and the stores fault
	 * the pages in as they come. */
	(void)madvise((unsigned char *)p + start, end - start, MADV_POPULATE_WRITE);
#endif
	return end > to ? end : to;
}

void *mt_mem_realloc(void *p, size_t size)
{
	void *q;

	if (!p)
		return mt_mem_malloc(size);
	if (should_fail())
		return NULL;
	q = realloc(p, size ? size : 1);
	return q;
}

void mt_mem_free(void *p)
{
	if (!p)
		return;
	atomic_fetch_sub_explicit(&outstanding, 1, memory_order_relaxed);
	free(p);
}

char *mt_mem_strndup(const char *s, size_t len)
{
	char *p = mt_mem_malloc(len + 1);

	if (!p)
		return NULL;
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

void mt_mem_fail_at(uint64_t n, int sticky)
{
	fail_at = n;
	fail_sticky = sticky;
	atomic_store(&calls, 0);
}

uint64_t mt_mem_calls(void)
{
	return atomic_load(&calls);
}

int64_t mt_mem_outstanding(void)
{
	return atomic_load(&outstanding);
}

void *mt_mem_zlib_alloc(void *opaque, unsigned int items, unsigned int size)
{
	(void)opaque;
	if (size && items > SIZE_MAX / size)
		return NULL;
	return mt_mem_malloc((size_t)items * size);
}

void mt_mem_zlib_free(void *opaque, void *p)
{
	(void)opaque;
	mt_mem_free(p);
}
