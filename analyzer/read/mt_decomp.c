/*
 * mt_decomp: streaming zstd and gzip decoding for mt_reader.  It must
 * hold no more than its input buffer and the decoder's state, whatever
 * the trace's length, and must never take corrupt data for the end of a
 * trace nor the end of a trace for corrupt data.
 */
#include "../read/mt_decomp.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "../base/mt_error.h"
#include "../base/mt_mem.h"

struct mt_decomp {
	mt_decomp_format_t format;
	unsigned char *in; /* in[pos..len) read and not yet decoded */
	size_t pos, len;
	uint64_t base;        /* the file offset of in[0] */
	uint64_t frame_start; /* the offset of the frame being decoded */
	int in_eof;
	int boundary; /* between frames: the last one ended whole */
	int flush;    /* the last call filled its room: it may hold more */
	int zeros;    /* NUL bytes after a whole frame: all must be */
	int ended;
	int cut;
	int zero_padded;
	int err; /* sticky: MT_EIO, MT_ENOMEM or MT_ECORRUPT */
	int err_errno;
	ZSTD_DStream *zs;
	z_stream z;
	int z_ready;
	char why[200];
};

mt_decomp_format_t mt_decomp_sniff(const void *head, size_t n)
{
	const unsigned char *b = head;

	if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
		return MT_DECOMP_GZIP;
	if (n < 4)
		return MT_DECOMP_PLAIN;
	/* A zstd frame (0xFD2FB528, little-endian), or a skippable frame
	 * (0x184D2A50 to 0x184D2A5F), which zstd(1) reads as one. */
	if (b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd)
		return MT_DECOMP_ZSTD;
	if ((b[0] & 0xf0) == 0x50 && b[1] == 0x2a && b[2] == 0x4d && b[3] == 0x18)
		return MT_DECOMP_ZSTD;
	return MT_DECOMP_PLAIN;
}

const char *mt_decomp_name(mt_decomp_format_t f)
{
	return f == MT_DECOMP_ZSTD ? "zstd" : f == MT_DECOMP_GZIP ? "gzip" : "plain";
}

int mt_decomp_open(mt_decomp_t **out, mt_decomp_format_t f, const void *head,
		   size_t nhead)
{
	mt_decomp_t *d;

	*out = NULL;
	if (nhead > MT_DECOMP_IN)
		return MT_ENOMEM; /* never: the reader sniffs a few bytes */
	d = mt_mem_calloc(1, sizeof(*d));
	if (!d)
		return MT_ENOMEM;
	d->format = f;
	d->boundary = 1;
	d->in = mt_mem_malloc(MT_DECOMP_IN);
	if (!d->in)
		goto nomem;
	if (nhead)
		memcpy(d->in, head, nhead);
	d->len = nhead;
	if (f == MT_DECOMP_ZSTD) {
		/* libzstd allocates with malloc, like json-c: its custom
		 * allocators are in its unstable API.  zlib's go through
		 * mt_mem (below), so the out-of-memory tests reach them. */
		d->zs = ZSTD_createDStream();
		if (!d->zs)
			goto nomem;
	} else {
		d->z.zalloc = mt_mem_zlib_alloc;
		d->z.zfree = mt_mem_zlib_free;
		/* 16 + 15: a gzip wrapper (never a zlib one), any window. */
		if (inflateInit2(&d->z, 16 + MAX_WBITS) != Z_OK)
			goto nomem;
		d->z_ready = 1;
	}
	*out = d;
	return MT_OK;
nomem:
	mt_decomp_free(d);
	return MT_ENOMEM;
}

void mt_decomp_free(mt_decomp_t *d)
{
	if (!d)
		return;
	if (d->zs)
		ZSTD_freeDStream(d->zs);
	if (d->z_ready)
		inflateEnd(&d->z);
	mt_mem_free(d->in);
	mt_mem_free(d);
}

void mt_decomp_start_at(mt_decomp_t *d, uint64_t at)
{
	d->base = d->frame_start = at;
}

mt_decomp_format_t mt_decomp_format(const mt_decomp_t *d)
{
	return d->format;
}

const char *mt_decomp_why(const mt_decomp_t *d)
{
	return d->why;
}

int mt_decomp_cut(const mt_decomp_t *d, uint64_t *at)
{
	*at = d->frame_start;
	return d->cut;
}

const char *mt_decomp_unit(const mt_decomp_t *d)
{
	return d->format == MT_DECOMP_ZSTD ? "frame" : "member";
}

int mt_decomp_zero_padded(const mt_decomp_t *d)
{
	return d->zero_padded;
}


static void corrupt(mt_decomp_t *d, const char *what)
{
	d->err = MT_ECORRUPT;
	d->err_errno = EBADMSG;
	snprintf(d->why, sizeof(d->why), "the %s %s at byte %llu is corrupt: %s",
		 mt_decomp_name(d->format), mt_decomp_unit(d),
		 (unsigned long long)d->frame_start, what);
}

/* Bytes after a whole frame that begin no frame (and are not padding). */
static void not_a_frame(mt_decomp_t *d, uint64_t at)
{
	d->err = MT_ECORRUPT;
	d->err_errno = EBADMSG;
	snprintf(d->why, sizeof(d->why),
		 "the bytes at byte %llu, after the last whole %s %s, are not "
		 "a %s %s",
		 (unsigned long long)at, mt_decomp_name(d->format),
		 mt_decomp_unit(d), mt_decomp_name(d->format), mt_decomp_unit(d));
}

