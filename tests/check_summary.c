/*
 * check_summary: the arithmetic of the summary line (format.md sections 3 and
 * 4, docs/decisions.md) on small hand-built traces, one behaviour per
 * test.  Each expected number is worked out by hand in the comments beside
 * the trace's events; the line is parsed with json-c and every number is
 * asserted on its own.
 */
#include <inttypes.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mt_test.h"

#define MAX_SITES 64

/*
 * A trace from its events: "ev" is an event without its v and seq, with '
 * for ", and becomes {"v":1,"seq":N,ev}, N counting from 1.  "!text" is a
 * raw line (still numbered: a malformed line stands for one seq); "~text",
 * last only, a raw line without its newline.
 */
static char *build_trace(const char *const events[])
{
	size_t cap = 1;
	char *out, *p;

	for (size_t i = 0; events[i]; i++)
		cap += strlen(events[i]) + 32;
	out = p = malloc(cap);
	mt_quiet_ptr_nonnull(out);
	for (size_t i = 0; events[i]; i++) {
		const char *ev = events[i];

		if (ev[0] == '!')
			p += sprintf(p, "%s\n", ev + 1);
		else if (ev[0] == '~')
			p += sprintf(p, "%s", ev + 1);
		else
			p += sprintf(p, "{'v':1,'seq':%zu,%s}\n", i + 1, ev);
	}
	for (p = out; *p; p++)
		if (*p == '\'')
			*p = '"';
	return out;
}

typedef struct {
	char *raw; /* everything summary printed */
	struct json_object *summary;
	struct json_object *sites[MAX_SITES];
	size_t nsites;
} summary_t;

/* `memtrace summary` of the trace, all sites, zero-live ones if asked. */
static void summarize(summary_t *s, const char *const events[],
		      int include_zero_live)
{
	char *dir = mt_test_scratch();
	char *path = mt_test_path(dir, "trace.jsonl");
	char *trace = build_trace(events);
	char *memtrace = mt_test_memtrace();
	char *argv[] = { memtrace, "summary", path, "--top", "64",
			 include_zero_live ? "--include-zero-live" : NULL,
			 NULL };
	mt_test_run_t r;
	char *line;

	mt_test_write(path, trace, strlen(trace));
	mt_test_run(&r, argv, NULL);
	mt_quiet(r.status == 0, "summary exited %d: %s", r.status, r.err);
	memset(s, 0, sizeof(*s));
	s->raw = strdup(r.out);
	mt_quiet_ptr_nonnull(s->raw);
	line = r.out;
	for (size_t n = 0; *line; n++) {
		char *nl = strchr(line, '\n');
		struct json_object *o;

		mt_quiet(nl != NULL, "unterminated line: %s", line);
		*nl = '\0';
		o = json_tokener_parse(line);
		mt_quiet(o != NULL, "not JSON: %s", line);
		if (n == 0) {
			s->summary = o;
		} else {
			ck_assert_uint_lt(s->nsites, MAX_SITES);
			s->sites[s->nsites++] = o;
		}
		line = nl + 1;
	}
	mt_quiet_ptr_nonnull(s->summary);
	mt_test_run_release(&r);
	free(memtrace);
	free(trace);
	free(path);
}

static void summary_release(summary_t *s)
{
	json_object_put(s->summary);
	for (size_t i = 0; i < s->nsites; i++)
		json_object_put(s->sites[i]);
	free(s->raw);
	memset(s, 0, sizeof(*s));
}

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	mt_quiet(json_object_object_get_ex(o, key, &v), "no field %s in %s",
		 key, json_object_to_json_string(o));
	return v;
}

static uint64_t num(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	mt_quiet(json_object_is_type(v, json_type_int),
		 "%s is not an integer", key);
	return json_object_get_uint64(v);
}

#define ASSERT_NUM(o, key, expected)                                       \
	do {                                                               \
		uint64_t got_ = num((o), (key));                           \
		mt_quiet(got_ == (uint64_t)(expected),                \
			 "%s is %" PRIu64 ", expected %" PRIu64, (key), \
			 got_, (uint64_t)(expected));                 \
	} while (0)

/* The by_allocator entries, as an array. */
static struct json_object *allocators(const summary_t *s)
{
	struct json_object *a = get(s->summary, "by_allocator");

	ck_assert(json_object_is_type(a, json_type_array));
	return a;
}

static struct json_object *allocator_at(const summary_t *s, size_t i)
{
	struct json_object *a = allocators(s);

	ck_assert_uint_lt(i, json_object_array_length(a));
	return json_object_array_get_idx(a, i);
}

/* The invariant of format.md section 4, for the totals. */
static void assert_balanced(const summary_t *s)
{
	mt_quiet_uint_eq(num(s->summary, "live_bytes"),
			 num(s->summary, "bytes_allocated") -
				 num(s->summary, "bytes_freed"));
	mt_quiet_uint_ge(num(s->summary, "peak_live_bytes"),
			 num(s->summary, "live_bytes"));
}

#define START "'kind':'trace.start'"
#define LIBC "'kind':'allocator','allocator_id':0"
#define STOP "'kind':'trace.stop'"
#define ALLOC(ptr, size) \
	"'kind':'alloc','allocator_id':0,'ptr':'" ptr "','size':" #size ",'fn':'malloc'"
#define FREE(ptr) "'kind':'free','allocator_id':0,'ptr':'" ptr "'"
#define RESIZE(ptr, size) \
	"'kind':'resize','allocator_id':0,'ptr':'" ptr "','size':" #size ",'fn':'realloc'"
#define REMAP(ptr, new_ptr, size)                                           \
	"'kind':'remap','allocator_id':0,'ptr':'" ptr "','new_ptr':'" new_ptr \
	"','size':" #size ",'fn':'realloc'"
#define TID(n) ",'tid':" #n

