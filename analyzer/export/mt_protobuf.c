/*
 * mt_protobuf: a protocol buffers encoder for the few wire types
 * profile.proto uses, and its string table.  It must never leave half a
 * field in a buffer, nor give one string two indices.
 */
#include "../export/mt_protobuf.h"

#include <string.h>

#include "../base/mt_error.h"

/* Wire types. */
#define WIRE_VARINT 0
#define WIRE_LEN 2

/* The longest varint: 64 bits, 7 a byte. */
#define VARINT_MAX 10

static size_t encode_varint(unsigned char *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

int mt_protobuf_add_varint(mt_buf_t *b, uint64_t v)
{
	unsigned char p[VARINT_MAX];

	return mt_buf_add(b, p, encode_varint(p, v));
}

/* A tag and a varint in one append, so the field is whole or absent. */
static int add_varint_field(mt_buf_t *b, uint32_t field, uint64_t v)
{
	unsigned char p[2 * VARINT_MAX];
	size_t n = encode_varint(p, (uint64_t)field << 3 | WIRE_VARINT);

	n += encode_varint(p + n, v);
	return mt_buf_add(b, p, n);
}

int mt_protobuf_add_uint(mt_buf_t *b, uint32_t field, uint64_t v)
{
	return v ? add_varint_field(b, field, v) : MT_OK;
}

int mt_protobuf_add_int(mt_buf_t *b, uint32_t field, int64_t v)
{
	return v ? add_varint_field(b, field, (uint64_t)v) : MT_OK;
}

int mt_protobuf_add_bool(mt_buf_t *b, uint32_t field, int v)
{
	return v ? add_varint_field(b, field, 1) : MT_OK;
}

int mt_protobuf_add_bytes(mt_buf_t *b, uint32_t field, const void *p, size_t n)
{
	unsigned char head[2 * VARINT_MAX];
	size_t k = encode_varint(head, (uint64_t)field << 3 | WIRE_LEN);
	size_t mark = b->len;
	int rc;

	k += encode_varint(head + k, n);
	if ((rc = mt_buf_add(b, head, k)) || (rc = mt_buf_add(b, p, n)))
		mt_buf_truncate(b, mark);
	return rc;
}

int mt_protobuf_add_packed(mt_buf_t *b, uint32_t field, const uint64_t *v,
			   size_t n)
{
	unsigned char head[2 * VARINT_MAX], p[VARINT_MAX];
	size_t len = 0, k, mark = b->len;
	int rc = MT_OK;

	if (!n)
		return MT_OK;
	for (size_t i = 0; i < n; i++)
		len += encode_varint(p, v[i]);
	k = encode_varint(head, (uint64_t)field << 3 | WIRE_LEN);
	k += encode_varint(head + k, len);
	rc = mt_buf_add(b, head, k);
	for (size_t i = 0; !rc && i < n; i++)
		rc = mt_buf_add(b, p, encode_varint(p, v[i]));
	if (rc)
		mt_buf_truncate(b, mark);
	return rc;
}

/* ---- the string table ---- */

typedef struct {
	int64_t index;
	size_t off, len; /* in the table's text */
} strtab_entry_t;

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

int mt_protobuf_strtab_init(mt_protobuf_strtab_t *t)
{
	int64_t zero;

	memset(t, 0, sizeof(*t));
	mt_buf_init(&t->text, 0);
	mt_map_init(&t->by_hash, sizeof(strtab_entry_t));
	if (mt_protobuf_strtab_index(t, "", 0, &zero)) {
		mt_protobuf_strtab_release(t);
		return MT_ENOMEM;
	}
	return MT_OK;
}

void mt_protobuf_strtab_release(mt_protobuf_strtab_t *t)
{
	mt_buf_release(&t->text);
	mt_map_release(&t->by_hash);
	t->n = 0;
}

int mt_protobuf_strtab_index(mt_protobuf_strtab_t *t, const char *s, size_t n,
			     int64_t *out)
{
	strtab_entry_t *e;
	size_t mark = t->text.len;
	uint64_t key;
	void *v;
	int rc;

	/* Probe past strings that only share the hash. */
	for (key = hash_bytes(s, n); (e = mt_map_find(&t->by_hash, key)); key++)
		if (e->len == n && !memcmp(t->text.data + e->off, s, n)) {
			*out = e->index;
			return MT_OK;
		}
	if ((rc = mt_buf_add(&t->text, s, n)) ||
	    (rc = mt_buf_add(&t->text, "", 1))) {
		mt_buf_truncate(&t->text, mark);
		return rc;
	}
	if ((rc = mt_map_upsert(&t->by_hash, key, &v, NULL))) {
		mt_buf_truncate(&t->text, mark);
		return rc;
	}
	*(strtab_entry_t *)v = (strtab_entry_t){ (int64_t)t->n, mark, n };
	*out = (int64_t)t->n++;
	return MT_OK;
}

int mt_protobuf_strtab_add(mt_buf_t *b, uint32_t field,
			   const mt_protobuf_strtab_t *t)
{
	size_t mark = b->len, off = 0;
	int rc = MT_OK;

	/* The text holds the strings in index order, NUL after each. */
	for (size_t i = 0; !rc && i < t->n; i++) {
		size_t len = strlen(t->text.data + off);

		rc = mt_protobuf_add_bytes(b, field, t->text.data + off, len);
		off += len + 1;
	}
	if (rc)
		mt_buf_truncate(b, mark);
	return rc;
}
