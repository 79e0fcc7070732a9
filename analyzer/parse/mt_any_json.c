/*
 * mt_any_json: the reference path.  json-c, in strict mode with UTF-8
 * validation, reads a line into the validator's record; it judges every
 * line the faster paths decline, and a line is not JSON only when it says
 * so.
 *
 * It must never pass on a value json-c altered: a number json-c clamps
 * (mt_any_json_number_out_of_range()), bytes json-c's UTF-8 check lets
 * through, a line that would cost json-c unbounded memory.  Its only
 * allocations are json-c's objects, alive until the next line, and the
 * parser's frames storage.
 */
#include "../parse/mt_any_json.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mt_error.h"
#include "../parse/mt_validate.h"
#include "../../common/mt_utf8.h"

int mt_any_json_init(mt_parser_t *p)
{
	p->tok = json_tokener_new();
	if (!p->tok)
		return MT_ENOMEM;
	json_tokener_set_flags(p->tok,
			       JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	return MT_OK;
}

void mt_any_json_release(mt_parser_t *p)
{
	if (p->obj)
		json_object_put(p->obj);
	if (p->tok)
		json_tokener_free(p->tok);
	p->obj = NULL;
	p->tok = NULL;
}

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
		rv->nul = memchr(rv->s, '\0', rv->len) != NULL;
		break;
	case json_type_array: {
		size_t n = json_object_array_length(o);

		rv->type = MT_RAW_OTHER;
		if (field != MT_F_FRAMES)
			return MT_OK; /* only frames is an array memtrace reads */
		if (mt_parser_reserve(p, n))
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

/*
 * Whether the line holds more than MT_PARSE_CONTAINERS_MAX objects and
 * arrays.  json-c spends several hundred bytes on each: a 1 MiB line of
 * "{}," cost it 270 MB and more than a second, where an event needs two.
 */
static int too_many_containers(const char *s, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		if (s[i] == '"') {
			for (i++; i < len && s[i] != '"'; i++)
				if (s[i] == '\\')
					i++;
			continue;
		}
		if ((s[i] == '{' || s[i] == '[') && ++n > MT_PARSE_CONTAINERS_MAX)
			return 1;
	}
	return 0;
}

/*
 * Whether a number of the line is beyond what json-c holds: an integer
 * outside int64_t (negative) or uint64_t, or a fraction or exponent that
 * strtod() calls out of range.  json-c clamps such a number and leaves
 * ERANGE in errno, but the next number it parses resets errno, so errno
 * tells only of the last one.  The line is valid JSON here: outside its
 * strings a '-' or a digit starts a number, and a delimiter ends it
 * before len.
 */
int mt_any_json_number_out_of_range(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		uint64_t v = 0;
		int neg, over = 0;
		size_t j;

		if (s[i] == '"') {
			for (i++; i < len && s[i] != '"'; i++)
				if (s[i] == '\\')
					i++;
			continue;
		}
		if (s[i] != '-' && (s[i] < '0' || s[i] > '9'))
			continue;
		neg = s[i] == '-';
		for (j = i + (size_t)neg; j < len && s[j] >= '0' && s[j] <= '9'; j++) {
			unsigned d = (unsigned)(s[j] - '0');

			if (v > (UINT64_MAX - d) / 10)
				over = 1;
			v = v * 10 + d;
		}
		if (j < len && (s[j] == '.' || s[j] == 'e' || s[j] == 'E')) {
			char *end;

			errno = 0;
			strtod(s + i, &end);
			if (errno == ERANGE)
				return 1;
			j = (size_t)(end - s);
		} else if (over || (neg && v > (uint64_t)INT64_MAX + 1)) {
			return 1;
		}
		i = j - 1;
	}
	return 0;
}

mt_parse_result_t mt_any_json_parse(mt_parser_t *p, const char *line, size_t len,
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
	/* JSON text is UTF-8 (RFC 8259), and json-c's own check lets overlong
	 * forms and surrogates through: strings that, copied into a row, make
	 * it unreadable to a strict decoder (Python's json.loads of the bytes
	 * raises).  Only json-c sees bytes above 0x7f: the fast paths decline
	 * them. */
	if (!mt_utf8_valid(line, len)) {
		p->why = "it is not valid UTF-8";
		return MT_PARSE_NOT_EVENT;
	}
	if (too_many_containers(line, len)) {
		p->why = "it holds more than 1024 JSON objects and arrays";
		return MT_PARSE_NOT_EVENT;
	}
	json_tokener_reset(tok);
	/* json-c does not report running out of memory; malloc leaves
	 * ENOMEM behind, so errno is the only witness.  (Nor does it report
	 * numbers out of range: see mt_any_json_number_out_of_range().) */
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
	range_error = mt_any_json_number_out_of_range(line, len);
	raw.seen = 0;
	raw.kind = -1;
	for (int f = 0; f < MT_F_COUNT; f++) {
		struct json_object *v;

		if (!json_object_object_get_ex(o, mt_parse_field_names[f], &v))
			continue;
		memset(&raw.f[f], 0, sizeof(raw.f[f]));
		raw.seen |= 1u << f;
		if (raw_from_json(p, f, v, &raw.f[f]))
			return MT_PARSE_NOMEM;
	}
	r = mt_validate_event(p, &raw, ev);
	if (r == MT_PARSE_OK && range_error) {
		/* json-c clamps; a clamped number is not the trace's. */
		p->why = "a number is out of range";
		p->why_field = NULL;
		return MT_PARSE_MALFORMED;
	}
	return r;
}