START_TEST(test_summary_counts_allocs_and_frees)
{
	static const char *const ev[] = {
		START, LIBC,
		ALLOC("0x10", 10),                       /* 3: live 10 */
		"'kind':'alloc','allocator_id':0,'ptr':'0x20','size':20,'fn':'calloc'",
		"'kind':'alloc','allocator_id':0,'ptr':'0x30','size':30,"
		"'fn':'posix_memalign','align':64",      /* 5: live 60 */
		FREE("0x20"),                            /* 6: live 40 */
		FREE("0x10"),                            /* 7: live 30 */
		STOP, NULL,
	};
	summary_t s;

	summarize(&s, ev, 0);
	ASSERT_NUM(s.summary, "events", 8);
	ASSERT_NUM(s.summary, "allocations", 3);
	ASSERT_NUM(s.summary, "frees", 2);
	ASSERT_NUM(s.summary, "resizes", 0);
	ASSERT_NUM(s.summary, "remaps", 0);
	ASSERT_NUM(s.summary, "unknown_frees", 0);
	ASSERT_NUM(s.summary, "bytes_allocated", 60);
	ASSERT_NUM(s.summary, "bytes_freed", 30);
	ASSERT_NUM(s.summary, "live_allocations", 1);
	ASSERT_NUM(s.summary, "live_bytes", 30);
	ASSERT_NUM(s.summary, "peak_live_bytes", 60);
	ASSERT_NUM(s.summary, "peak_live_allocations", 3);
	ASSERT_NUM(s.summary, "peak_seq", 5);
	/* 0x20 and 0x10 were freed after a later allocation. */
	ASSERT_NUM(s.summary, "temporary_allocations", 0);
	assert_balanced(&s);
	summary_release(&s);
}
END_TEST

START_TEST(test_summary_resize_keeps_address_and_replaces_size)
{
	static const char *const ev[] = {
		START, LIBC,
		ALLOC("0x10", 100),       /* 3: +100          live 100 */
		RESIZE("0x10", 300),      /* 4: -100 +300     live 300 */
		RESIZE("0x10", 50),       /* 5: -300 +50      live 50 */
		STOP, NULL,
	};
	summary_t s;

	summarize(&s, ev, 0);
	ASSERT_NUM(s.summary, "allocations", 1);
	ASSERT_NUM(s.summary, "resizes", 2);
	ASSERT_NUM(s.summary, "remaps", 0);
	ASSERT_NUM(s.summary, "frees", 0);
	ASSERT_NUM(s.summary, "unknown_frees", 0);
	ASSERT_NUM(s.summary, "bytes_allocated", 450);
	ASSERT_NUM(s.summary, "bytes_freed", 400);
	ASSERT_NUM(s.summary, "live_allocations", 1);
	ASSERT_NUM(s.summary, "live_bytes", 50);
	ASSERT_NUM(s.summary, "peak_live_bytes", 300);
	ASSERT_NUM(s.summary, "peak_seq", 4);
	ASSERT_NUM(s.summary, "peak_live_allocations", 1);
	ASSERT_NUM(allocator_at(&s, 0), "resizes", 2);
	ASSERT_NUM(allocator_at(&s, 0), "allocations", 1);
	assert_balanced(&s);
	summary_release(&s);
}
END_TEST

START_TEST(test_summary_remap_moves_block_to_new_address)
{
	static const char *const ev[] = {
		START, LIBC,
		ALLOC("0x10", 100),             /* 3: live 100 */
		REMAP("0x10", "0x80", 200),     /* 4: -100 +200, live 200 at 0x80 */
		FREE("0x10"),                   /* 5: not live any more: unknown */
		FREE("0x80"),                   /* 6: -200 */
		STOP, NULL,
	};
	summary_t s;

	summarize(&s, ev, 0);
	ASSERT_NUM(s.summary, "allocations", 1);
	ASSERT_NUM(s.summary, "remaps", 1);
	ASSERT_NUM(s.summary, "resizes", 0);
	ASSERT_NUM(s.summary, "frees", 1);
	ASSERT_NUM(s.summary, "unknown_frees", 1);
	ASSERT_NUM(s.summary, "bytes_allocated", 300);
	ASSERT_NUM(s.summary, "bytes_freed", 300);
	ASSERT_NUM(s.summary, "live_allocations", 0);
	ASSERT_NUM(s.summary, "live_bytes", 0);
	ASSERT_NUM(s.summary, "peak_live_bytes", 200);
	ASSERT_NUM(s.summary, "peak_seq", 4);
	ASSERT_NUM(s.summary, "peak_live_allocations", 1);
	assert_balanced(&s);
	summary_release(&s);
}
END_TEST

START_TEST(test_summary_counts_failed_allocations_without_bytes)
{
	static const char *const ev[] = {
		START, LIBC,
		"'kind':'alloc.fail','allocator_id':0,'size':1099511627776,'fn':'malloc'",
		"'kind':'alloc.fail','allocator_id':0,'size':64,'fn':'calloc','tid':5",
		ALLOC("0x10", 8),               /* 5: live 8 */
		STOP, NULL,
	};
	summary_t s;

	summarize(&s, ev, 0);
	ASSERT_NUM(s.summary, "failed_allocations", 2);
	ASSERT_NUM(s.summary, "allocations", 1);
	ASSERT_NUM(s.summary, "bytes_allocated", 8);
	ASSERT_NUM(s.summary, "live_bytes", 8);
	ASSERT_NUM(s.summary, "peak_live_bytes", 8);
	ASSERT_NUM(s.summary, "peak_seq", 5);
	/* The failed calloc's tid is a thread of the trace. */
	ASSERT_NUM(s.summary, "threads", 1);
	summary_release(&s);
}
END_TEST

