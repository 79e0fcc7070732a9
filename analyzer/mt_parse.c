/*
 * mt_parse: the fast path and the json-c path into one validator.  The
 * fast path must never accept a line json-c would judge differently: when
 * in doubt it declines.  Neither path allocates per line except json-c's
 * own objects.
 */
#include "mt_parse.h"

#include <errno.h>
#include <json-c/json.h>
#include <string.h>

#include "../common/mt_fmt.h"
#include "mt_error.h"
#include "mt_mem.h"

static const char *const field_names[MT_F_COUNT] = {
	[MT_F_V] = "v", [MT_F_SEQ] = "seq", [MT_F_KIND] = "kind",
	[MT_F_ALLOCATOR_ID] = "allocator_id", [MT_F_PTR] = "ptr",
	[MT_F_NEW_PTR] = "new_ptr", [MT_F_SIZE] = "size", [MT_F_FN] = "fn",
	[MT_F_ALIGN] = "align", [MT_F_STACK] = "stack", [MT_F_TID] = "tid",
	[MT_F_T] = "t", [MT_F_FRAME_ID] = "frame_id", [MT_F_IP] = "ip",
	[MT_F_SYMBOL] = "symbol", [MT_F_OFFSET] = "offset",
	[MT_F_MODULE] = "module", [MT_F_MODULE_OFFSET] = "module_offset",
	[MT_F_STACK_ID] = "stack_id", [MT_F_FRAMES] = "frames",
	[MT_F_REASON] = "reason", [MT_F_DROPPED] = "dropped",
	[MT_F_NAME] = "name",
};

