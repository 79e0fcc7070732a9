/*
 * mt_parse: the parser object and the dispatch over the three parsers
 * (mt_parse.h): each line goes to the exact matcher, then to the general
 * fast path, then to json-c, and the first that does not decline judges
 * it.
 *
 * It must never read a line itself nor judge one: the parsers and the
 * validator do.  It allocates only at init and for the frames storage.
 */
#include "../parse/mt_parse.h"

#include <string.h>

#include "../base/mt_error.h"
#include "../parse/mt_block_line.h"
#include "../parse/mt_flat.h"
#include "../parse/mt_any_json.h"
#include "../base/mt_mem.h"

const char *const mt_parse_field_names[MT_F_COUNT] = {
	[MT_F_V] = "v", [MT_F_SEQ] = "seq", [MT_F_KIND] = "kind",
	[MT_F_ALLOCATOR_ID] = "allocator_id", [MT_F_PTR] = "ptr",
	[MT_F_NEW_PTR] = "new_ptr", [MT_F_SIZE] = "size", [MT_F_FN] = "fn",
	[MT_F_ALIGN] = "align", [MT_F_STACK] = "stack", [MT_F_TID] = "tid",
	[MT_F_T] = "t", [MT_F_FRAME_ID] = "frame_id", [MT_F_IP] = "ip",
	[MT_F_SYMBOL] = "symbol", [MT_F_OFFSET] = "offset",
	[MT_F_MODULE] = "module", [MT_F_MODULE_OFFSET] = "module_offset",
	[MT_F_STACK_ID] = "stack_id", [MT_F_FRAMES] = "frames",
	[MT_F_REASON] = "reason", [MT_F_DROPPED] = "dropped",
	[MT_F_NAME] = "name", [MT_F_STACK_DEPTH] = "stack_depth",
	[MT_F_SAMPLE_BYTES] = "sample_bytes",
	[MT_F_BUILD_ID] = "build_id", [MT_F_PID] = "pid",
};

int mt_parser_init(mt_parser_t *p)
{
	memset(p, 0, sizeof(*p));
	if (mt_any_json_init(p))
		return MT_ENOMEM;
	_Static_assert(MT_KIND_COUNT <= MT_NAMES_MAX && MT_FN_COUNT <= MT_NAMES_MAX,
		       "mt_names_t holds every kind and fn");
	for (int k = 0; k < MT_KIND_COUNT; k++)
		p->kinds.name[k] = mt_event_kind_name((mt_kind_t)k);
	p->kinds.count = MT_KIND_COUNT;
	mt_scan_names_init(&p->kinds);
	for (int f = 0; f < MT_FN_COUNT; f++)
		p->fns.name[f] = mt_event_fn_name((mt_fn_t)f);
	p->fns.count = MT_FN_COUNT;
	mt_scan_names_init(&p->fns);
	mt_flat_init(p);
	return MT_OK;
}

void mt_parser_release(mt_parser_t *p)
{
	mt_any_json_release(p);
	mt_mem_free(p->arr);
	memset(p, 0, sizeof(*p));
}

int mt_parser_reserve(mt_parser_t *p, size_t n)
{
	uint64_t *a;
	size_t cap;

	if (n <= p->arr_cap)
		return MT_OK;
	cap = p->arr_cap ? p->arr_cap : 64;
	while (cap < n)
		cap *= 2;
	a = mt_mem_realloc(p->arr, cap * sizeof(*a));
	if (!a)
		return MT_ENOMEM;
	p->arr = a;
	p->arr_cap = cap;
	return MT_OK;
}

mt_parse_result_t mt_parser_parse(mt_parser_t *p, const char *line, size_t len,
				  mt_event_t *ev)
{
	mt_parse_result_t r = mt_block_line_parse(p, line, len, ev);

	if (r != MT_PARSE_DECLINED)
		return r;
	return mt_parser_parse_inexact(p, line, len, ev);
}

mt_parse_result_t mt_parser_parse_inexact(mt_parser_t *p, const char *line,
					  size_t len, mt_event_t *ev)
{
	mt_parse_result_t r = mt_flat_parse(p, line, len, ev);

	if (r != MT_PARSE_DECLINED)
		return r;
	return mt_any_json_parse(p, line, len, ev);
}

mt_parse_result_t mt_parse_exact_window(mt_parser_t *p, const char *s,
					mt_event_t *ev, size_t *len)
{
	return mt_block_line_parse_window(p, s, ev, len);
}

int mt_parse_number_out_of_range(const char *s, size_t len)
{
	return mt_any_json_number_out_of_range(s, len);
}
