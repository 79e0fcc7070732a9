/*
 * mt_sites: a heap's sites as the reports list them.  It must never list a
 * site that made nothing, nor leave out one that did.
 */
#include "../model/mt_sites.h"

#include <stdlib.h>

#include "../base/mt_error.h"
#include "../base/mt_mem.h"

/* A site any list may name: it made a call (a resize to 0 bytes is one,
 * and adds no bytes) or holds bytes. */
static int site_made_anything(const mt_site_t *s, uint64_t calls)
{
	return calls || s->bytes_allocated || s->live_bytes;
}

static int by_stack_id(const void *x, const void *y)
{
	const mt_site_ref_t *a = x, *b = y;

	return (a->stack_id > b->stack_id) - (a->stack_id < b->stack_id);
}

int mt_sites_list(const mt_heap_t *h, mt_site_ref_t **out, size_t *n)
{
	size_t pos = 0, count = 0;
	uint64_t key, calls = mt_heap_site_calls(h, NULL);
	void *v;
	mt_site_ref_t *list;

	*out = NULL;
	*n = 0;
	list = mt_mem_malloc((mt_map_count(&h->stacks) + 1) * sizeof(*list));
	if (!list)
		return MT_ENOMEM;
	if (site_made_anything(&h->no_stack, calls))
		list[count++] = (mt_site_ref_t){ 0, &h->no_stack, NULL, calls };
	while (mt_map_iter(&h->stacks, &pos, &key, &v)) {
		const mt_stack_t *s = *(mt_stack_t **)v;
		const mt_site_t *site = mt_heap_stack_site(h, s);

		calls = mt_heap_site_calls(h, s);
		if (site_made_anything(site, calls))
			list[count++] = (mt_site_ref_t){ s->id, site, s, calls };
	}
	/* The table's order follows its per-process hash seed (mt_map.c):
	 * by id, every view and export is the same from run to run. */
	qsort(list, count, sizeof(*list), by_stack_id);
	*out = list;
	*n = count;
	return MT_OK;
}
