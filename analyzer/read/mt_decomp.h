/*
 * mt_decomp: a compressed trace (format.md section 2.1), decompressed as it is
 * read, for mt_reader.  zstd (libzstd) and gzip (zlib) are told by their
 * magic bytes, never by the file's name; the decompressed bytes are the
 * trace's JSONL, and the reader splits them into lines as it does a plain
 * file's.
 *
 * Memory is bounded whatever the trace's length: one input buffer of
 * MT_DECOMP_IN bytes, and the decoder's own state (for zstd, a window of
 * at most 2^27 bytes, libzstd's default limit; for gzip, 32 KiB).
 *
 * How a stream ends:
 *   - after a whole frame (zstd) or member (gzip): the end;
 *   - inside one (the writer was killed, or the file is being written):
 *     the end as well, after every byte the whole blocks before the cut
 *     decode to; mt_decomp_cut() says so.  The reader then drops a last
 *     line without its '\n', as it does in a plain trace;
 *   - NUL bytes from a frame's end to the input's end: padding, not
 *     content (mt_decomp_zero_padded()), like a plain trace's;
 *   - data the decoder refuses (a bad checksum, a bad block, bytes after
 *     a whole frame that begin no frame): MT_ECORRUPT, and mt_decomp_why()
 *     says where and why.  Every call after an error or the end returns
 *     the same.
 */
#ifndef MT_DECOMP_H
#define MT_DECOMP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* What one read of the compressed file asks for. */
#define MT_DECOMP_IN (1u << 20)

typedef enum {
	MT_DECOMP_PLAIN = 0,
	MT_DECOMP_ZSTD,
	MT_DECOMP_GZIP,
} mt_decomp_format_t;

/* The bytes a file needs for mt_decomp_sniff() to tell (fewer: plain). */
#define MT_DECOMP_MAGIC_MAX 4

/* The format the first n bytes of a file name. */
mt_decomp_format_t mt_decomp_sniff(const void *head, size_t n);

/* "zstd", "gzip", "plain". */
const char *mt_decomp_name(mt_decomp_format_t f);

/* read(2) of the compressed file: bytes read, 0 at its end, -1 with
 * errno set. */
typedef ssize_t (*mt_decomp_raw_t)(void *ctx, void *p, size_t n);

typedef struct mt_decomp mt_decomp_t;

/*
 * A decoder of format f (zstd or gzip) whose first nhead compressed bytes
 * are head (already read from the file; the rest comes from raw).
 * MT_OK or MT_ENOMEM (*out is then NULL).
 */
int mt_decomp_open(mt_decomp_t **out, mt_decomp_format_t f, const void *head,
		   size_t nhead);
void mt_decomp_free(mt_decomp_t *d);
/* Before the first read: the stream starts at byte at of the file, at the
 * start of a frame (or member), so that what the decoder says of a place
 * names the file's byte (a reader that handed the frames before it to
 * other decoders). */
void mt_decomp_start_at(mt_decomp_t *d, uint64_t at);
mt_decomp_format_t mt_decomp_format(const mt_decomp_t *d);

/*
 * Up to n decompressed bytes into out: how many (> 0), 0 at the end, or
 * MT_EIO (errno set), MT_ENOMEM, MT_ECORRUPT.  It returns the bytes it
 * has before it blocks on the file for more, as read(2) of a pipe does.
 */
ssize_t mt_decomp_read(mt_decomp_t *d, mt_decomp_raw_t raw, void *ctx,
		       void *out, size_t n);

/* After MT_ECORRUPT: where and why, one line ("the zstd frame at byte 0
 * is corrupt: ..."). */
const char *mt_decomp_why(const mt_decomp_t *d);
/* At the end: the stream stopped inside a frame or member; *at is where
 * that one starts in the file. */
int mt_decomp_cut(const mt_decomp_t *d, uint64_t *at);
/* "frame" (zstd) or "member" (gzip). */
const char *mt_decomp_unit(const mt_decomp_t *d);
/* At the end: NUL bytes followed the last whole frame. */
int mt_decomp_zero_padded(const mt_decomp_t *d);

#endif
