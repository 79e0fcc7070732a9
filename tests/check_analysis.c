/*
 * check_analysis: unit tests of mt_analysis: held block events are
 * applied in trace order.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mt_test.h"
#include "../analyzer/model/mt_analysis.h"
#include "../analyzer/base/mt_error.h"

/*
 * The pass parses block events ahead of applying them (mt_analysis.c);
 * what it reports must still be what a line-by-line pass reports: a block
 * event the heap rejects amid held ones, a gap, a free of an unknown
 * block, a frame and a malformed line between them, each at its line.
 */
START_TEST(test_analysis_applies_held_events_in_trace_order)
{
	static char trace[16384];
	size_t n = 0;
	uint64_t frees = 0, allocs = 0, prev_ptr = 0;
	mt_analysis_t a;
	mt_test_file_t f;

#define LINE(...) (n += (size_t)snprintf(trace + n, sizeof(trace) - n, __VA_ARGS__))
	LINE("{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"}\n");
	LINE("{\"v\":1,\"seq\":2,\"kind\":\"allocator\",\"allocator_id\":0}\n");
	LINE("{\"v\":1,\"seq\":3,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x10\"}\n");
	LINE("{\"v\":1,\"seq\":4,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[1]}\n");
	for (uint64_t line = 5; line <= 44; line++) {
		uint64_t seq = line < 20 ? line : line + 100;

		if (line == 12) {
			LINE("{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"alloc\","
			     "\"allocator_id\":0,\"ptr\":\"0x99\",\"size\":1,"
			     "\"fn\":\"malloc\",\"stack\":99,\"tid\":1,\"t\":1}\n", seq);
			prev_ptr = 0;
		} else if (line == 25) {
			LINE("{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"free\","
			     "\"allocator_id\":0,\"ptr\":\"0xdead\",\"fn\":\"free\","
			     "\"tid\":1,\"t\":1}\n", seq);
			prev_ptr = 0;
		} else if (line == 30) {
			LINE("{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"frame\","
			     "\"frame_id\":2,\"ip\":\"0x20\"}\n", seq);
		} else if (line == 33) {
			LINE("{\"v\":1,\n");
		} else if (prev_ptr) {
			LINE("{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"free\","
			     "\"allocator_id\":0,\"ptr\":\"0x%" PRIx64 "\","
			     "\"fn\":\"free\",\"tid\":1,\"t\":1}\n", seq, prev_ptr);
			frees++;
			prev_ptr = 0;
		} else {
			prev_ptr = 0x1000 + 16 * line;
			LINE("{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"alloc\","
			     "\"allocator_id\":0,\"ptr\":\"0x%" PRIx64 "\",\"size\":%"
			     PRIu64 ",\"fn\":\"malloc\",\"stack\":1,\"tid\":1,"
			     "\"t\":1}\n", seq, prev_ptr, line);
			allocs++;
		}
	}
	LINE("{\"v\":1,\"seq\":145,\"kind\":\"trace.stop\",\"reason\":\"exit\","
	     "\"dropped\":0}\n");
#undef LINE
	ck_assert_uint_lt(n, sizeof(trace));
	mt_test_file_write(&f, trace, n);
	mt_quiet_int_eq(mt_analysis_run(&a, f.path), MT_OK);
	mt_quiet_int_eq(a.integrity.invalid, 0);
	mt_quiet_uint_eq(a.integrity.malformed, 2);
	mt_quiet_uint_eq(a.integrity.first_malformed_line, 12);
	ck_assert_str_eq(a.integrity.first_malformed_why,
			 "it names a stack never declared ('stack')");
	ck_assert_str_eq(a.integrity.message[MT_CAVEAT_SEQUENCE_GAP],
			 "sequence gap at line 20: expected seq 20, found 120");
	mt_quiet_uint_eq(a.integrity.stop_line, 45);
	mt_quiet_uint_eq(a.integrity.last_line, 45);
	mt_quiet_uint_eq(a.heap.allocations, allocs);
	mt_quiet_uint_eq(a.heap.frees, frees);
	mt_quiet_uint_eq(a.heap.unknown_frees, 1);
	mt_quiet_uint_eq(a.heap.temporary_allocations, frees);
	/* Every line but the two malformed ones is an event. */
	mt_quiet_uint_eq(a.heap.events, 45 - 2);
	mt_analysis_release(&a);
	mt_test_file_done(&f);
}
END_TEST

Suite *mt_suite_analysis(void)
{
	Suite *s = suite_create("analysis");
	TCase *tc = tcase_create("analysis");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_analysis_applies_held_events_in_trace_order);
	suite_add_tcase(s, tc);
	return s;
}