START_TEST(test_summary_counts_unknown_frees_apart_from_frees)
{
	static const char *const ev[] = {
		START, LIBC,
		ALLOC("0x10", 10),      /* 3 */
		FREE("0x999"),          /* 4: never allocated: unknown */
		FREE("0x10"),           /* 5: a free */
		FREE("0x10"),           /* 6: no longer live: unknown */
		STOP, NULL,
	};
	summary_t s;

	summarize(&s, ev, 1);
	ASSERT_NUM(s.summary, "frees", 1);
	ASSERT_NUM(s.summary, "unknown_frees", 2);
	ASSERT_NUM(s.summary, "bytes_allocated", 10);
	ASSERT_NUM(s.summary, "bytes_freed", 10);
	ASSERT_NUM(s.summary, "live_bytes", 0);
	ASSERT_NUM(s.summary, "live_allocations", 0);
	/* Not an integrity fault. */
	ck_assert_str_eq(json_object_get_string(get(s.summary, "status")),
			 "complete");
	ASSERT_NUM(allocator_at(&s, 0), "frees", 1);
	assert_balanced(&s);
	summary_release(&s);
}
END_TEST

START_TEST(test_summary_unknown_resize_makes_its_block_live)
{
	static const char *const ev[] = {
		START, LIBC,
		RESIZE("0x500", 40),    /* 3: unknown; its 40 bytes are live */
		RESIZE("0x500", 60),    /* 4: now a resize: -40 +60 */
		STOP, NULL,
	};
	summary_t s;

	summarize(&s, ev, 0);
	ASSERT_NUM(s.summary, "unknown_frees", 1);
	ASSERT_NUM(s.summary, "resizes", 1);
	ASSERT_NUM(s.summary, "allocations", 0);
	ASSERT_NUM(s.summary, "bytes_allocated", 100);
	ASSERT_NUM(s.summary, "bytes_freed", 40);
	ASSERT_NUM(s.summary, "live_allocations", 1);
	ASSERT_NUM(s.summary, "live_bytes", 60);
	ASSERT_NUM(s.summary, "peak_live_bytes", 60);
	ASSERT_NUM(s.summary, "peak_seq", 4);
	ASSERT_NUM(allocator_at(&s, 0), "live_bytes", 60);
	ASSERT_NUM(allocator_at(&s, 0), "resizes", 1);
	ASSERT_NUM(allocator_at(&s, 0), "allocations", 0);
	assert_balanced(&s);
	summary_release(&s);
}
END_TEST

START_TEST(test_summary_unknown_remap_makes_new_block_live)
{
	static const char *const ev[] = {
		START, LIBC,
		REMAP("0x500", "0x600", 24),    /* 3: unknown; 0x600 live */
		FREE("0x500"),                  /* 4: still unknown */
		FREE("0x600"),                  /* 5: a free of 24 */
		STOP, NULL,
	};
	summary_t s;

	summarize(&s, ev, 0);
	ASSERT_NUM(s.summary, "unknown_frees", 2);
	ASSERT_NUM(s.summary, "remaps", 0);
	ASSERT_NUM(s.summary, "allocations", 0);
	ASSERT_NUM(s.summary, "frees", 1);
	ASSERT_NUM(s.summary, "bytes_allocated", 24);
	ASSERT_NUM(s.summary, "bytes_freed", 24);
	ASSERT_NUM(s.summary, "live_bytes", 0);
	ASSERT_NUM(s.summary, "peak_live_bytes", 24);
	ASSERT_NUM(s.summary, "peak_seq", 3);
	assert_balanced(&s);
	summary_release(&s);
}
END_TEST

START_TEST(test_summary_overlapping_alloc_replaces_old_block)
{
	static const char *const ev[] = {
		START, LIBC,
		ALLOC("0x10", 100),     /* 3: live 100 */
		ALLOC("0x10", 30),      /* 4: overlaps: -100 +30, live 30 */
		FREE("0x10"),           /* 5: -30 */
		STOP, NULL,
	};
	summary_t s;

	summarize(&s, ev, 0);
	ASSERT_NUM(s.summary, "overlapping_allocs", 1);
	ASSERT_NUM(s.summary, "allocations", 2);
	ASSERT_NUM(s.summary, "frees", 1);
	ASSERT_NUM(s.summary, "unknown_frees", 0);
	ASSERT_NUM(s.summary, "bytes_allocated", 130);
	ASSERT_NUM(s.summary, "bytes_freed", 130);
	ASSERT_NUM(s.summary, "live_allocations", 0);
	ASSERT_NUM(s.summary, "live_bytes", 0);
	ASSERT_NUM(s.summary, "peak_live_bytes", 100);
	ASSERT_NUM(s.summary, "peak_seq", 3);
	ASSERT_NUM(s.summary, "peak_live_allocations", 1);
	assert_balanced(&s);
	summary_release(&s);
}
END_TEST

START_TEST(test_summary_temporary_is_freed_before_next_allocation_of_its_thread)
{
	static const char *const ev[] = {
		START, LIBC,
		ALLOC("0x10", 8) TID(1),        /* 3: A, thread 1 */
		ALLOC("0x20", 8) TID(2),        /* 4: B, thread 2 */
		FREE("0x10") TID(1),            /* 5: A still thread 1's latest: temporary */
		ALLOC("0x30", 8) TID(2),        /* 6: C, thread 2 */
		FREE("0x20") TID(2),            /* 7: B, C came after it: not */
		ALLOC("0x40", 8) TID(1),        /* 8: D, thread 1 */
		FREE("0x40") TID(2),            /* 9: D, freed by another thread: temporary */
		FREE("0x30") TID(2),            /* 10: C, thread 2 allocated nothing since: temporary */
		STOP, NULL,
	};
	summary_t s;

	summarize(&s, ev, 0);
	ASSERT_NUM(s.summary, "temporary_allocations", 3);
	ASSERT_NUM(s.summary, "frees", 4);
	ASSERT_NUM(s.summary, "threads", 2);
	summary_release(&s);
}
END_TEST

START_TEST(test_summary_realloc_is_an_allocation_of_its_thread)
{
	static const char *const ev[] = {
		START, LIBC,
		ALLOC("0x10", 8) TID(1),        /* 3: A */
		RESIZE("0x999", 16) TID(1),     /* 4: unknown realloc, still thread 1's allocation */
		FREE("0x10") TID(1),            /* 5: A, not temporary because of 4 */
		FREE("0x999") TID(1),           /* 6: the realloc's block: temporary */
		STOP, NULL,
	};
	summary_t s;

	summarize(&s, ev, 0);
	ASSERT_NUM(s.summary, "temporary_allocations", 1);
	ASSERT_NUM(s.summary, "frees", 2);
	ASSERT_NUM(s.summary, "unknown_frees", 1);
	summary_release(&s);
}
END_TEST

