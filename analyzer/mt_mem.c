/*
 * mt_mem: counted allocation wrappers with fault injection.  It must never
 * be bypassed by analyzer code: a raw malloc would escape the
 * out-of-memory tests.
 */
#include "mt_mem.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Atomic: the pass's second thread (mt_pipe) allocates too.  Set by the
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

/* The allocation is two lines larger than asked, its start rounded up to
 * a line; the allocation's own address is kept in the word before the
 * start, inside the rounding. */
#define LINE 64

void *mt_mem_calloc_line(size_t n, size_t size)
{
	unsigned char *mem, *start;

	if (size && n > (SIZE_MAX - 2 * LINE) / size)
		return NULL;
	mem = mt_mem_calloc(1, n * size + 2 * LINE);
	if (!mem)
		return NULL;
	start = mem + LINE - ((uintptr_t)mem & (LINE - 1));
	((void **)(void *)start)[-1] = mem;
	return start;
}

void mt_mem_free_line(void *p)
{
	if (p)
		mt_mem_free(((void **)p)[-1]);
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

void mt_mem_init_from_env(void)
{
	const char *s = getenv("MEMTRACE_ANALYZER_FAIL_AT");
	char *end;
	unsigned long long n;

	if (!s || !*s)
		return;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || *end || n == 0)
		return;
	mt_mem_fail_at(n, 0);
}
