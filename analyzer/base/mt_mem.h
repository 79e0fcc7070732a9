/*
 * mt_mem: the one door through which the analyzer allocates.
 *
 * Every allocation of the analyzer's own code goes through these wrappers so
 * that a test can make the Nth call fail (the seed's "survives every
 * allocation failure" test) and can check that nothing is left allocated
 * afterwards.  They behave like their libc namesakes, except that
 * mt_mem_realloc(p, 0) is never used as a free.
 *
 * Invariant: mt_mem_outstanding() is the number of blocks handed out and
 * not yet freed; after a command returns, whatever it returns, it is back
 * where it was.
 */
#ifndef MT_MEM_H
#define MT_MEM_H

#include <stddef.h>
#include <stdint.h>

void *mt_mem_malloc(size_t size);
void *mt_mem_calloc(size_t n, size_t size);
void *mt_mem_realloc(void *p, size_t size);
void mt_mem_free(void *p);
/*
 * n zeroed elements of size bytes starting on a cache line (64 bytes), for
 * tables whose entries must never straddle two; NULL on failure or when
 * the size overflows.  Only mt_mem_free_line() frees it.  From
 * MT_MEM_HUGE bytes on, the table is a mapping of its own, starting on a
 * 2 MiB boundary, that asks the kernel for transparent huge pages
 * (MADV_HUGEPAGE), for tables read at
 * random; below, it comes from malloc's arenas.  One call and one block
 * for the fault injection and mt_mem_outstanding() either way.
 */
#define MT_MEM_HUGE ((size_t)2 << 20)
void *mt_mem_calloc_line(size_t n, size_t size);
void mt_mem_free_line(void *p);
/*
 * Give back the memory of bytes [from, to) of a table from
 * mt_mem_calloc_line(), when the caller will never read a byte below to
 * again (a table being copied into a larger one, in order): the huge
 * pages of a mapped table that end in [from, to], the first included,
 * go back to the kernel (reading them again gives zeroes), so that the
 * copy's peak is not both tables whole.  Nothing for a table
 * from malloc's arenas.  Called for successive ranges, it gives back
 * each page once.  The table is still freed with mt_mem_free_line().
 */
void mt_mem_discard_line(void *p, size_t from, size_t to);
/*
 * Fault in, writable, the huge pages of a mapped table from
 * mt_mem_calloc_line() that hold bytes [from, to), before the caller
 * writes there: a table read before it is written (a probe, then the
 * store) otherwise maps the kernel's zero page on the read and copies it
 * on the write, a second fault and a TLB flush for each huge page.
 * Advice only (a kernel without MADV_POPULATE_WRITE ignores it); nothing
 * for a table from malloc's arenas.  Returns how far the table is now
 * made ready (to, or the end of the huge page to is in), so that a
 * caller walking up a table asks again only past it.
 */
size_t mt_mem_populate_line(void *p, size_t from, size_t to);

/* zlib's allocator pair (z_stream's zalloc and zfree: alloc_func is
 * voidpf (*)(voidpf, uInt, uInt)), through this door, so the
 * out-of-memory tests reach zlib's allocations too.  NULL when items *
 * size overflows. */
void *mt_mem_zlib_alloc(void *opaque, unsigned int items, unsigned int size);
void mt_mem_zlib_free(void *opaque, void *p);

/* A NUL-terminated copy of the len bytes at s. */
char *mt_mem_strndup(const char *s, size_t len);

/*
 * Make the nth allocation call from now on fail (1 = the next one), and
 * every later one too when sticky is set; n = 0 turns failures off.
 */
void mt_mem_fail_at(uint64_t n, int sticky);

/* Allocation calls made since the last mt_mem_fail_at(). */
uint64_t mt_mem_calls(void);

/* Blocks allocated and not freed. */
int64_t mt_mem_outstanding(void);

#endif
