/*
 * mt_deep: the preload benchmark's deep-stack workload: every
 * allocation is made 40 calls deep, so each event costs a full unwind
 * (memtrace stops at its depth limit, 32 by default; heaptrack takes all).
 *
 *   mt-deep [-n OPS] [-d DEPTH]        (defaults: 1000000 ops, depth 40)
 *
 * Two mutually recursive functions descend DEPTH frames, choosing at each
 * level by a bit of a path number, so there are 16 distinct call paths
 * (stacks); at the bottom, leaf() does OPS_PER_LEAF operations of the
 * churn's malloc/realloc/free mix from three call sites.  The recursion
 * must stay real frames: the functions are noinline and noclone, and each
 * does work after its call, behind an empty asm, so GCC can neither make
 * it a tail call nor turn it into a loop.  It prints a checksum that does
 * not depend on addresses, so a traced run can be compared with a bare one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SLOTS 256
#define OPS_PER_LEAF 16

typedef struct {
	void *slot[SLOTS];
	unsigned s;                   /* the random walk */
	unsigned long i;              /* operations done */
	unsigned long long requested; /* sum of the sizes asked for */
} deep_t;

__attribute__((noinline, noclone)) static unsigned leaf(deep_t *st)
{
	for (int j = 0; j < OPS_PER_LEAF; j++, st->i++) {
		unsigned k;
		size_t n = 0;

		st->s = st->s * 1103515245 + 12345;
		k = (st->s >> 16) & (SLOTS - 1);
		switch (st->i % 3) {
		case 0:
			free(st->slot[k]);
			n = 16 + (st->s >> 24);
			st->slot[k] = malloc(n);
			break;
		case 1:
			n = 32 + (st->s >> 25);
			st->slot[k] = realloc(st->slot[k], n);
			break;
		default:
			free(st->slot[k]);
			st->slot[k] = NULL;
		}
		st->requested += n;
	}
	return st->s;
}

static unsigned down_b(int depth, unsigned path, deep_t *st);

__attribute__((noinline, noclone)) static unsigned down_a(int depth, unsigned path, deep_t *st)
{
	unsigned r;

	if (depth == 0)
		r = leaf(st);
	else
		r = ((path >> (depth & 3)) & 1 ? down_a : down_b)(depth - 1, path, st);
	__asm__ volatile("" : "+r"(r));
	return r ^ (unsigned)depth;
}

__attribute__((noinline, noclone)) static unsigned down_b(int depth, unsigned path, deep_t *st)
{
	unsigned r;

	if (depth == 0)
		r = leaf(st);
	else
		r = ((path >> (depth & 3)) & 1 ? down_a : down_b)(depth - 1, path, st);
	__asm__ volatile("" : "+r"(r));
	return r + (unsigned)depth;
}

int main(int argc, char **argv)
{
	static deep_t st = { .s = 1 };
	long ops = 1000000, depth = 40;
	unsigned check = 0;
	int c;

	while ((c = getopt(argc, argv, "n:d:")) != -1) {
		switch (c) {
		case 'n':
			ops = strtol(optarg, NULL, 10);
			break;
		case 'd':
			depth = strtol(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: mt-deep [-n OPS] [-d DEPTH]\n");
			return 64;
		}
	}
	if (ops < 0 || depth < 1 || depth > 100000) {
		fprintf(stderr, "mt-deep: ops must be >= 0, depth 1..100000\n");
		return 64;
	}
	/* DEPTH frames of down_*() (depth - 1 down to 0), then leaf(). */
	for (unsigned path = 0; st.i < (unsigned long)ops; path = (path + 1) & 15)
		check ^= ((path & 1) ? down_a : down_b)((int)depth - 1, path, &st);
	for (int k = 0; k < SLOTS; k++)
		free(st.slot[k]);
	printf("deep: %lu ops %ld deep, %llu bytes requested, check %08x\n", st.i, depth,
	       st.requested, check);
	return 0;
}