START_TEST(test_summary_events_without_tid_share_one_thread)
{
	static const char *const ev[] = {
		START, LIBC,
		ALLOC("0x10", 8),               /* 3: the anonymous thread */
		ALLOC("0x20", 8) TID(9),        /* 4: thread 9 */
		FREE("0x10"),                   /* 5: still the anonymous thread's latest */
		STOP, NULL,
	};
	summary_t s;

	summarize(&s, ev, 0);
	/* The anonymous thread is no tid: only 9 counts. */
	ASSERT_NUM(s.summary, "threads", 1);
	ASSERT_NUM(s.summary, "temporary_allocations", 1);
	summary_release(&s);
}
END_TEST

START_TEST(test_summary_trace_without_tid_has_no_threads)
{
	static const char *const ev[] = {
		START, LIBC, ALLOC("0x10", 8), FREE("0x10"), STOP, NULL,
	};
	summary_t s;

	summarize(&s, ev, 0);
	ASSERT_NUM(s.summary, "threads", 0);
	ASSERT_NUM(s.summary, "temporary_allocations", 1);
	summary_release(&s);
}
END_TEST

/* The heap caches a tid's thread by the tid's low bits: 8, 16 and 24
 * share an entry and must still be three threads. */
START_TEST(test_summary_threads_whose_tids_share_low_bits_stay_apart)
{
	static const char *const ev[] = {
		START, LIBC,
		ALLOC("0x10", 8) TID(8),        /* 3: A, thread 8 */
		ALLOC("0x20", 8) TID(16),       /* 4: B, thread 16 */
		FREE("0x10") TID(8),            /* 5: A still thread 8's latest: temporary */
		ALLOC("0x30", 8) TID(24),       /* 6: C, thread 24 */
		ALLOC("0x40", 8) TID(16),       /* 7: D, thread 16 */
		FREE("0x30") TID(24),           /* 8: C, thread 24's latest: temporary */
		FREE("0x20") TID(16),           /* 9: B, D came after it: not */
		ALLOC("0x50", 8) TID(9),        /* 10: E, thread 9 */
		FREE("0x40") TID(8),            /* 11: D, thread 16's latest: temporary */
		FREE("0x50") TID(16),           /* 12: E, thread 9's latest: temporary */
		STOP, NULL,
	};
	summary_t s;

	summarize(&s, ev, 0);
	ASSERT_NUM(s.summary, "temporary_allocations", 4);
	ASSERT_NUM(s.summary, "threads", 4);
	summary_release(&s);
}
END_TEST

START_TEST(test_summary_threads_counts_distinct_tids_of_every_event)
{
	static const char *const ev[] = {
		START, LIBC,
		ALLOC("0x10", 8) TID(100),
		ALLOC("0x20", 8) TID(200),
		FREE("0x10") TID(300),
		"'kind':'alloc.fail','allocator_id':0,'size':8,'fn':'malloc','tid':400",
		FREE("0x999") TID(100),
		RESIZE("0x20", 9) TID(500),
		REMAP("0x20", "0x30", 10) TID(600),
		ALLOC("0x40", 8) TID(200),
		STOP, NULL,
	};
	summary_t s;

	summarize(&s, ev, 0);
	ASSERT_NUM(s.summary, "threads", 6);
	summary_release(&s);
}
END_TEST

START_TEST(test_summary_peak_seq_is_where_peak_was_first_reached)
{
	static const char *const ev[] = {
		START, LIBC,
		ALLOC("0x10", 50),      /* 3: 50 */
		ALLOC("0x20", 50),      /* 4: 100, the peak */
		FREE("0x10"),           /* 5: 50 */
		ALLOC("0x30", 50),      /* 6: 100 again: not a new peak */
		FREE("0x20"),           /* 7: 50 */
		FREE("0x30"),           /* 8: 0 */
		STOP, NULL,
	};
	summary_t s;

	summarize(&s, ev, 0);
	ASSERT_NUM(s.summary, "peak_live_bytes", 100);
	ASSERT_NUM(s.summary, "peak_seq", 4);
	ASSERT_NUM(s.summary, "peak_live_allocations", 2);
	ASSERT_NUM(s.summary, "live_bytes", 0);
	ASSERT_NUM(s.summary, "live_allocations", 0);
	summary_release(&s);
}
END_TEST

START_TEST(test_summary_peak_live_allocations_is_its_own_peak)
{
	static const char *const ev[] = {
		START, LIBC,
		ALLOC("0x10", 1000),    /* 3: 1000 bytes in 1 block: peak bytes */
		FREE("0x10"),           /* 4 */
		ALLOC("0x20", 1),       /* 5 */
		ALLOC("0x30", 1),       /* 6 */
		ALLOC("0x40", 1),       /* 7: 3 bytes in 3 blocks: peak blocks */
		STOP, NULL,
	};
	summary_t s;

	summarize(&s, ev, 0);
	ASSERT_NUM(s.summary, "peak_live_bytes", 1000);
	ASSERT_NUM(s.summary, "peak_seq", 3);
	ASSERT_NUM(s.summary, "peak_live_allocations", 3);
	ASSERT_NUM(s.summary, "live_allocations", 3);
	ASSERT_NUM(s.summary, "live_bytes", 3);
	summary_release(&s);
}
END_TEST

START_TEST(test_summary_duration_is_last_t_seen)
{
	static const char *const ev[] = {
		START, LIBC,
		ALLOC("0x10", 8) ",'t':100",
		ALLOC("0x20", 8) ",'t':250",
		FREE("0x10"),           /* no t */
		STOP,                   /* no t either: 250 is the last seen */
		NULL,
	};
	summary_t s;

	summarize(&s, ev, 0);
	ASSERT_NUM(s.summary, "duration_ns", 250);
	summary_release(&s);
}
END_TEST

