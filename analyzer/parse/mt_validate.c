/*
 * mt_validate: the one validator every parser hands its fields to.  It
 * turns a record of the fields a line holds (mt_raw_t) into an mt_event_t,
 * or into the verdict and the reason the line is not one.
 *
 * It must never read the line itself, nor let what a field means depend
 * on the path that read it: the fast path and json-c fill the same record,
 * and the exact matcher makes only events this function would make of its
 * lines (tests/mt_test_parse.c holds all three to each other).  It allocates
 * nothing.
 */
#include "../parse/mt_validate.h"

#include <string.h>

#include "../parse/mt_scan.h"

/* Reasons are static strings; the field is kept beside them. */
static mt_parse_result_t bad(mt_parser_t *p, const char *why)
{
	p->why = why;
	return MT_PARSE_MALFORMED;
}

/* A field of the record: its slot when seen, else an absent value. */
static inline const mt_raw_value_t *field(const mt_raw_t *r, mt_field_t f)
{
	static const mt_raw_value_t absent = { .type = MT_RAW_ABSENT };

	return (r->seen >> f) & 1 ? &r->f[f] : &absent;
}


static int present(const mt_raw_value_t *v)
{
	return v->type != MT_RAW_ABSENT && v->type != MT_RAW_NULL;
}

/* 1: set, 0: absent or null, -1: present with the wrong type. */
static int get_uint(const mt_raw_t *r, mt_field_t f, uint64_t *out)
{
	const mt_raw_value_t *v = field(r, f);

	if (!present(v))
		return 0;
	if (v->type != MT_RAW_INT || (v->neg && v->u))
		return -1;
	*out = v->u;
	return 1;
}

static int get_ptr(const mt_raw_t *r, mt_field_t f, uint64_t *out)
{
	const mt_raw_value_t *v = field(r, f);

	if (!present(v))
		return 0;
	if (v->type != MT_RAW_STRING)
		return -1;
	if (v->hex)
		*out = v->u;
	else if (mt_scan_hex(v->s, v->len, out))
		return -1;
	return 1;
}

/* An offset is an integer or a hex string. */
static int get_offset(const mt_raw_t *r, mt_field_t f, uint64_t *out)
{
	const mt_raw_value_t *v = field(r, f);

	if (v->type == MT_RAW_STRING)
		return get_ptr(r, f, out);
	return get_uint(r, f, out);
}

static int get_str(const mt_raw_t *r, mt_field_t f, const char **s,
		   size_t *len)
{
	const mt_raw_value_t *v = field(r, f);

	if (!present(v))
		return 0;
	if (v->type != MT_RAW_STRING || v->nul)
		return -1;
	*s = v->s;
	*len = v->len;
	return 1;
}

#define REQUIRE(expr, field)                                               \
	do {                                                               \
		if ((expr) != 1) {                                         \
			p->why_field = mt_parse_field_names[field];        \
			return bad(p, "a required field is missing or has the " \
				      "wrong type");                       \
		}                                                          \
	} while (0)

#define OPTIONAL(expr, field, flag)                                        \
	do {                                                               \
		int got_ = (expr);                                         \
		if (got_ < 0) {                                            \
			p->why_field = mt_parse_field_names[field];        \
			return bad(p, "a field has the wrong type");       \
		}                                                          \
		if (got_)                                                  \
			ev->has |= (flag);                                 \
	} while (0)

