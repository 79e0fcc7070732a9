/*
 * mt_sites: the list of a heap's sites that report and flamegraph rank and
 * fold: every site that made a call or holds bytes, with its stack and
 * its calls.
 *
 * Invariants: the list points into the heap, which must outlive it; it is
 * mt_mem memory, whole or absent.
 */
#ifndef MT_SITES_H
#define MT_SITES_H

#include <stddef.h>
#include <stdint.h>

#include "../model/mt_heap.h"

typedef struct {
	uint64_t stack_id;
	const mt_site_t *site;
	const mt_stack_t *stack; /* NULL for site 0, the allocations without a stack */
	uint64_t calls; /* mt_heap_site_calls(): allocations, resizes, remaps */
} mt_site_ref_t;

/*
 * Every site that made a call (mt_heap_site_calls()) or holds bytes, by
 * stack id: site 0 first when it did, then the stacks.  *out is
 * mt_mem memory for the caller to free (NULL when there are none).  MT_OK
 * or MT_ENOMEM.
 */
int mt_sites_list(const mt_heap_t *h, mt_site_ref_t **out, size_t *n);

#endif