START_TEST(test_summary_duration_is_zero_without_t)
{
	static const char *const ev[] = {
		START, LIBC, ALLOC("0x10", 8), STOP, NULL,
	};
	summary_t s;

	summarize(&s, ev, 0);
	ASSERT_NUM(s.summary, "duration_ns", 0);
	summary_release(&s);
}
END_TEST

/* Three allocators; 0 and 9 end without live bytes. */
static const char *const three_allocators[] = {
	START,
	LIBC,                                                   /* 2: no name: libc */
	"'kind':'allocator','allocator_id':5,'name':'jemalloc'",  /* 3 */
	"'kind':'allocator','allocator_id':9",                  /* 4: no name: null */
	ALLOC("0x10", 100),                                     /* 5: a0 100    total 100 */
	"'kind':'alloc','allocator_id':5,'ptr':'0x10','size':200,'fn':'malloc'",
								/* 6: a5 200, same address, other allocator: 300 */
	"'kind':'alloc','allocator_id':5,'ptr':'0x20','size':50,'fn':'malloc'",
								/* 7: a5 250    total 350 */
	"'kind':'resize','allocator_id':5,'ptr':'0x20','size':70",
								/* 8: a5 270    total 370 */
	"'kind':'remap','allocator_id':5,'ptr':'0x10','new_ptr':'0x30','size':300",
								/* 9: a5 370    total 470, the peak */
	FREE("0x10"),                                           /* 10: a0 0     total 370 */
	"'kind':'alloc','allocator_id':9,'ptr':'0x40','size':1,'fn':'malloc'",
								/* 11: a9 1 */
	"'kind':'free','allocator_id':9,'ptr':'0x40'",          /* 12: a9 0 */
	STOP, NULL,
};

START_TEST(test_summary_by_allocator_accounts_each_allocator_apart)
{
	struct json_object *a;
	summary_t s;

	summarize(&s, three_allocators, 1);
	mt_quiet_uint_eq(json_object_array_length(allocators(&s)), 3);

	a = allocator_at(&s, 0);
	ASSERT_NUM(a, "allocator_id", 0);
	ck_assert_str_eq(json_object_get_string(get(a, "name")), "libc");
	ASSERT_NUM(a, "allocations", 1);
	ASSERT_NUM(a, "frees", 1);
	ASSERT_NUM(a, "resizes", 0);
	ASSERT_NUM(a, "remaps", 0);
	ASSERT_NUM(a, "live_bytes", 0);
	ASSERT_NUM(a, "peak_live_bytes", 100);

	a = allocator_at(&s, 1);
	ASSERT_NUM(a, "allocator_id", 5);
	ck_assert_str_eq(json_object_get_string(get(a, "name")), "jemalloc");
	ASSERT_NUM(a, "allocations", 2);
	ASSERT_NUM(a, "frees", 0);
	ASSERT_NUM(a, "resizes", 1);
	ASSERT_NUM(a, "remaps", 1);
	ASSERT_NUM(a, "live_bytes", 370);
	ASSERT_NUM(a, "peak_live_bytes", 370);

	a = allocator_at(&s, 2);
	ASSERT_NUM(a, "allocator_id", 9);
	ck_assert(json_object_is_type(get(a, "name"), json_type_null));
	ASSERT_NUM(a, "allocations", 1);
	ASSERT_NUM(a, "frees", 1);
	ASSERT_NUM(a, "live_bytes", 0);
	ASSERT_NUM(a, "peak_live_bytes", 1);

	/* The same address in two allocators is two blocks. */
	ASSERT_NUM(s.summary, "overlapping_allocs", 0);
	ASSERT_NUM(s.summary, "allocations", 4);
	ASSERT_NUM(s.summary, "frees", 2);
	ASSERT_NUM(s.summary, "resizes", 1);
	ASSERT_NUM(s.summary, "remaps", 1);
	ASSERT_NUM(s.summary, "bytes_allocated", 721);
	ASSERT_NUM(s.summary, "bytes_freed", 351);
	ASSERT_NUM(s.summary, "live_bytes", 370);
	ASSERT_NUM(s.summary, "peak_live_bytes", 470);
	ASSERT_NUM(s.summary, "peak_seq", 9);
	assert_balanced(&s);
	summary_release(&s);
}
END_TEST

START_TEST(test_summary_by_allocator_omits_allocators_without_live_bytes)
{
	summary_t s;

	summarize(&s, three_allocators, 0);
	mt_quiet_uint_eq(json_object_array_length(allocators(&s)), 1);
	ASSERT_NUM(allocator_at(&s, 0), "allocator_id", 5);
	ASSERT_NUM(allocator_at(&s, 0), "live_bytes", 370);
	summary_release(&s);
}
END_TEST

