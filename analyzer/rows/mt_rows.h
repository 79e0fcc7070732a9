/*
 * mt_rows: the capture row (the seed's appendCapture, format.md section 5) and
 * the repetition row (the seed's recordRepetition, format.md section 6), byte
 * for byte as the seed writes them.
 *
 * mt_rows_judge() is the decision both rows share: what a trace file is
 * worth as a capture.  The renderers only format; they append one whole
 * line ending in '\n', or nothing.
 */
#ifndef MT_ROWS_H
#define MT_ROWS_H

#include <stdint.h>

#include "../model/mt_analysis.h"
#include "../base/mt_buf.h"

typedef enum {
	MT_ROW_SUMMARY_WRITTEN, /* valid evidence; summary holds its line */
	MT_ROW_CAPTURE_MISSING, /* no file at the path */
	MT_ROW_SUMMARY_INVALID, /* unreadable, not evidence, or too big */
} mt_row_outcome_t;

typedef struct {
	mt_row_outcome_t outcome;
	mt_buf_t summary;   /* the --top 0 --include-zero-live line */
	mt_analysis_t analysis;
	int read_errno;     /* why an unreadable trace could not be read */
	const char *why;    /* for SUMMARY_INVALID: a sentence, or NULL */
} mt_row_judgement_t;

/* Analyze path and decide.  Returns MT_OK or MT_ENOMEM; either way,
 * mt_rows_judgement_release() must follow. */
int mt_rows_judge(mt_row_judgement_t *j, const char *path);
void mt_rows_judgement_release(mt_row_judgement_t *j);

/* The capture row for a judgement. */
int mt_rows_capture(mt_buf_t *out, const mt_row_judgement_t *j,
		    const char *capture_path, const char *summary_path);

/* The repetition row; j is NULL when the workload failed (exit_code != 0). */
int mt_rows_repetition(mt_buf_t *out, const mt_row_judgement_t *j,
		       uint64_t index, int64_t exit_code);

#endif
