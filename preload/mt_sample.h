/*
 * mt_sample: byte sampling (MEMTRACE_SAMPLE=B, format.md "Sampled
 * traces"): which allocations are recorded, and which live blocks were.
 *
 * The decision is a Poisson process over allocated bytes with mean one
 * point per B bytes, as tcmalloc's, jemalloc's and Go's heap profilers
 * draw it: each thread counts down the bytes to its next point, drawn
 * from the exponential distribution, and an allocation of s bytes that
 * reaches the point is sampled, so with probability 1 - exp(-s/B); the
 * next distance is drawn from the end of that block (the distribution
 * has no memory).  No lock and no system call: the countdown is the
 * thread's own.
 *
 * The sampled blocks that are live are bits in a three-level radix
 * bitmap over the address space, one bit per 16 bytes (the malloc
 * family's alignment), so that the free of an unsampled block costs
 * three loads and no lock.  Its levels are mapped from the system and
 * never given back (at most 1/128 of the span the sampled blocks occupy),
 * never through the program's malloc.
 *
 * It must never call malloc or a hooked function, and never make a
 * system call on the common path.
 */
#ifndef MT_SAMPLE_H
#define MT_SAMPLE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define MT_SAMPLE_TLS __thread __attribute__((tls_model("initial-exec")))

/* The mean bytes between two samples; 0: every allocation is recorded.
 * Set once, by mt_sample_init(), before the first hook records. */
extern uint64_t mt_sample_bytes;

/* The bytes the thread may still allocate before its next sample, never
 * negative; a thread starts at 0, which sends its first allocation to the
 * slow path that draws its first distance. */
extern MT_SAMPLE_TLS int64_t mt_sample_left;

/* Parse MEMTRACE_SAMPLE's value: a positive number of bytes, with an
 * optional K, M or G (times 1024, 1024^2, 1024^3).  Returns B, or 0 when
 * s is not such a number (the caller says so). */
uint64_t mt_sample_parse(const char *s);

/* Sample with mean bytes (0: off), each thread's generator seeded from
 * seed (the caller's clock: runs differ).  Resets the calling thread's
 * countdown; other threads draw theirs at their next allocation. */
void mt_sample_init(uint64_t bytes, uint64_t seed);

/* Seed the calling thread's generator (the tests' way to repeat a run). */
void mt_sample_seed(uint64_t seed);

/* The slow half of mt_sample_take(): the countdown reached the point. */
int mt_sample_take_slow(size_t size);

/* Whether an allocation of size bytes is sampled.  Sampling on only. */
static inline __attribute__((always_inline)) int mt_sample_take(size_t size)
{
	if (__builtin_expect((uint64_t)mt_sample_left > size, 1)) {
		mt_sample_left -= (int64_t)size;
		return 0;
	}
	return mt_sample_take_slow(size);
}

/* A draw of the distance to the next point, in bytes (>= 1): what the
 * countdown restarts from.  For the tests of the estimator. */
uint64_t mt_sample_draw(void);

/* The natural logarithm of a normal x > 0, the draw's own (the preload
 * loads no libm); exposed for its test against libm's log(). */
double mt_sample_ln(double x);

/*
 * The set of live sampled blocks.  mark: ptr is a sampled block now (0,
 * or -1 when no memory could be mapped for its bit: the caller records it
 * as dropped).  unmark: remove ptr, returning whether it was there.
 * marked: whether it is, without changing it.  Any thread, no lock: a
 * block is marked by the thread that allocated it before the program sees
 * it, and unmarked by the one that frees it.
 */
int mt_sample_mark(const void *ptr);
int mt_sample_unmark(const void *ptr);

/* The bitmap's levels (mt_sample.c): address bits 4..15 pick a bit of a
 * leaf, 16..30 a leaf of a mid node, 31..46 a mid node of the top. */
#define MT_SAMPLE_LEAF_WORDS 64
#define MT_SAMPLE_MID_ENTRIES (1u << 15)
#define MT_SAMPLE_TOP_ENTRIES (1u << 16)
#define MT_SAMPLE_ADDR_BITS 47

typedef struct {
	_Atomic uint64_t w[MT_SAMPLE_LEAF_WORDS];
} mt_sample_leaf_t;

typedef struct {
	_Atomic(mt_sample_leaf_t *) leaf[MT_SAMPLE_MID_ENTRIES];
} mt_sample_mid_t;

extern _Atomic(mt_sample_mid_t *) mt_sample_top[MT_SAMPLE_TOP_ENTRIES];

/* The leaf holding address a's bit, NULL when none was made (a below
 * 2^47). */
static inline mt_sample_leaf_t *mt_sample_leaf_of(uintptr_t a)
{
	mt_sample_mid_t *mid = atomic_load_explicit(&mt_sample_top[a >> 31],
						    memory_order_acquire);

	if (!mid)
		return NULL;
	return atomic_load_explicit(&mid->leaf[(a >> 16) & (MT_SAMPLE_MID_ENTRIES - 1)],
				    memory_order_acquire);
}

/* Inline: every free of a sampled run asks, nearly always of a block
 * that was not sampled. */
static inline int mt_sample_marked(const void *ptr)
{
	uintptr_t a = (uintptr_t)ptr;
	mt_sample_leaf_t *leaf;

	if (a >> MT_SAMPLE_ADDR_BITS)
		return 0;
	leaf = mt_sample_leaf_of(a);
	return leaf && (atomic_load_explicit(&leaf->w[(a >> 10) & (MT_SAMPLE_LEAF_WORDS - 1)],
					     memory_order_acquire) >> ((a >> 4) & 63) & 1);
}

#endif