START_TEST(test_summary_live_bytes_is_bytes_allocated_minus_bytes_freed)
{
	static const char *const ev[] = {
		START, LIBC,
		ALLOC("0x10", 64),              /* 3: +64            live 64 */
		ALLOC("0x20", 32),              /* 4: +32            live 96 */
		RESIZE("0x10", 128),            /* 5: -64 +128       live 160 */
		REMAP("0x20", "0x30", 16),      /* 6: -32 +16        live 144 */
		ALLOC("0x30", 8),               /* 7: overlaps: -16 +8, live 136 */
		RESIZE("0x700", 40),            /* 8: unknown: +40   live 176, the peak */
		FREE("0x10"),                   /* 9: -128           live 48 */
		FREE("0x888"),                  /* 10: unknown */
		STOP, NULL,
	};
	struct json_object *site;
	summary_t s;

	summarize(&s, ev, 1);
	ASSERT_NUM(s.summary, "bytes_allocated", 288);
	ASSERT_NUM(s.summary, "bytes_freed", 240);
	ASSERT_NUM(s.summary, "live_bytes", 48);
	ASSERT_NUM(s.summary, "live_allocations", 2);
	ASSERT_NUM(s.summary, "peak_live_bytes", 176);
	ASSERT_NUM(s.summary, "peak_seq", 8);
	ASSERT_NUM(s.summary, "peak_live_allocations", 3);
	ASSERT_NUM(s.summary, "allocations", 3);
	ASSERT_NUM(s.summary, "frees", 1);
	ASSERT_NUM(s.summary, "resizes", 1);
	ASSERT_NUM(s.summary, "remaps", 1);
	ASSERT_NUM(s.summary, "unknown_frees", 2);
	ASSERT_NUM(s.summary, "overlapping_allocs", 1);
	assert_balanced(&s);
	ASSERT_NUM(allocator_at(&s, 0), "live_bytes", 48);
	ASSERT_NUM(allocator_at(&s, 0), "peak_live_bytes", 176);
	/* Everything is site 0 (no stacks): the same balance. */
	mt_quiet_uint_eq(s.nsites, 1);
	site = s.sites[0];
	ASSERT_NUM(site, "stack_id", 0);
	ASSERT_NUM(site, "allocations", 3);
	ASSERT_NUM(site, "bytes_allocated", 288);
	ASSERT_NUM(site, "live_allocations", 2);
	ASSERT_NUM(site, "live_bytes", 48);
	ASSERT_NUM(site, "peak_live_bytes", 176);
	summary_release(&s);
}
END_TEST

START_TEST(test_summary_events_counts_valid_events_only)
{
	static const char *const ev[] = {
		START, LIBC,
		ALLOC("0x10", 8),                               /* 3 */
		"!this line is not JSON",                       /* 4: malformed */
		"'kind':'alloc','allocator_id':4,'ptr':'0x20','size':8,'fn':'malloc'",
								/* 5: unknown allocator: malformed */
		"~{\"v\":1,\"seq\":6,\"kind\":\"alloc\",\"allocator_id\":0,"
		"\"ptr\":\"0x30\",\"size\":8,\"fn\":\"malloc\"}",
								/* 6: cut off: dropped */
		NULL,
	};
	summary_t s;

	summarize(&s, ev, 0);
	ASSERT_NUM(s.summary, "events", 3);
	ASSERT_NUM(s.summary, "malformed_events", 2);
	ASSERT_NUM(s.summary, "allocations", 1);
	ASSERT_NUM(s.summary, "bytes_allocated", 8);
	summary_release(&s);
}
END_TEST

START_TEST(test_summary_rejected_events_change_nothing)
{
	static const char *const ev[] = {
		START, LIBC,
		"'kind':'frame','frame_id':1,'ip':'0x401000'",          /* 3 */
		"'kind':'stack','stack_id':1,'frames':[1]",             /* 4 */
		ALLOC("0x10", 8) ",'stack':7,'tid':77",                 /* 5: stack never declared */
		LIBC,                                                   /* 6: declared twice */
		"'kind':'stack','stack_id':2,'frames':[1,5]",           /* 7: frame 5 never declared */
		ALLOC("0x20", 8) ",'stack':2",                          /* 8: stack 2 was rejected */
		ALLOC("0x30", 4) ",'stack':1,'tid':3",                  /* 9 */
		STOP, NULL,
	};
	summary_t s;

	summarize(&s, ev, 1);
	ASSERT_NUM(s.summary, "malformed_events", 4);
	ASSERT_NUM(s.summary, "events", 6);
	ASSERT_NUM(s.summary, "allocations", 1);
	ASSERT_NUM(s.summary, "bytes_allocated", 4);
	ASSERT_NUM(s.summary, "live_bytes", 4);
	ASSERT_NUM(s.summary, "threads", 1);
	mt_quiet_uint_eq(json_object_array_length(allocators(&s)), 1);
	mt_quiet_uint_eq(s.nsites, 1);
	ASSERT_NUM(s.sites[0], "stack_id", 1);
	ASSERT_NUM(s.sites[0], "allocations", 1);
	summary_release(&s);
}
END_TEST

#define FRAMES_AND_STACKS                                       \
	"'kind':'frame','frame_id':1,'ip':'0x1001'",            \
	"'kind':'frame','frame_id':2,'ip':'0x2002'",            \
	"'kind':'stack','stack_id':1,'frames':[1]",             \
	"'kind':'stack','stack_id':2,'frames':[2]"

START_TEST(test_summary_site_peak_is_its_own_highest_live)
{
	static const char *const ev[] = {
		START, LIBC, FRAMES_AND_STACKS,                 /* 3-6 */
		ALLOC("0x10", 100) ",'stack':1",                /* 7: site 1: 100 */
		FREE("0x10"),                                   /* 8: site 1: 0 */
		ALLOC("0x20", 30) ",'stack':2",                 /* 9: site 2: 30 */
		ALLOC("0x30", 20) ",'stack':1",                 /* 10: site 1: 20 */
		STOP, NULL,
	};
	summary_t s;

	summarize(&s, ev, 0);
	mt_quiet_uint_eq(s.nsites, 2);
	/* Ranked by live bytes: site 2 (30) before site 1 (20). */
	ASSERT_NUM(s.sites[0], "rank", 1);
	ASSERT_NUM(s.sites[0], "stack_id", 2);
	ASSERT_NUM(s.sites[0], "allocations", 1);
	ASSERT_NUM(s.sites[0], "bytes_allocated", 30);
	ASSERT_NUM(s.sites[0], "live_allocations", 1);
	ASSERT_NUM(s.sites[0], "live_bytes", 30);
	ASSERT_NUM(s.sites[0], "peak_live_bytes", 30);
	ASSERT_NUM(s.sites[1], "rank", 2);
	ASSERT_NUM(s.sites[1], "stack_id", 1);
	ASSERT_NUM(s.sites[1], "allocations", 2);
	ASSERT_NUM(s.sites[1], "bytes_allocated", 120);
	ASSERT_NUM(s.sites[1], "live_allocations", 1);
	ASSERT_NUM(s.sites[1], "live_bytes", 20);
	ASSERT_NUM(s.sites[1], "peak_live_bytes", 100);
	ASSERT_NUM(s.summary, "peak_live_bytes", 100);
	ASSERT_NUM(s.summary, "peak_seq", 7);
	summary_release(&s);
}
END_TEST

