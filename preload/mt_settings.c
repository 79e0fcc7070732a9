/*
 * mt_settings: MEMTRACE_* values to settings (mt_settings.h).  It must
 * never touch the environment itself (the core decides when a variable is
 * read and when it is taken out), never allocate, and never refuse to run
 * the program over a bad value: it says so and gives the default.
 */
#include "mt_settings.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../common/mt_ring.h"
#include "mt_sample.h"
#include "mt_say.h"
#include "mt_stack.h"
#include "mt_trace.h"

int mt_settings_depth(const char *s)
{
	char *end;
	long v;

	if (!s || !*s)
		return MT_TRACE_DEFAULT_DEPTH;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0) {
		mt_say_line("MEMTRACE_STACK_DEPTH is not a number of frames: '", s,
			    "'; using 32");
		return MT_TRACE_DEFAULT_DEPTH;
	}
	return v > MT_STACK_MAX_DEPTH ? MT_STACK_MAX_DEPTH : (int)v;
}

uint64_t mt_settings_ring_slots(const char *s)
{
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return MT_RING_DEFAULT_SLOTS;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < MT_RING_MIN_SLOTS || v > MT_RING_MAX_SLOTS || (v & (v - 1))) {
		mt_say_line("MEMTRACE_RING_SLOTS is not a power of two from 64 to 16777216: '",
			    s, "'; using 262144");
		return MT_RING_DEFAULT_SLOTS;
	}
	return v;
}

uint64_t mt_settings_sample_bytes(const char *s)
{
	uint64_t bytes = 0;

	if (s && *s) {
		bytes = mt_sample_parse(s);
		if (!bytes)
			mt_say_line("MEMTRACE_SAMPLE is not a number of bytes: '", s,
				    "'; every allocation is recorded");
	}
	return bytes;
}

uint64_t mt_settings_fail_at(const char *s)
{
	char *end;
	unsigned long long n;

	if (!s)
		return 0;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (*s && (errno || *end || *s == '-' || *s == '+')) {
		mt_say_line("MEMTRACE_FAIL_AT is not a number of allocations: '", s,
			    "'; no allocation is made to fail");
		return 0;
	}
	return *s ? (uint64_t)n : 0;
}

int mt_settings_unwind(const char *s)
{
	if (!s || !*s)
		return MT_UNWIND_DEFAULT;
	if (!strcmp(s, "libunwind"))
		return MT_UNWIND_LIBUNWIND;
	if (!strcmp(s, "fast"))
		return MT_UNWIND_FAST;
	if (!strcmp(s, "verify"))
		return MT_UNWIND_VERIFY;
	mt_say_line("MEMTRACE_UNWIND is not libunwind, fast or verify: '", s,
		    MT_UNWIND_DEFAULT == MT_UNWIND_FAST ? "'; using fast" : "'; using libunwind");
	return MT_UNWIND_DEFAULT;
}

int mt_settings_stats(const char *s)
{
	return s && !strcmp(s, "1");
}

int mt_settings_record_socket(const char *s, char *out, size_t cap)
{
	if (!s || !*s)
		return 0;
	if (strlen(s) >= cap) {
		mt_say_line("MEMTRACE_RECORD is too long: '", s,
			    "'; the program runs untraced");
		return -1;
	}
	memcpy(out, s, strlen(s) + 1);
	return 1;
}
