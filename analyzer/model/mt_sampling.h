/*
 * mt_sampling: the estimator of a sampled trace (format.md 2.1) and its
 * variance, for the heap's figures (mt_heap) and for the sampling
 * benchmark's spread (bench/mt_sample_spread.c).
 *
 * At a mean of B bytes a block of s bytes is recorded with probability
 * p = 1 - exp(-s/B), and a recorded block stands for 1/p blocks and s/p
 * bytes.  A figure that sums a value v (s for bytes, 1 for blocks) over a
 * set of blocks is estimated by summing v/p over the recorded ones; the
 * blocks are sampled independently, so its variance is the sum over
 * every block of the set of v^2 (1 - p) / p (mt_sampling_variance(), what
 * a full trace of the same run gives), and that sum is estimated without
 * bias from the recorded blocks alone by summing v^2 (1 - p) / p^2
 * (mt_sampling_variance_estimate(), what a sampled trace gives).  The
 * standard error printed beside an estimate is the square root of the
 * latter.  The heap's rounding of a block's weight to whole blocks (its
 * own variance below 1/4 a block) is left out.
 *
 * A block of 0 bytes, or of at least 40 B, counts for itself (p is 1:
 * past 40 B, 1 - p is below 2^-57) and adds no variance.
 *
 * Variances are summed in fixed point (mt_sampling_var_t, in 2^-16 of a
 * unit squared), so that what a block's free takes back from a sum is
 * exactly what its alloc added, whatever the order.  One block's term is
 * at most MT_SAMPLING_VAR_MAX: a mean beyond 2^40 bytes makes the
 * variance of its smallest blocks saturate there.
 *
 * Invariant: pure functions of their arguments; no state.
 */
#ifndef MT_SAMPLING_H
#define MT_SAMPLING_H

#include <stdint.h>

/* A variance in fixed point: 2^-16 of a unit squared. */
typedef unsigned __int128 mt_sampling_var_t;

#define MT_SAMPLING_VAR_ONE ((mt_sampling_var_t)1 << 16)
#define MT_SAMPLING_VAR_MAX ((mt_sampling_var_t)1 << 100)

/* The probability that a block of size bytes is recorded at a mean of
 * mean bytes (1 when mean is 0: not sampled). */
double mt_sampling_chance(uint64_t mean, uint64_t size);

/* The variance of the estimate of value carried by one block of size
 * bytes, recorded or not: value^2 (1 - p) / p. */
double mt_sampling_variance(uint64_t mean, uint64_t size, double value);

/* Its estimate from a recorded block: value^2 (1 - p) / p^2. */
double mt_sampling_variance_estimate(uint64_t mean, uint64_t size,
				     double value);

/* A variance (>= 0) in fixed point, saturated at MT_SAMPLING_VAR_MAX. */
mt_sampling_var_t mt_sampling_fixed(double variance);

/* The standard error of a sum of variances: its square root, rounded to
 * the nearest integer. */
uint64_t mt_sampling_stderr(mt_sampling_var_t v);

/* The two terms a recorded block adds to the sums of its figures: for
 * its bytes and for its count of blocks. */
typedef struct {
	mt_sampling_var_t bytes, count;
} mt_sampling_block_t;

mt_sampling_block_t mt_sampling_block(uint64_t mean, uint64_t size);

#endif
