/*
 * mt_buf: growable buffer and JSON appenders for analyzer output.  It
 * allocates only through mt_mem and never leaves a half-made append.
 */
#include "../base/mt_buf.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../../common/mt_fmt.h"
#include "../base/mt_error.h"
#include "../base/mt_mem.h"

void mt_buf_init(mt_buf_t *b, size_t limit)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->limit = limit;
}

void mt_buf_release(mt_buf_t *b)
{
	mt_mem_free(b->data);
	mt_buf_init(b, b->limit);
}

void mt_buf_reset(mt_buf_t *b)
{
	mt_buf_truncate(b, 0);
}

void mt_buf_truncate(mt_buf_t *b, size_t len)
{
	if (len < b->len) {
		b->len = len;
		b->data[len] = '\0';
	}
}

static int reserve(mt_buf_t *b, size_t n)
{
	size_t need, cap;
	char *p;

	if (b->limit && (n > b->limit || b->len > b->limit - n))
		return MT_ETOOLONG;
	/* No buffer is that big; and need and cap below must not wrap. */
	if (n > SIZE_MAX / 2 - b->len)
		return MT_ENOMEM;
	need = b->len + n + 1;
	if (need <= b->cap)
		return MT_OK;
	cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap *= 2;
	p = mt_mem_realloc(b->data, cap);
	if (!p)
		return MT_ENOMEM;
	b->data = p;
	b->cap = cap;
	return MT_OK;
}

int mt_buf_add(mt_buf_t *b, const void *p, size_t n)
{
	int rc = reserve(b, n);

	if (rc)
		return rc;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return MT_OK;
}

int mt_buf_add_str(mt_buf_t *b, const char *s)
{
	return mt_buf_add(b, s, strlen(s));
}

int mt_buf_add_u64(mt_buf_t *b, uint64_t v)
{
	char tmp[MT_FMT_U64_MAX];

	return mt_buf_add(b, tmp, mt_fmt_u64(tmp, v));
}

int mt_buf_add_i64(mt_buf_t *b, int64_t v)
{
	char tmp[MT_FMT_I64_MAX];

	return mt_buf_add(b, tmp, mt_fmt_i64(tmp, v));
}

int mt_buf_add_hex(mt_buf_t *b, uint64_t v)
{
	char tmp[MT_FMT_HEX_MAX];

	return mt_buf_add(b, tmp, mt_fmt_hex(tmp, v));
}

int mt_buf_addf(mt_buf_t *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	assert(n >= 0 && (size_t)n < sizeof(tmp));
	return mt_buf_add(b, tmp, (size_t)n);
}

int mt_buf_add_json_str(mt_buf_t *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t start = b->len;
	size_t run = 0;
	int rc;

	if ((rc = mt_buf_add(b, "\"", 1)))
		return rc;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[6];
		size_t elen = 0;

		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			elen = 2;
		} else if (c < 0x20) {
			esc[0] = '\\';
			switch (c) {
			case '\n': esc[1] = 'n'; elen = 2; break;
			case '\t': esc[1] = 't'; elen = 2; break;
			case '\r': esc[1] = 'r'; elen = 2; break;
			default:
				esc[1] = 'u';
				esc[2] = '0';
				esc[3] = '0';
				esc[4] = hex[c >> 4];
				esc[5] = hex[c & 0xf];
				elen = 6;
			}
		}
		if (!elen) {
			run++;
			continue;
		}
		if ((rc = mt_buf_add(b, s + i - run, run)) ||
		    (rc = mt_buf_add(b, esc, elen)))
			goto fail;
		run = 0;
	}
	if ((rc = mt_buf_add(b, s + n - run, run)) ||
	    (rc = mt_buf_add(b, "\"", 1)))
		goto fail;
	return MT_OK;
fail:
	mt_buf_truncate(b, start);
	return rc;
}

int mt_buf_add_json_cstr_or_null(mt_buf_t *b, const char *s)
{
	if (!s)
		return mt_buf_add(b, "null", 4);
	return mt_buf_add_json_str(b, s, strlen(s));
}