START_TEST(test_summary_realloc_with_stack_moves_block_to_its_site)
{
	static const char *const ev[] = {
		START, LIBC, FRAMES_AND_STACKS,                 /* 3-6 */
		ALLOC("0x10", 10) ",'stack':1",                 /* 7: site 1: 10 */
		RESIZE("0x10", 40) ",'stack':2",                /* 8: site 1: 0, site 2: 40 */
		ALLOC("0x20", 5) ",'stack':1",                  /* 9: site 1: 5 */
		REMAP("0x20", "0x30", 7),                       /* 10: no stack: stays in site 1: 7 */
		STOP, NULL,
	};
	summary_t s;

	summarize(&s, ev, 0);
	mt_quiet_uint_eq(s.nsites, 2);
	ASSERT_NUM(s.sites[0], "stack_id", 2);
	ASSERT_NUM(s.sites[0], "allocations", 0);
	ASSERT_NUM(s.sites[0], "bytes_allocated", 40);
	ASSERT_NUM(s.sites[0], "live_allocations", 1);
	ASSERT_NUM(s.sites[0], "live_bytes", 40);
	ASSERT_NUM(s.sites[0], "peak_live_bytes", 40);
	ASSERT_NUM(s.sites[1], "stack_id", 1);
	ASSERT_NUM(s.sites[1], "allocations", 2);
	ASSERT_NUM(s.sites[1], "bytes_allocated", 22);
	ASSERT_NUM(s.sites[1], "live_allocations", 1);
	ASSERT_NUM(s.sites[1], "live_bytes", 7);
	ASSERT_NUM(s.sites[1], "peak_live_bytes", 10);
	summary_release(&s);
}
END_TEST

START_TEST(test_summary_free_by_realloc_to_zero_is_a_free)
{
	static const char *const ev[] = {
		START, LIBC,
		ALLOC("0x10", 8),
		"'kind':'free','allocator_id':0,'ptr':'0x10','fn':'realloc'",
		STOP, NULL,
	};
	summary_t s;

	summarize(&s, ev, 0);
	ASSERT_NUM(s.summary, "frees", 1);
	ASSERT_NUM(s.summary, "bytes_freed", 8);
	ASSERT_NUM(s.summary, "live_bytes", 0);
	ASSERT_NUM(s.summary, "malformed_events", 0);
	summary_release(&s);
}
END_TEST

