/*
 * mt_spares: per-thread mappings kept from the threads that ended
 * (mt_spares.h).  It must never wait for its lock.
 */
#include "mt_spares.h"

#include <stddef.h>
#include <sys/mman.h>

void *mt_spares_take(mt_spares_t *s)
{
	void *p = NULL;

	if (atomic_flag_test_and_set_explicit(&s->lock, memory_order_acquire))
		return NULL;
	if (s->n)
		p = s->v[--s->n];
	atomic_flag_clear_explicit(&s->lock, memory_order_release);
	return p;
}

void mt_spares_give(mt_spares_t *s, void *p, size_t len)
{
	int kept = 0;

	if (!atomic_flag_test_and_set_explicit(&s->lock, memory_order_acquire)) {
		if (s->n < MT_SPARES_MAX) {
			s->v[s->n++] = p;
			kept = 1;
		}
		atomic_flag_clear_explicit(&s->lock, memory_order_release);
	}
	if (!kept)
		munmap(p, len);
}
