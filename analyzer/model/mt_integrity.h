/*
 * mt_integrity: the verdict on a trace (spec section 3): whether it is
 * valid memtrace evidence at all, and which caveats it carries.
 *
 * The analysis feeds it what it finds line by line; the module keeps the
 * first occurrence of each caveat and writes the human sentences.  It never
 * allocates: messages live in fixed buffers, and name only line numbers,
 * counts and seq numbers, never bytes from the trace, so they are bounded.
 *
 * Invariant: the status is the first caveat present in the spec's order,
 * or "complete"; the message is the status's sentence, NULL when complete.
 */
#ifndef MT_INTEGRITY_H
#define MT_INTEGRITY_H

#include <stdint.h>

typedef enum {
	MT_CAVEAT_MISSING_START,
	MT_CAVEAT_SEQUENCE_GAP,
	MT_CAVEAT_MALFORMED,
	MT_CAVEAT_MISSING_STOP,
	MT_CAVEAT_AFTER_STOP,
	MT_CAVEAT_DROPPED,
	MT_CAVEAT_COUNT
} mt_caveat_t;

#define MT_INTEGRITY_MSG_MAX 240

typedef struct {
	int invalid;
	char invalid_message[MT_INTEGRITY_MSG_MAX];
	unsigned caveats; /* bit per mt_caveat_t */
	char message[MT_CAVEAT_COUNT][MT_INTEGRITY_MSG_MAX];

	uint64_t malformed;
	uint64_t first_malformed_line;
	char first_malformed_why[160];
	uint64_t stop_line;
	uint64_t after_stop;
	uint64_t first_after_stop_line;
	uint64_t last_line;
	uint64_t cut_line; /* the dropped last line, or 0 */
	int cut_unterminated;
	int zero_padded;
	char stream_cut[96]; /* "the zstd stream is cut off inside ...", or "" */
} mt_integrity_t;

void mt_integrity_init(mt_integrity_t *ig);

/* Not valid evidence; the message says why (printf-style). */
void mt_integrity_set_invalid(mt_integrity_t *ig, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The first line is a kind other than trace.start. */
void mt_integrity_missing_start(mt_integrity_t *ig, const char *kind);
void mt_integrity_gap(mt_integrity_t *ig, uint64_t line, uint64_t expected,
		      uint64_t found);
/* why: "is not valid JSON", a field... (no trailing period). */
void mt_integrity_malformed(mt_integrity_t *ig, uint64_t line,
			    const char *why, const char *field);
void mt_integrity_stop(mt_integrity_t *ig, uint64_t line, uint64_t dropped);
void mt_integrity_after_stop(mt_integrity_t *ig, uint64_t line);
/* The last line was dropped: cut off (unterminated) or not an event. */
void mt_integrity_cut(mt_integrity_t *ig, uint64_t line, int unterminated);
/* A compressed trace's stream ends inside its frame (zstd) or member
 * (gzip) that starts at byte at: missing_stop_event, whatever the lines
 * decoded from it hold, a trace.stop among them too (decisions.md).
 * format and unit are static strings. */
void mt_integrity_stream_cut(mt_integrity_t *ig, const char *format,
			     const char *unit, uint64_t at);
/* The end of the trace: judge what only the end can tell. */
void mt_integrity_finish(mt_integrity_t *ig, uint64_t last_line,
			 int zero_padded);

int mt_integrity_complete(const mt_integrity_t *ig);
/* "complete" or the first caveat's name. */
const char *mt_integrity_status(const mt_integrity_t *ig);
/* The status's sentence, or NULL when complete. */
const char *mt_integrity_message(const mt_integrity_t *ig);
const char *mt_integrity_caveat_name(mt_caveat_t c);

#endif