mt_parse_result_t mt_validate_event(mt_parser_t *p, const mt_raw_t *r,
				     mt_event_t *ev)
{
	const mt_raw_value_t *v = field(r, MT_F_V);
	const mt_raw_value_t *seq = field(r, MT_F_SEQ);
	const mt_raw_value_t *kind = field(r, MT_F_KIND);
	const mt_raw_value_t *frames;
	const char *s;
	size_t len;

	memset(ev, 0, sizeof(*ev));
	/* Until the kind is read: 0 would be MT_KIND_TRACE_START. */
	ev->kind = MT_KIND_UNKNOWN;
	p->why_field = NULL;
	if (v->type != MT_RAW_INT || seq->type != MT_RAW_INT ||
	    kind->type != MT_RAW_STRING) {
		p->why = "it is not an object with an integer v, an integer "
			 "seq and a string kind";
		return MT_PARSE_NOT_EVENT;
	}
	if (v->neg || v->u != MT_FORMAT_VERSION) {
		if (v->neg)
			p->version = -(int64_t)(v->u - 1) - 1;
		else
			p->version = v->u > INT64_MAX ? INT64_MAX : (int64_t)v->u;
		p->why = "its format version is not 1";
		return MT_PARSE_BAD_VERSION;
	}
	if (seq->neg && seq->u)
		return bad(p, "its seq is negative");
	ev->seq = seq->u;
	ev->kind = r->kind >= 0 ? (mt_kind_t)r->kind :
				  (mt_kind_t)mt_scan_name(&p->kinds, kind->s,
							 kind->len);
	if (ev->kind == MT_KIND_UNKNOWN)
		return bad(p, "its kind is not one memtrace knows");

	switch (ev->kind) {
	case MT_KIND_TRACE_START:
		/* Read, never judged: the depth only tells `flamegraph`
		 * which stacks were cut, and a trace whose stack_depth is
		 * odd is no less evidence than before it was read. */
		if (get_uint(r, MT_F_STACK_DEPTH, &ev->stack_depth) == 1)
			ev->has |= MT_HAS_STACK_DEPTH;
		/* A sampled trace's mean (format.md 2.1): a positive
		 * integer, or the trace is read as unsampled. */
		if (get_uint(r, MT_F_SAMPLE_BYTES, &ev->sample_bytes) == 1 &&
		    ev->sample_bytes)
			ev->has |= MT_HAS_SAMPLE_BYTES;
		/* The process that wrote it, which `top` watches. */
		if (get_uint(r, MT_F_PID, &ev->pid) == 1 && ev->pid)
			ev->has |= MT_HAS_PID;
		break;
	case MT_KIND_ALLOCATOR:
		REQUIRE(get_uint(r, MT_F_ALLOCATOR_ID, &ev->allocator_id),
			MT_F_ALLOCATOR_ID);
		OPTIONAL(get_str(r, MT_F_NAME, &ev->name, &ev->name_len),
			 MT_F_NAME, MT_HAS_NAME);
		break;
	case MT_KIND_FRAME:
		REQUIRE(get_uint(r, MT_F_FRAME_ID, &ev->frame_id), MT_F_FRAME_ID);
		if (!ev->frame_id)
			return bad(p, "its frame_id is 0");
		REQUIRE(get_ptr(r, MT_F_IP, &ev->ip), MT_F_IP);
		OPTIONAL(get_str(r, MT_F_SYMBOL, &ev->symbol, &ev->symbol_len),
			 MT_F_SYMBOL, MT_HAS_SYMBOL);
		OPTIONAL(get_offset(r, MT_F_OFFSET, &ev->offset), MT_F_OFFSET,
			 MT_HAS_OFFSET);
		OPTIONAL(get_str(r, MT_F_MODULE, &ev->module, &ev->module_len),
			 MT_F_MODULE, MT_HAS_MODULE);
		OPTIONAL(get_offset(r, MT_F_MODULE_OFFSET, &ev->module_offset),
			 MT_F_MODULE_OFFSET, MT_HAS_MODULE_OFFSET);
		OPTIONAL(get_str(r, MT_F_BUILD_ID, &ev->build_id,
				 &ev->build_id_len),
			 MT_F_BUILD_ID, MT_HAS_BUILD_ID);
		break;
	case MT_KIND_STACK:
		REQUIRE(get_uint(r, MT_F_STACK_ID, &ev->stack_id), MT_F_STACK_ID);
		if (!ev->stack_id)
			return bad(p, "its stack_id is 0");
		frames = field(r, MT_F_FRAMES);
		if (frames->type != MT_RAW_INT_ARRAY) {
			p->why_field = mt_parse_field_names[MT_F_FRAMES];
			return bad(p, "its frames are not an array of frame ids");
		}
		ev->frames = frames->arr;
		ev->nframes = frames->len;
		for (size_t i = 0; i < ev->nframes; i++)
			if (!ev->frames[i])
				return bad(p, "its frames name frame id 0");
		break;
	case MT_KIND_ALLOC:
	case MT_KIND_ALLOC_FAIL:
		REQUIRE(get_uint(r, MT_F_ALLOCATOR_ID, &ev->allocator_id),
			MT_F_ALLOCATOR_ID);
		if (ev->kind == MT_KIND_ALLOC)
			REQUIRE(get_ptr(r, MT_F_PTR, &ev->ptr), MT_F_PTR);
		REQUIRE(get_uint(r, MT_F_SIZE, &ev->size), MT_F_SIZE);
		REQUIRE(get_str(r, MT_F_FN, &s, &len), MT_F_FN);
		ev->fn = (mt_fn_t)mt_scan_name(&p->fns, s, len);
		if (!mt_event_fn_allocates(ev->fn))
			return bad(p, "its fn is not an allocation function");
		ev->has |= MT_HAS_FN;
		OPTIONAL(get_uint(r, MT_F_ALIGN, &ev->align), MT_F_ALIGN,
			 MT_HAS_ALIGN);
		goto common;
	case MT_KIND_FREE:
	case MT_KIND_RESIZE:
	case MT_KIND_REMAP:
		REQUIRE(get_uint(r, MT_F_ALLOCATOR_ID, &ev->allocator_id),
			MT_F_ALLOCATOR_ID);
		REQUIRE(get_ptr(r, MT_F_PTR, &ev->ptr), MT_F_PTR);
		if (ev->kind != MT_KIND_FREE)
			REQUIRE(get_uint(r, MT_F_SIZE, &ev->size), MT_F_SIZE);
		if (ev->kind == MT_KIND_REMAP)
			REQUIRE(get_ptr(r, MT_F_NEW_PTR, &ev->new_ptr),
				MT_F_NEW_PTR);
		{
			int got = get_str(r, MT_F_FN, &s, &len);

			if (got < 0) {
				p->why_field = mt_parse_field_names[MT_F_FN];
				return bad(p, "a field has the wrong type");
			}
			if (got) {
				/* Any name is allowed here ("free",
				 * "realloc"): it is only shown. */
				ev->fn = (mt_fn_t)mt_scan_name(&p->fns, s, len);
				ev->has |= MT_HAS_FN;
			}
		}
	common:
		if (ev->kind != MT_KIND_FREE)
			OPTIONAL(get_uint(r, MT_F_STACK, &ev->stack), MT_F_STACK,
				 MT_HAS_STACK);
		if ((ev->has & MT_HAS_STACK) && !ev->stack)
			return bad(p, "its stack is 0");
		OPTIONAL(get_uint(r, MT_F_TID, &ev->tid), MT_F_TID, MT_HAS_TID);
		OPTIONAL(get_uint(r, MT_F_T, &ev->t), MT_F_T, MT_HAS_T);
		break;
	case MT_KIND_TRACE_STOP:
		OPTIONAL(get_str(r, MT_F_REASON, &ev->reason, &ev->reason_len),
			 MT_F_REASON, MT_HAS_REASON);
		OPTIONAL(get_uint(r, MT_F_DROPPED, &ev->dropped), MT_F_DROPPED,
			 MT_HAS_DROPPED);
		OPTIONAL(get_uint(r, MT_F_T, &ev->t), MT_F_T, MT_HAS_T);
		break;
	default:
		break;
	}
	p->why = NULL;
	return MT_PARSE_OK;
}
