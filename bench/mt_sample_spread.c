/*
 * mt-sample-spread: how far a sampled run's peak_live_bytes may fall from
 * the truth, computed from a full trace of the same program, for the
 * sampling benchmark (bench/run-sample-bench; never part of make check).
 *
 *   mt-sample-spread MEAN PEAK_SEQ TRACE
 *
 * It replays TRACE's blocks of allocator 0 (the C library's: the ones the
 * preload samples) up to and including the event PEAK_SEQ (the summary's
 * peak_seq), then adds up, over the blocks live there, the variance of
 * the format's estimator at MEAN bytes (spec section 2.1), as the
 * analyzer's model writes it (analyzer/model/mt_sampling.h): a block of
 * s bytes is kept with probability p = 1 - exp(-s / MEAN) and counted
 * s / p, a variance of s^2 (1 - p) / p.  (A sampled trace's own summary
 * estimates the same sum from its recorded blocks: its
 * peak_live_bytes_stderr.)  It prints
 *
 *   blocks N, live L bytes, spread X %
 *
 * where X is the standard deviation over L: the spread of every
 * unbiased estimate of that peak made by sampling at that mean, whatever
 * the implementation.  Status 0, 64 usage, 3 unreadable, 4 out of memory.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analyzer/base/mt_map.h"
#include "../analyzer/model/mt_sampling.h"
#include "../analyzer/parse/mt_parse.h"
#include "../analyzer/read/mt_reader.h"
#include "../analyzer/base/mt_units.h"

/* Make ptr live with size bytes: 0, or -1 out of memory. */
static int put(mt_map_t *live, uint64_t ptr, uint64_t size)
{
	void *v;

	if (mt_map_upsert(live, ptr, &v, NULL))
		return -1;
	*(uint64_t *)v = size;
	return 0;
}

int main(int argc, char **argv)
{
	mt_reader_t reader;
	mt_parser_t parser;
	mt_map_t live;
	mt_line_t line;
	mt_event_t ev;
	uint64_t mean, peak_seq, key, blocks = 0;
	double bytes = 0, var = 0;
	size_t pos = 0;
	void *v;
	int got, status = 0;

	if (argc != 4 || mt_units_parse_count(argv[1], &mean) || !mean ||
	    mt_units_parse_count(argv[2], &peak_seq)) {
		fputs("usage: mt-sample-spread MEAN PEAK_SEQ TRACE\n", stderr);
		return 64;
	}
	if (mt_reader_open(&reader, argv[3])) {
		fprintf(stderr, "mt-sample-spread: cannot open '%s': %s\n", argv[3],
			strerror(errno));
		return 3;
	}
	if (mt_parser_init(&parser)) {
		mt_reader_release(&reader);
		fputs("mt-sample-spread: out of memory\n", stderr);
		return 4;
	}
	mt_map_init(&live, sizeof(uint64_t));
	while ((got = mt_reader_next(&reader, &line)) > 0) {
		mt_parse_result_t r = mt_parser_parse(&parser, line.data, line.len, &ev);
		int rc = 0;

		if (r == MT_PARSE_NOMEM)
			goto nomem;
		if (r != MT_PARSE_OK || ev.allocator_id != 0)
			continue;
		switch (ev.kind) {
		case MT_KIND_ALLOC:
		case MT_KIND_RESIZE:
			rc = put(&live, ev.ptr, ev.size);
			break;
		case MT_KIND_REMAP:
			mt_map_remove(&live, ev.ptr, NULL);
			rc = put(&live, ev.new_ptr, ev.size);
			break;
		case MT_KIND_FREE:
			mt_map_remove(&live, ev.ptr, NULL);
			break;
		default:
			break;
		}
		if (rc)
			goto nomem;
		if (ev.seq >= peak_seq)
			break;
	}
	if (got < 0) {
		fprintf(stderr, "mt-sample-spread: cannot read '%s': %s\n", argv[3],
			strerror(errno));
		status = 3;
		goto cleanup;
	}
	while (mt_map_iter(&live, &pos, &key, &v)) {
		uint64_t s = *(uint64_t *)v;

		blocks++;
		bytes += (double)s;
		var += mt_sampling_variance(mean, s, (double)s);
	}
	printf("blocks %" PRIu64 ", live %.0f bytes, spread %.2f %%\n", blocks,
	       bytes, bytes > 0 ? 100 * sqrt(var) / bytes : 0.0);
	goto cleanup;
nomem:
	fputs("mt-sample-spread: out of memory\n", stderr);
	status = 4;
cleanup:
	mt_map_release(&live);
	mt_parser_release(&parser);
	mt_reader_release(&reader);
	return status;
}
