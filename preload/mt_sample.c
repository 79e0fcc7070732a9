/*
 * mt_sample: byte sampling and the set of live sampled blocks
 * (mt_sample.h).  It must never call malloc or a hooked function, and
 * never take a lock or make a system call but when a sample needs a new
 * leaf of the bitmap.
 */
#include "mt_sample.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "mt_layout.h"
#include "mt_prefault.h"

uint64_t mt_sample_bytes;
MT_SAMPLE_TLS int64_t mt_sample_left;

/* Each thread's generator (xorshift64*), 0 until seeded; the seeds the
 * threads take theirs from. */
static MT_SAMPLE_TLS uint64_t rng;
static _Atomic uint64_t seed_next;

/* Distances are capped far below INT64_MAX, so that the countdown's
 * subtraction never wraps. */
#define LEFT_MAX ((int64_t)1 << 60)

uint64_t mt_sample_parse(const char *s)
{
	uint64_t v = 0, unit = 1;

	if (!s || *s < '0' || *s > '9')
		return 0;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - 9) / 10)
			return 0;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	switch (*s) {
	case '\0': break;
	case 'K': case 'k': unit = 1ull << 10; s++; break;
	case 'M': case 'm': unit = 1ull << 20; s++; break;
	case 'G': case 'g': unit = 1ull << 30; s++; break;
	default: return 0;
	}
	if (*s || !v || v > (uint64_t)LEFT_MAX / unit)
		return 0;
	return v * unit;
}

void mt_sample_seed(uint64_t seed)
{
	/* splitmix64 of the seed: nearby seeds give unrelated streams, and
	 * the state is never 0, xorshift's one fixed point. */
	seed += 0x9e3779b97f4a7c15ull;
	seed = (seed ^ (seed >> 30)) * 0xbf58476d1ce4e5b9ull;
	seed = (seed ^ (seed >> 27)) * 0x94d049bb133111ebull;
	seed ^= seed >> 31;
	rng = seed ? seed : 1;
}

