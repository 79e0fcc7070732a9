/*
 * mt_event: names of event kinds and allocation functions.  Plain tables,
 * safe to use from inside a malloc hook.
 */
#include "mt_event.h"

#include <string.h>

static const char *const kind_names[MT_KIND_COUNT] = {
	[MT_KIND_TRACE_START] = "trace.start",
	[MT_KIND_ALLOCATOR] = "allocator",
	[MT_KIND_FRAME] = "frame",
	[MT_KIND_STACK] = "stack",
	[MT_KIND_ALLOC] = "alloc",
	[MT_KIND_FREE] = "free",
	[MT_KIND_RESIZE] = "resize",
	[MT_KIND_REMAP] = "remap",
	[MT_KIND_ALLOC_FAIL] = "alloc.fail",
	[MT_KIND_TRACE_STOP] = "trace.stop",
};

static const char *const fn_names[MT_FN_COUNT] = {
#define FN(e, s) [e] = s,
	MT_EVENT_FNS(FN)
#undef FN
};

static int name_index(const char *const *names, int count, const char *s,
		      size_t len)
{
	for (int i = 0; i < count; i++)
		if (strlen(names[i]) == len && !memcmp(names[i], s, len))
			return i;
	return count;
}

const char *mt_event_kind_name(mt_kind_t kind)
{
	return (unsigned)kind < MT_KIND_COUNT ? kind_names[kind] : NULL;
}

mt_kind_t mt_event_kind_parse(const char *s, size_t len)
{
	return (mt_kind_t)name_index(kind_names, MT_KIND_COUNT, s, len);
}

const char *mt_event_fn_name(mt_fn_t fn)
{
	return (unsigned)fn < MT_FN_COUNT ? fn_names[fn] : NULL;
}

mt_fn_t mt_event_fn_parse(const char *s, size_t len)
{
	return (mt_fn_t)name_index(fn_names, MT_FN_COUNT, s, len);
}
