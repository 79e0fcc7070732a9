/*
 * mt_stack: unwinding and frame/stack interning.  It must never call the
 * loader with the trace lock held, and never allocate with malloc.
 */
#include "mt_stack.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <string.h>

#include "mt_table.h"

typedef struct {
	uint64_t id;
	uint32_t n;
	uint64_t ips[];
} stack_rec_t;

static mt_table_t frames; /* ip -> frame id */
static mt_table_t stacks; /* hash -> stack_rec_t * */
static mt_arena_t arena;
static uint64_t next_frame = 1, next_stack = 1;
static uint64_t self_lo, self_hi;

void mt_stack_init(uint64_t self_start, uint64_t self_end)
{
	self_lo = self_start;
	self_hi = self_end;
}

int mt_stack_capture(uint64_t *ips, int depth)
{
	/* Room for the tracer's own frames, dropped below. */
	void *buf[MT_STACK_MAX_DEPTH + 16];
	int n, skip = 0, want = depth + 16;

	if (depth <= 0)
		return 0;
	if (want > (int)(sizeof(buf) / sizeof(buf[0])))
		want = (int)(sizeof(buf) / sizeof(buf[0]));
	n = unw_backtrace(buf, want);
	while (skip < n && (uint64_t)buf[skip] >= self_lo &&
	       (uint64_t)buf[skip] < self_hi)
		skip++;
	n -= skip;
	if (n > depth)
		n = depth;
	for (int i = 0; i < n; i++)
		ips[i] = (uint64_t)buf[skip + i];
	return n > 0 ? n : 0;
}

uint64_t mt_stack_frame_find(uint64_t ip)
{
	size_t pos = 0;
	uint64_t id;

	/* ip is never 0, so it is a valid key as is. */
	if (mt_table_next(&frames, ip, &pos, &id))
		return id;
	return 0;
}

uint64_t mt_stack_frame_add(uint64_t ip)
{
	if (mt_table_add(&frames, ip, next_frame))
		return 0;
	return next_frame++;
}

static uint64_t hash_ips(const uint64_t *ips, int n)
{
	uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)n;

	for (int i = 0; i < n; i++) {
		h ^= ips[i];
		h *= 0x100000001b3ull;
		h ^= h >> 29;
	}
	return h ? h : 1;
}

uint64_t mt_stack_find(const uint64_t *ips, int n)
{
	uint64_t h = hash_ips(ips, n), v;
	size_t pos = 0;

	while (mt_table_next(&stacks, h, &pos, &v)) {
		const stack_rec_t *r = (const stack_rec_t *)v;

		if (r->n == (uint32_t)n &&
		    !memcmp(r->ips, ips, (size_t)n * sizeof(uint64_t)))
			return r->id;
	}
	return 0;
}

uint64_t mt_stack_add(const uint64_t *ips, int n)
{
	stack_rec_t *r = mt_arena_alloc(&arena, sizeof(*r) +
						(size_t)n * sizeof(uint64_t));

	if (!r)
		return 0;
	r->id = next_stack;
	r->n = (uint32_t)n;
	memcpy(r->ips, ips, (size_t)n * sizeof(uint64_t));
	if (mt_table_add(&stacks, hash_ips(ips, n), (uint64_t)r))
		return 0;
	return next_stack++;
}

void mt_stack_frame_ids(const uint64_t *ips, int n, uint64_t *ids)
{
	for (int i = 0; i < n; i++)
		ids[i] = mt_stack_frame_find(ips[i]);
}

void mt_stack_reset(void)
{
	mt_table_release(&frames);
	mt_table_release(&stacks);
	mt_arena_release(&arena);
	next_frame = 1;
	next_stack = 1;
}