/* Append {"v":1,"seq":N,<fmt>} and a newline to buf. */
static void add_event(char *buf, size_t cap, size_t *len, uint64_t *seq,
		      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void add_event(char *buf, size_t cap, size_t *len, uint64_t *seq,
		      const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(buf + *len, cap - *len, "{\"v\":1,\"seq\":%" PRIu64 ",", ++*seq);
	ck_assert(n > 0 && (size_t)n < cap - *len);
	*len += (size_t)n;
	va_start(ap, fmt);
	n = vsnprintf(buf + *len, cap - *len, fmt, ap);
	va_end(ap);
	ck_assert(n > 0 && (size_t)n + 2 < cap - *len);
	*len += (size_t)n;
	buf[(*len)++] = '}';
	buf[(*len)++] = '\n';
	buf[*len] = '\0';
}

#define ALLOC_FMT "\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x%x\"," \
		  "\"size\":%u,\"fn\":\"malloc\",\"stack\":%d"

/* Output of `memtrace summary path --top top [--include-zero-live]`. */
static char *summary_top(const char *path, const char *top, int zero_live)
{
	char *memtrace = mt_test_memtrace();
	char *argv[] = { memtrace, "summary", (char *)path, "--top",
			 (char *)top, zero_live ? "--include-zero-live" : NULL,
			 NULL };
	mt_test_run_t r;
	char *out;

	mt_test_run(&r, argv, NULL);
	mt_quiet(r.status == 0, "summary exited %d: %s", r.status, r.err);
	out = strdup(r.out);
	mt_quiet_ptr_nonnull(out);
	mt_test_run_release(&r);
	free(memtrace);
	return out;
}

/* The first n lines of text, as a malloc'd string. */
static char *first_lines(const char *text, size_t n)
{
	const char *p = text;

	for (size_t i = 0; i < n && *p; i++) {
		const char *nl = strchr(p, '\n');

		mt_quiet_ptr_nonnull(nl);
		p = nl + 1;
	}
	return strndup(text, (size_t)(p - text));
}

/* --top N keeps only the N best sites while it reads them; what it
 * prints must be exactly the first N of the full ranking, ties (equal
 * live bytes, equal bytes allocated) broken by stack id. */
START_TEST(test_summary_top_n_is_the_head_of_the_full_ranking)
{
	enum { STACKS = 300 };
	char *dir = mt_test_scratch();
	char *path = mt_test_path(dir, "trace.jsonl");
	size_t cap = 256 + STACKS * 400, len = 0;
	char *trace = malloc(cap);
	uint64_t seq = 0;
	size_t live_sites = 0, used_sites = 0; /* a site never used is never listed */
	static const char *const tops[] = { "1", "2", "5", "37", "299", "300" };

	mt_quiet_ptr_nonnull(trace);
	add_event(trace, cap, &len, &seq, "\"kind\":\"trace.start\"");
	add_event(trace, cap, &len, &seq, "\"kind\":\"allocator\",\"allocator_id\":0");
	add_event(trace, cap, &len, &seq, "\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x1000\"");
	for (int i = 1; i <= STACKS; i++) {
		/* Few distinct sizes, so live bytes and bytes allocated tie
		 * often; some sites free everything they allocate. */
		unsigned live = (unsigned)(i * 7 % 5) * 16;
		unsigned dead = (unsigned)(i * 3 % 4) * 8;

		add_event(trace, cap, &len, &seq,
			  "\"kind\":\"stack\",\"stack_id\":%d,\"frames\":[1]", i);
		if (live) {
			add_event(trace, cap, &len, &seq, ALLOC_FMT,
				  0x100000 + i * 64, live, i);
			live_sites++;
		}
		used_sites += live || dead;
		if (dead) {
			add_event(trace, cap, &len, &seq, ALLOC_FMT,
				  0x900000 + i * 64, dead, i);
			add_event(trace, cap, &len, &seq,
				  "\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"0x%x\"",
				  0x900000 + i * 64);
		}
	}
	add_event(trace, cap, &len, &seq, "\"kind\":\"trace.stop\"");
	mt_test_write(path, trace, len);
	for (int zero = 0; zero <= 1; zero++) {
		char *all = summary_top(path, "1000", zero);
		size_t lines = 0;

		for (const char *p = all; (p = strchr(p, '\n')); p++)
			lines++;
		mt_quiet_uint_eq(lines, 1 + (zero ? used_sites : live_sites));

		for (size_t i = 0; i < sizeof(tops) / sizeof(tops[0]); i++) {
			char *some = summary_top(path, tops[i], zero);
			char *head = first_lines(all, 1 + strtoul(tops[i], NULL, 10));

			ck_assert_str_eq(some, head);
			free(head);
			free(some);
		}
		free(all);
	}
	free(trace);
	free(path);
}
END_TEST

START_TEST(test_summary_site_frames_offset_from_symbol_module_or_address)
{
	static const char *const ev[] = {
		START, LIBC,
		"'kind':'frame','frame_id':1,'ip':'0x401010','symbol':'main',"
		"'offset':16,'module':'/bin/app','module_offset':'0x1010'",
		"'kind':'frame','frame_id':2,'ip':'0x7f0000002000',"
		"'module':'/lib/libc.so.6','module_offset':8192",
		"'kind':'frame','frame_id':3,'ip':'0x500'",
		"'kind':'stack','stack_id':4,'frames':[3,2,1]",
		ALLOC("0x10", 8) ",'stack':4",
		STOP, NULL,
	};
	summary_t s;

	summarize(&s, ev, 0);
	mt_quiet_uint_eq(s.nsites, 1);
	ASSERT_NUM(s.sites[0], "stack_id", 4);
	/* Innermost first, each as format.md section 4 and decisions.md say. */
	mt_quiet_ptr_nonnull(strstr(
		s.raw,
		",\"frames\":[{\"symbol\":null,\"module\":null,\"offset\":\"0x500\"},"
		"{\"symbol\":null,\"module\":\"/lib/libc.so.6\",\"offset\":\"0x2000\"},"
		"{\"symbol\":\"main\",\"module\":\"/bin/app\",\"offset\":\"0x10\"}]}\n"));
	summary_release(&s);
}
END_TEST

Suite *mt_suite_summary(void)
{
	Suite *s = suite_create("summary");
	TCase *counts = tcase_create("counts");
	TCase *threads = tcase_create("threads");
	TCase *peaks = tcase_create("peaks");
	TCase *allocators_tc = tcase_create("allocators");
	TCase *sites = tcase_create("sites");

	tcase_add_test(counts, test_summary_counts_allocs_and_frees);
	tcase_add_test(counts, test_summary_resize_keeps_address_and_replaces_size);
	tcase_add_test(counts, test_summary_remap_moves_block_to_new_address);
	tcase_add_test(counts, test_summary_counts_failed_allocations_without_bytes);
	tcase_add_test(counts, test_summary_counts_unknown_frees_apart_from_frees);
	tcase_add_test(counts, test_summary_unknown_resize_makes_its_block_live);
	tcase_add_test(counts, test_summary_unknown_remap_makes_new_block_live);
	tcase_add_test(counts, test_summary_overlapping_alloc_replaces_old_block);
	tcase_add_test(counts, test_summary_live_bytes_is_bytes_allocated_minus_bytes_freed);
	tcase_add_test(counts, test_summary_events_counts_valid_events_only);
	tcase_add_test(counts, test_summary_rejected_events_change_nothing);
	tcase_add_test(counts, test_summary_free_by_realloc_to_zero_is_a_free);
	tcase_add_test(counts, test_summary_duration_is_last_t_seen);
	tcase_add_test(counts, test_summary_duration_is_zero_without_t);
	suite_add_tcase(s, counts);

	tcase_add_test(threads, test_summary_temporary_is_freed_before_next_allocation_of_its_thread);
	tcase_add_test(threads, test_summary_threads_whose_tids_share_low_bits_stay_apart);
	tcase_add_test(threads, test_summary_realloc_is_an_allocation_of_its_thread);
	tcase_add_test(threads, test_summary_events_without_tid_share_one_thread);
	tcase_add_test(threads, test_summary_trace_without_tid_has_no_threads);
	tcase_add_test(threads, test_summary_threads_counts_distinct_tids_of_every_event);
	suite_add_tcase(s, threads);

	tcase_add_test(peaks, test_summary_peak_seq_is_where_peak_was_first_reached);
	tcase_add_test(peaks, test_summary_peak_live_allocations_is_its_own_peak);
	suite_add_tcase(s, peaks);

	tcase_add_test(allocators_tc, test_summary_by_allocator_accounts_each_allocator_apart);
	tcase_add_test(allocators_tc, test_summary_by_allocator_omits_allocators_without_live_bytes);
	suite_add_tcase(s, allocators_tc);

	tcase_add_test(sites, test_summary_site_peak_is_its_own_highest_live);
	tcase_add_test(sites, test_summary_realloc_with_stack_moves_block_to_its_site);
	tcase_add_test(sites, test_summary_site_frames_offset_from_symbol_module_or_address);
	tcase_add_test(sites, test_summary_top_n_is_the_head_of_the_full_ranking);
	suite_add_tcase(s, sites);
	return s;
}
