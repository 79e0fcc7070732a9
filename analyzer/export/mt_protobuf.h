/*
 * mt_protobuf: the protocol buffers wire format, as much of it as a writer of
 * profile.proto needs (memtrace export pprof, mt_pprof): varints, fields
 * of wire type 0 (integers) and 2 (bytes, strings, nested messages, packed
 * repeated integers), and a string table that gives each distinct string
 * one index, "" at index 0.
 *
 * A field is its tag, (number << 3) | wire type, as a varint, then its
 * value: a varint for type 0; for type 2 the length as a varint and the
 * bytes.  A nested message is built in a buffer of its own and added as
 * bytes.  Signed integers are int64 (two's complement in ten bytes when
 * negative), never zigzag: profile.proto has no sint fields.
 *
 * Invariants: every function appends to its buffer whole or not at all
 * (the buffer is as it was after a failure); nothing here prints or knows
 * what the fields mean.  A field whose value is proto3's default (0, an
 * empty packed list) is not written, as proto3 writers leave it out; a
 * repeated string or message is always written, "" included.
 */
#ifndef MT_PROTOBUF_H
#define MT_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

#include "../base/mt_buf.h"
#include "../base/mt_map.h"

/* v as a varint: 7 bits a byte, the low ones first, the high bit set on
 * every byte but the last.  MT_OK or MT_ENOMEM. */
int mt_protobuf_add_varint(mt_buf_t *b, uint64_t v);

/* Field number field, wire type 0, value v (nothing when v is 0). */
int mt_protobuf_add_uint(mt_buf_t *b, uint32_t field, uint64_t v);

/* An int64 field: v in two's complement as a varint (nothing when 0). */
int mt_protobuf_add_int(mt_buf_t *b, uint32_t field, int64_t v);

/* A bool field: 1 when v, nothing otherwise. */
int mt_protobuf_add_bool(mt_buf_t *b, uint32_t field, int v);

/* Field number field, wire type 2: n bytes at p, always written (a
 * repeated string or an empty message counts even when empty). */
int mt_protobuf_add_bytes(mt_buf_t *b, uint32_t field, const void *p,
			  size_t n);

/* A packed repeated integer field: the n values as varints in one field
 * of wire type 2 (nothing when n is 0). */
int mt_protobuf_add_packed(mt_buf_t *b, uint32_t field, const uint64_t *v,
			   size_t n);

/*
 * A string table: each distinct string once, in the order first asked
 * for, "" first at index 0 (profile.proto's rule).  Strings are copied.
 */
typedef struct {
	mt_buf_t text;   /* the strings, each followed by a NUL */
	mt_map_t by_hash; /* hash of a string, probed on -> its entry */
	size_t n;        /* strings so far, "" included */
} mt_protobuf_strtab_t;

/* An empty table holding "" at index 0.  MT_OK or MT_ENOMEM. */
int mt_protobuf_strtab_init(mt_protobuf_strtab_t *t);
void mt_protobuf_strtab_release(mt_protobuf_strtab_t *t);

/* The index of the n bytes at s (no NUL among them), added when new.
 * MT_OK or MT_ENOMEM (the table as it was). */
int mt_protobuf_strtab_index(mt_protobuf_strtab_t *t, const char *s, size_t n,
			     int64_t *out);

/* Append every string of the table, in index order, each as one field
 * number field of wire type 2. */
int mt_protobuf_strtab_add(mt_buf_t *b, uint32_t field,
			   const mt_protobuf_strtab_t *t);

#endif