static uint64_t next_random(void)
{
	/* A thread's first draw: a seed of its own from the run's. */
	if (!rng)
		mt_sample_seed(atomic_fetch_add(&seed_next, 0x9e3779b97f4a7c15ull) ^
			       (uint64_t)(uintptr_t)&rng);
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

/* ln(x) for a normal x > 0, to a few units in the last place: the
 * preload's own, so that it does not load libm into every traced process
 * for one function.  x = m 2^e, m in [sqrt(1/2), sqrt(2)); ln m =
 * 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172, whose series has
 * converged to 2^-58 by s^23. */
double mt_sample_ln(double x)
{
	uint64_t b;
	double m, s, s2, p, t = 0;
	int e;

	memcpy(&b, &x, sizeof(b));
	e = (int)((b >> 52) & 0x7ff) - 1023;
	b = (b & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
	memcpy(&m, &b, sizeof(m));
	if (m > 0x1.6a09e667f3bcdp+0) {
		m *= 0.5;
		e++;
	}
	s = (m - 1) / (m + 1);
	s2 = s * s;
	p = s;
	for (int k = 1; k <= 23; k += 2) {
		t += p / k;
		p *= s2;
	}
	return e * 0x1.62e42fefa39efp-1 + 2 * t;
}

uint64_t mt_sample_draw(void)
{
	/* u in (0, 1]: -ln(u) is finite. */
	double u = (double)((next_random() >> 11) + 1) * 0x1p-53;
	double x = -mt_sample_ln(u) * (double)mt_sample_bytes;
	uint64_t k;

	if (x >= (double)LEFT_MAX)
		return (uint64_t)LEFT_MAX;
	k = (uint64_t)x; /* rounded up, as ceil() */
	if ((double)k < x)
		k++;
	return k < 1 ? 1 : k;
}

void mt_sample_init(uint64_t bytes, uint64_t seed)
{
	atomic_store(&seed_next, seed);
	rng = 0;
	mt_sample_bytes = bytes > (uint64_t)LEFT_MAX ? (uint64_t)LEFT_MAX : bytes;
	mt_sample_left = 0;
}

int mt_sample_take_slow(size_t size)
{
	/* A thread's first allocation: its countdown is not drawn yet. */
	if (!mt_sample_left) {
		mt_sample_left = (int64_t)mt_sample_draw();
		if ((uint64_t)mt_sample_left > size) {
			mt_sample_left -= (int64_t)size;
			return 0;
		}
	}
	mt_sample_left = (int64_t)mt_sample_draw();
	return 1;
}

/* ---- the set of live sampled blocks ---- */

/* The levels are mt_sample.h's.  Addresses above 2^47 (a 5-level page
 * table's, asked for by hint only) have no bit: their blocks are never
 * sampled.  Leaves come LEAF_CHUNK bytes of them at a time. */
#define LEAF_CHUNK (1u << 20)

/* Zero pages until used: 512 KiB of address space. */
_Atomic(mt_sample_mid_t *) mt_sample_top[MT_SAMPLE_TOP_ENTRIES] MT_LAYOUT_COLD;
MT_PREFAULT_COLD(mt_sample_top);
static atomic_flag grow_lock = ATOMIC_FLAG_INIT;
static char *chunk_next, *chunk_end;

static void *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* The leaf of a, made when missing: NULL when memory ran out.  Taken only
 * by a sampled allocation, so a spin lock costs nothing measurable. */
static mt_sample_leaf_t *make_leaf(uintptr_t a)
{
	_Atomic(mt_sample_leaf_t *) *slot;
	mt_sample_leaf_t *leaf = NULL;
	mt_sample_mid_t *mid;

	while (atomic_flag_test_and_set_explicit(&grow_lock, memory_order_acquire))
		;
	mid = atomic_load_explicit(&mt_sample_top[a >> 31], memory_order_relaxed);
	if (!mid) {
		mid = map(sizeof(mt_sample_mid_t));
		if (!mid)
			goto out;
		atomic_store_explicit(&mt_sample_top[a >> 31], mid, memory_order_release);
	}
	slot = &mid->leaf[(a >> 16) & (MT_SAMPLE_MID_ENTRIES - 1)];
	leaf = atomic_load_explicit(slot, memory_order_relaxed);
	if (leaf)
		goto out;
	if (chunk_end - chunk_next < (long)sizeof(mt_sample_leaf_t)) {
		chunk_next = map(LEAF_CHUNK);
		if (!chunk_next) {
			chunk_end = NULL;
			goto out;
		}
		chunk_end = chunk_next + LEAF_CHUNK;
	}
	leaf = (mt_sample_leaf_t *)chunk_next;
	chunk_next += sizeof(mt_sample_leaf_t);
	atomic_store_explicit(slot, leaf, memory_order_release);
out:
	atomic_flag_clear_explicit(&grow_lock, memory_order_release);
	return leaf;
}

int mt_sample_mark(const void *ptr)
{
	uintptr_t a = (uintptr_t)ptr;
	mt_sample_leaf_t *leaf;

	if (a >> MT_SAMPLE_ADDR_BITS)
		return -1;
	leaf = mt_sample_leaf_of(a);
	if (!leaf)
		leaf = make_leaf(a);
	if (!leaf)
		return -1;
	atomic_fetch_or_explicit(&leaf->w[(a >> 10) & (MT_SAMPLE_LEAF_WORDS - 1)],
				 1ull << ((a >> 4) & 63), memory_order_release);
	return 0;
}

int mt_sample_unmark(const void *ptr)
{
	uintptr_t a = (uintptr_t)ptr;
	uint64_t bit = 1ull << ((a >> 4) & 63);
	mt_sample_leaf_t *leaf;
	_Atomic uint64_t *word;

	if (a >> MT_SAMPLE_ADDR_BITS || !(leaf = mt_sample_leaf_of(a)))
		return 0;
	word = &leaf->w[(a >> 10) & (MT_SAMPLE_LEAF_WORDS - 1)];
	/* A plain load first: most callers ask of a block not marked, which
	 * needs no locked instruction. */
	if (!(atomic_load_explicit(word, memory_order_acquire) & bit))
		return 0;
	return (atomic_fetch_and_explicit(word, ~bit, memory_order_acq_rel) & bit) != 0;
}
