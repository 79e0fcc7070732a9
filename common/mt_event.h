/*
 * mt_event: the vocabulary of the memtrace JSONL format, version 1
 * (docs/format.md, section 2), shared by the writer in the
 * preload and the reader in the analyzer so both spell kinds and function
 * names the same way.
 *
 * Tables only: nothing here allocates, locks or does I/O.
 */
#ifndef MT_EVENT_H
#define MT_EVENT_H

#include <stddef.h>

#define MT_FORMAT_VERSION 1

typedef enum {
	MT_KIND_TRACE_START,
	MT_KIND_ALLOCATOR,
	MT_KIND_FRAME,
	MT_KIND_STACK,
	MT_KIND_ALLOC,
	MT_KIND_FREE,
	MT_KIND_RESIZE,
	MT_KIND_REMAP,
	MT_KIND_ALLOC_FAIL,
	MT_KIND_TRACE_STOP,
	MT_KIND_COUNT,
	MT_KIND_UNKNOWN = MT_KIND_COUNT
} mt_kind_t;

/* The functions an event's "fn" names.  The allocating ones come first so
 * mt_fn_allocates() is a comparison.  MT_FN_API is a program's own
 * allocator reporting through memtrace.h (format.md section 2.1): it
 * names alloc, free, resize and remap events alike. */
typedef enum {
	MT_FN_MALLOC,
	MT_FN_CALLOC,
	MT_FN_REALLOC,
	MT_FN_REALLOCARRAY,
	MT_FN_POSIX_MEMALIGN,
	MT_FN_ALIGNED_ALLOC,
	MT_FN_MEMALIGN,
	MT_FN_VALLOC,
	MT_FN_PVALLOC,
	MT_FN_API,
	MT_FN_FREE,
	MT_FN_COUNT,
	MT_FN_UNKNOWN = MT_FN_COUNT
} mt_fn_t;

/* Each fn with its name as written in a trace: X(MT_FN_..., "name"), for
 * the tables that spell the names (mt_event.c, mt_jsonl.c, the
 * collector's mt_lines.c), so that the spelling has one home. */
#define MT_EVENT_FNS(X)                                   \
	X(MT_FN_MALLOC, "malloc")                         \
	X(MT_FN_CALLOC, "calloc")                         \
	X(MT_FN_REALLOC, "realloc")                       \
	X(MT_FN_REALLOCARRAY, "reallocarray")             \
	X(MT_FN_POSIX_MEMALIGN, "posix_memalign")         \
	X(MT_FN_ALIGNED_ALLOC, "aligned_alloc")           \
	X(MT_FN_MEMALIGN, "memalign")                     \
	X(MT_FN_VALLOC, "valloc")                         \
	X(MT_FN_PVALLOC, "pvalloc")                       \
	X(MT_FN_API, "api")                               \
	X(MT_FN_FREE, "free")

/* The longest kind name ("trace.start") and fn name ("posix_memalign"):
 * the fixed layout in mt_jsonl.h sizes its buffers from them, and the
 * tests check every name against them. */
#define MT_EVENT_KIND_NAME_MAX 11
#define MT_EVENT_FN_NAME_MAX 14

/* The kind's name as written in a trace ("trace.start"); NULL when out of
 * range. */
const char *mt_event_kind_name(mt_kind_t kind);

/* The kind named by the len bytes at s, or MT_KIND_UNKNOWN. */
mt_kind_t mt_event_kind_parse(const char *s, size_t len);

const char *mt_event_fn_name(mt_fn_t fn);
mt_fn_t mt_event_fn_parse(const char *s, size_t len);

/* True for the kinds that change the live heap: alloc, free, resize and
 * remap (what a curve of live bytes over time follows). */
static inline int mt_event_kind_moves_heap(mt_kind_t k)
{
	return k >= MT_KIND_ALLOC && k <= MT_KIND_REMAP;
}

/* True for the functions an "alloc" or "alloc.fail" event may name. */
static inline int mt_event_fn_allocates(mt_fn_t fn)
{
	return fn < MT_FN_FREE;
}

#endif
