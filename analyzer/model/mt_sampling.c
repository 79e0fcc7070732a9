/*
 * mt_sampling: a sampled trace's estimator and its variance.  It must
 * stay the one place both are written, so that the heap's weights, the
 * standard errors the views print and the benchmark's spread agree.
 */
#include "../model/mt_sampling.h"

#include <math.h>

double mt_sampling_chance(uint64_t mean, uint64_t size)
{
	if (!mean || !size || size / 40 >= mean)
		return 1.0;
	return -expm1(-(double)size / (double)mean);
}

double mt_sampling_variance(uint64_t mean, uint64_t size, double value)
{
	double p = mt_sampling_chance(mean, size);

	return p >= 1.0 ? 0.0 : value * value * (1.0 - p) / p;
}

double mt_sampling_variance_estimate(uint64_t mean, uint64_t size,
				     double value)
{
	double p = mt_sampling_chance(mean, size);

	return p >= 1.0 ? 0.0 : value * value * (1.0 - p) / (p * p);
}

mt_sampling_var_t mt_sampling_fixed(double variance)
{
	double v = variance * (double)MT_SAMPLING_VAR_ONE;

	if (!(v > 0))
		return 0;
	if (v >= (double)MT_SAMPLING_VAR_MAX)
		return MT_SAMPLING_VAR_MAX;
	return (mt_sampling_var_t)(v + 0.5);
}

uint64_t mt_sampling_stderr(mt_sampling_var_t v)
{
	/* A double's 53 bits are plenty for a square root rounded to an
	 * integer: the root of a sum below 2^128 is below 2^64. */
	double root = sqrt((double)v / (double)MT_SAMPLING_VAR_ONE);

	return root >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)(root + 0.5);
}

mt_sampling_block_t mt_sampling_block(uint64_t mean, uint64_t size)
{
	return (mt_sampling_block_t){
		mt_sampling_fixed(mt_sampling_variance_estimate(mean, size, (double)size)),
		mt_sampling_fixed(mt_sampling_variance_estimate(mean, size, 1.0)),
	};
}