int mt_parser_init(mt_parser_t *p)
{
	memset(p, 0, sizeof(*p));
	p->tok = json_tokener_new();
	if (!p->tok)
		return MT_ENOMEM;
	json_tokener_set_flags(p->tok,
			       JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	return MT_OK;
}

void mt_parser_release(mt_parser_t *p)
{
	if (p->obj)
		json_object_put(p->obj);
	if (p->tok)
		json_tokener_free(p->tok);
	mt_mem_free(p->arr);
	memset(p, 0, sizeof(*p));
}

static int arr_reserve(mt_parser_t *p, size_t n)
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

/* ---- the validator, shared by both paths ---- */

/* Reasons are static strings; the field is kept beside them. */
static mt_parse_result_t bad(mt_parser_t *p, const char *why)
{
	p->why = why;
	return MT_PARSE_MALFORMED;
}

static int present(const mt_raw_value_t *v)
{
	return v->type != MT_RAW_ABSENT && v->type != MT_RAW_NULL;
}

/* 1: set, 0: absent or null, -1: present with the wrong type. */
static int get_uint(const mt_raw_t *r, mt_field_t f, uint64_t *out)
{
	const mt_raw_value_t *v = &r->f[f];

	if (!present(v))
		return 0;
	if (v->type != MT_RAW_INT || (v->neg && v->u))
		return -1;
	*out = v->u;
	return 1;
}

static int get_ptr(const mt_raw_t *r, mt_field_t f, uint64_t *out)
{
	const mt_raw_value_t *v = &r->f[f];

	if (!present(v))
		return 0;
	if (v->type != MT_RAW_STRING || mt_fmt_parse_hex(v->s, v->len, out))
		return -1;
	return 1;
}

/* An offset is an integer or a hex string. */
static int get_offset(const mt_raw_t *r, mt_field_t f, uint64_t *out)
{
	const mt_raw_value_t *v = &r->f[f];

	if (v->type == MT_RAW_STRING)
		return get_ptr(r, f, out);
	return get_uint(r, f, out);
}

static int get_str(const mt_raw_t *r, mt_field_t f, const char **s,
		   size_t *len)
{
	const mt_raw_value_t *v = &r->f[f];

	if (!present(v))
		return 0;
	if (v->type != MT_RAW_STRING || memchr(v->s, '\0', v->len))
		return -1;
	*s = v->s;
	*len = v->len;
	return 1;
}

#define REQUIRE(expr, field)                                               \
	do {                                                               \
		if ((expr) != 1) {                                         \
			p->why_field = field_names[field];                 \
			return bad(p, "a required field is missing or has the " \
				      "wrong type");                       \
		}                                                          \
	} while (0)

#define OPTIONAL(expr, field, flag)                                        \
	do {                                                               \
		int got_ = (expr);                                         \
		if (got_ < 0) {                                            \
			p->why_field = field_names[field];                 \
			return bad(p, "a field has the wrong type");       \
		}                                                          \
		if (got_)                                                  \
			ev->has |= (flag);                                 \
	} while (0)

static mt_parse_result_t validate(mt_parser_t *p, const mt_raw_t *r,
				  mt_event_t *ev)
{
	const mt_raw_value_t *v = &r->f[MT_F_V];
	const mt_raw_value_t *seq = &r->f[MT_F_SEQ];
	const mt_raw_value_t *kind = &r->f[MT_F_KIND];
	const char *s;
	size_t len;

	memset(ev, 0, sizeof(*ev));
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
	ev->kind = mt_event_kind_parse(kind->s, kind->len);
	if (ev->kind == MT_KIND_UNKNOWN)
		return bad(p, "its kind is not one memtrace knows");

	switch (ev->kind) {
	case MT_KIND_TRACE_START:
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
		break;
	case MT_KIND_STACK:
		REQUIRE(get_uint(r, MT_F_STACK_ID, &ev->stack_id), MT_F_STACK_ID);
		if (!ev->stack_id)
			return bad(p, "its stack_id is 0");
		if (r->f[MT_F_FRAMES].type != MT_RAW_INT_ARRAY) {
			p->why_field = field_names[MT_F_FRAMES];
			return bad(p, "its frames are not an array of frame ids");
		}
		ev->frames = r->f[MT_F_FRAMES].arr;
		ev->nframes = r->f[MT_F_FRAMES].len;
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
		ev->fn = mt_event_fn_parse(s, len);
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
				p->why_field = field_names[MT_F_FN];
				return bad(p, "a field has the wrong type");
			}
			if (got) {
				/* Any name is allowed here ("free",
				 * "realloc"): it is only shown. */
				ev->fn = mt_event_fn_parse(s, len);
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

/* ---- the fast path ---- */

static int key_field(const char *k, size_t n)
{
	/* The preload's keys, by length then bytes: a switch beats a loop
	 * of strcmp on every field of every line. */
	switch (n) {
	case 1:
		if (k[0] == 'v') return MT_F_V;
		if (k[0] == 't') return MT_F_T;
		break;
	case 2:
		if (!memcmp(k, "fn", 2)) return MT_F_FN;
		if (!memcmp(k, "ip", 2)) return MT_F_IP;
		break;
	case 3:
		if (!memcmp(k, "seq", 3)) return MT_F_SEQ;
		if (!memcmp(k, "ptr", 3)) return MT_F_PTR;
		if (!memcmp(k, "tid", 3)) return MT_F_TID;
		break;
	case 4:
		if (!memcmp(k, "kind", 4)) return MT_F_KIND;
		if (!memcmp(k, "size", 4)) return MT_F_SIZE;
		if (!memcmp(k, "name", 4)) return MT_F_NAME;
		break;
	case 5:
		if (!memcmp(k, "stack", 5)) return MT_F_STACK;
		if (!memcmp(k, "align", 5)) return MT_F_ALIGN;
		break;
	case 6:
		if (!memcmp(k, "symbol", 6)) return MT_F_SYMBOL;
		if (!memcmp(k, "offset", 6)) return MT_F_OFFSET;
		if (!memcmp(k, "module", 6)) return MT_F_MODULE;
		if (!memcmp(k, "frames", 6)) return MT_F_FRAMES;
		if (!memcmp(k, "reason", 6)) return MT_F_REASON;
		break;
	case 7:
		if (!memcmp(k, "new_ptr", 7)) return MT_F_NEW_PTR;
		if (!memcmp(k, "dropped", 7)) return MT_F_DROPPED;
		break;
	case 8:
		if (!memcmp(k, "frame_id", 8)) return MT_F_FRAME_ID;
		if (!memcmp(k, "stack_id", 8)) return MT_F_STACK_ID;
		break;
	case 12:
		if (!memcmp(k, "allocator_id", 12)) return MT_F_ALLOCATOR_ID;
		break;
	case 13:
		if (!memcmp(k, "module_offset", 13)) return MT_F_MODULE_OFFSET;
		break;
	}
	return -1;
}

/* A plain string: printable ASCII without '"' or '\\' up to its closing
 * quote.  Returns the position after the quote, or NULL to decline. */
static const char *scan_string(const char *s, const char *end)
{
	for (; s < end; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"')
			return s + 1;
		if (c < 0x20 || c >= 0x7f || c == '\\')
			return NULL;
	}
	return NULL;
}

/* A JSON integer; declines fractions, exponents, leading zeros and values
 * out of range. */
static const char *scan_int(const char *s, const char *end, int *neg,
			    uint64_t *out)
{
	uint64_t v = 0;

	*neg = 0;
	if (s < end && *s == '-') {
		*neg = 1;
		s++;
	}
	if (s >= end || *s < '0' || *s > '9')
		return NULL;
	if (*s == '0' && s + 1 < end && s[1] >= '0' && s[1] <= '9')
		return NULL;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (v > (UINT64_MAX - d) / 10)
			return NULL;
		v = v * 10 + d;
	}
	if (s < end && (*s == '.' || *s == 'e' || *s == 'E'))
		return NULL;
	if (*neg && v > (uint64_t)INT64_MAX + 1)
		return NULL;
	if (*neg && v == 0)
		*neg = 0; /* -0 is json-c's 0 */
	*out = v;
	return s;
}

mt_parse_result_t mt_parse_fast(mt_parser_t *p, const char *line, size_t len,
				mt_event_t *ev)
{
	const char *s = line, *end = line + len;
	mt_raw_t raw;
	size_t narr = 0;

	memset(&raw, 0, sizeof(raw));
	if (len < 2 || *s++ != '{')
		return MT_PARSE_DECLINED;
	for (;;) {
		const char *key, *val;
		int field;
		mt_raw_value_t *rv, tmp;

		if (s >= end || *s != '"')
			return MT_PARSE_DECLINED;
		key = ++s;
		if (!(s = scan_string(s, end)))
			return MT_PARSE_DECLINED;
		field = key_field(key, (size_t)(s - 1 - key));
		if (s >= end || *s++ != ':' || s >= end)
			return MT_PARSE_DECLINED;
		rv = field >= 0 ? &raw.f[field] : &tmp;
		if (field >= 0 && rv->type != MT_RAW_ABSENT)
			return MT_PARSE_DECLINED; /* duplicate: json-c decides */
		memset(rv, 0, sizeof(*rv));
		val = s;
		switch (*s) {
		case '"':
			if (!(s = scan_string(s + 1, end)))
				return MT_PARSE_DECLINED;
			rv->type = MT_RAW_STRING;
			rv->s = val + 1;
			rv->len = (size_t)(s - 1 - rv->s);
			break;
		case 't':
			if (end - s < 4 || memcmp(s, "true", 4))
				return MT_PARSE_DECLINED;
			rv->type = MT_RAW_BOOL;
			s += 4;
			break;
		case 'f':
			if (end - s < 5 || memcmp(s, "false", 5))
				return MT_PARSE_DECLINED;
			rv->type = MT_RAW_BOOL;
			s += 5;
			break;
		case 'n':
			if (end - s < 4 || memcmp(s, "null", 4))
				return MT_PARSE_DECLINED;
			rv->type = MT_RAW_NULL;
			s += 4;
			break;
		case '[':
			if (field != MT_F_FRAMES)
				return MT_PARSE_DECLINED;
			s++;
			if (s < end && *s == ']') {
				s++;
			} else {
				for (;;) {
					int neg;
					uint64_t x;

					if (!(s = scan_int(s, end, &neg, &x)) || neg)
						return MT_PARSE_DECLINED;
					if (arr_reserve(p, narr + 1))
						return MT_PARSE_NOMEM;
					p->arr[narr++] = x;
					if (s < end && *s == ',') {
						s++;
						continue;
					}
					if (s < end && *s == ']') {
						s++;
						break;
					}
					return MT_PARSE_DECLINED;
				}
			}
			rv->type = MT_RAW_INT_ARRAY;
			rv->arr = p->arr;
			rv->len = narr;
			break;
		default:
			if (!(s = scan_int(s, end, &rv->neg, &rv->u)))
				return MT_PARSE_DECLINED;
			rv->type = MT_RAW_INT;
			break;
		}
		if (s >= end)
			return MT_PARSE_DECLINED;
		if (*s == ',') {
			s++;
			continue;
		}
		if (*s == '}' && s + 1 == end)
			break;
		return MT_PARSE_DECLINED;
	}
	p->used_json_c = 0;
	return validate(p, &raw, ev);
}

/* ---- the json-c path ---- */

static int raw_from_json(mt_parser_t *p, int field, struct json_object *o,
			 mt_raw_value_t *rv)
{
	switch (json_object_get_type(o)) {
	case json_type_null:
		rv->type = MT_RAW_NULL;
		break;
	case json_type_boolean:
		rv->type = MT_RAW_BOOL;
		break;
	case json_type_double:
		rv->type = MT_RAW_DOUBLE;
		break;
	case json_type_int: {
		int64_t i = json_object_get_int64(o);

		rv->type = MT_RAW_INT;
		if (i < 0) {
			rv->neg = 1;
			rv->u = (uint64_t)0 - (uint64_t)i;
		} else {
			rv->u = json_object_get_uint64(o);
		}
		break;
	}
	case json_type_string:
		rv->type = MT_RAW_STRING;
		rv->s = json_object_get_string(o);
		rv->len = (size_t)json_object_get_string_len(o);
		break;
	case json_type_array: {
		size_t n = json_object_array_length(o);

		rv->type = MT_RAW_OTHER;
		if (field != MT_F_FRAMES)
			return MT_OK; /* only frames is an array memtrace reads */
		if (arr_reserve(p, n))
			return MT_ENOMEM;
		for (size_t i = 0; i < n; i++) {
			struct json_object *e = json_object_array_get_idx(o, i);

			if (json_object_get_type(e) != json_type_int ||
			    json_object_get_int64(e) < 0)
				return MT_OK;
			p->arr[i] = json_object_get_uint64(e);
		}
		rv->type = MT_RAW_INT_ARRAY;
		rv->arr = p->arr;
		rv->len = n;
		break;
	}
	default:
		rv->type = MT_RAW_OTHER;
		break;
	}
	return MT_OK;
}

mt_parse_result_t mt_parse_json_c(mt_parser_t *p, const char *line, size_t len,
				  mt_event_t *ev)
{
	struct json_tokener *tok = p->tok;
	struct json_object *o;
	mt_raw_t raw;
	mt_parse_result_t r;
	int range_error;
	size_t end;

	p->used_json_c = 1;
	if (p->obj) {
		json_object_put(p->obj);
		p->obj = NULL;
	}
	if (memchr(line, '\0', len)) {
		p->why = "it contains a NUL byte";
		return MT_PARSE_NOT_EVENT;
	}
	json_tokener_reset(tok);
	/* json-c reports neither running out of memory nor integers out of
	 * range; both leave errno behind (malloc's ENOMEM, strtoll's
	 * ERANGE), so errno is the only witness. */
	errno = 0;
	o = json_tokener_parse_ex(tok, line, (int)len);
	if (errno == ENOMEM) {
		if (o)
			json_object_put(o);
		return MT_PARSE_NOMEM;
	}
	if (!o) {
		p->why = "it is not valid JSON";
		return MT_PARSE_NOT_EVENT;
	}
	p->obj = o;
	end = json_tokener_get_parse_end(tok);
	for (; end < len; end++)
		if (!strchr(" \t\r\n", line[end])) {
			p->why = "it has bytes after its JSON value";
			return MT_PARSE_NOT_EVENT;
		}
	if (!json_object_is_type(o, json_type_object)) {
		p->why = "it is not a JSON object";
		return MT_PARSE_NOT_EVENT;
	}
	range_error = errno == ERANGE;
	memset(&raw, 0, sizeof(raw));
	for (int f = 0; f < MT_F_COUNT; f++) {
		struct json_object *v;

		if (!json_object_object_get_ex(o, field_names[f], &v))
			continue;
		if (raw_from_json(p, f, v, &raw.f[f]))
			return MT_PARSE_NOMEM;
	}
	r = validate(p, &raw, ev);
	if (r == MT_PARSE_OK && range_error) {
		/* json-c clamps; a clamped number is not the trace's. */
		p->why = "a number is out of range";
		p->why_field = NULL;
		return MT_PARSE_MALFORMED;
	}
	return r;
}

mt_parse_result_t mt_parser_parse(mt_parser_t *p, const char *line, size_t len,
				  mt_event_t *ev)
{
	mt_parse_result_t r = mt_parse_fast(p, line, len, ev);

	if (r != MT_PARSE_DECLINED)
		return r;
	return mt_parse_json_c(p, line, len, ev);
}