/* One decoder call on in[pos..len) into out[*got..n). */
static void step_zstd(mt_decomp_t *d, unsigned char *out, size_t n, size_t *got)
{
	ZSTD_inBuffer in = { d->in, d->len, d->pos };
	ZSTD_outBuffer o = { out, n, *got };
	size_t ret = ZSTD_decompressStream(d->zs, &o, &in);

	if (ZSTD_isError(ret)) {
		ZSTD_ErrorCode code = ZSTD_getErrorCode(ret);

		if (code == ZSTD_error_memory_allocation) {
			d->err = MT_ENOMEM;
			d->err_errno = ENOMEM;
		} else if (d->boundary && code == ZSTD_error_prefix_unknown) {
			not_a_frame(d, d->frame_start);
		} else {
			corrupt(d, ZSTD_getErrorName(ret));
		}
		return;
	}
	if (in.pos == d->pos && o.pos == *got) {
		/* libzstd always makes progress when it has input and room;
		 * with none, it had nothing more to flush. */
		if (d->pos < d->len)
			corrupt(d, "the decoder made no progress");
		d->flush = 0;
		return;
	}
	d->pos = in.pos;
	*got = o.pos;
	/* 0: the frame is decoded, checked and flushed whole.  Otherwise,
	 * when the room is full, the decoder may hold decoded bytes still,
	 * though it took all the input: ask again before reading more, or
	 * before taking the input's end for the stream's. */
	d->boundary = ret == 0;
	d->flush = ret != 0 && o.pos == o.size;
}

static void step_gzip(mt_decomp_t *d, unsigned char *out, size_t n, size_t *got)
{
	size_t avail_in = d->len - d->pos, avail_out = n - *got;
	int zr;

	if (avail_out > UINT_MAX)
		avail_out = UINT_MAX;
	d->z.next_in = d->in + d->pos;
	d->z.avail_in = (uInt)avail_in; /* at most MT_DECOMP_IN */
	d->z.next_out = out + *got;
	d->z.avail_out = (uInt)avail_out;
	zr = inflate(&d->z, Z_NO_FLUSH);
	d->pos += avail_in - d->z.avail_in;
	*got += avail_out - d->z.avail_out;
	/* A full room may leave output inflate owes (as in step_zstd). */
	d->flush = zr == Z_OK && d->z.avail_out == 0;
	switch (zr) {
	case Z_OK:
		if (avail_in)
			d->boundary = 0;
		return;
	case Z_STREAM_END:
		/* The member's CRC-32 and length matched; another may
		 * follow (gzip(1) reads concatenated members as one). */
		inflateReset(&d->z);
		d->boundary = 1;
		return;
	case Z_MEM_ERROR:
		d->err = MT_ENOMEM;
		d->err_errno = ENOMEM;
		return;
	case Z_BUF_ERROR:
		/* No progress: with no input, nothing more was owed; with
		 * input and room, it cannot happen. */
		if (avail_in)
			corrupt(d, "the decoder made no progress");
		return;
	default: /* Z_DATA_ERROR, Z_NEED_DICT, Z_STREAM_ERROR */
		if (d->boundary && d->frame_start > 0 &&
		    d->z.msg && !strcmp(d->z.msg, "incorrect header check"))
			not_a_frame(d, d->frame_start);
		else
			corrupt(d, d->z.msg ? d->z.msg : "bad data");
		return;
	}
}

/* The next compressed bytes into in[], which is all decoded. */
static void refill(mt_decomp_t *d, mt_decomp_raw_t raw, void *ctx)
{
	ssize_t k = raw(ctx, d->in, MT_DECOMP_IN);

	if (k < 0) {
		d->err = MT_EIO;
		d->err_errno = errno;
		return;
	}
	if (k == 0) {
		d->in_eof = 1;
		return;
	}
	d->base += d->len;
	d->pos = 0;
	d->len = (size_t)k;
}

/* NUL bytes after a whole frame: padding only if nothing else follows. */
static void skip_zeros(mt_decomp_t *d)
{
	for (size_t i = d->pos; i < d->len; i++)
		if (d->in[i]) {
			not_a_frame(d, d->base + i);
			return;
		}
	d->zeros = 1;
	d->pos = d->len;
}

ssize_t mt_decomp_read(mt_decomp_t *d, mt_decomp_raw_t raw, void *ctx,
		       void *out, size_t n)
{
	size_t got = 0;

	while (got < n && !d->ended && !d->err) {
		if (d->pos == d->len && !d->flush) {
			if (d->in_eof) {
				/* The end: cut inside a frame, or whole. */
				d->cut = !d->boundary;
				d->zero_padded = d->zeros;
				d->ended = 1;
				break;
			}
			if (got)
				break; /* give what there is before blocking */
			refill(d, raw, ctx);
			continue;
		}
		if (d->boundary && d->pos < d->len) {
			if (d->zeros || !d->in[d->pos]) {
				skip_zeros(d);
				continue;
			}
			d->frame_start = d->base + d->pos;
		}
		if (d->format == MT_DECOMP_ZSTD)
			step_zstd(d, out, n, &got);
		else
			step_gzip(d, out, n, &got);
	}
	if (got)
		return (ssize_t)got;
	if (d->err) {
		errno = d->err_errno;
		return d->err;
	}
	return 0;
}
