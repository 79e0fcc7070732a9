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
	char why_buf[MT_INTEGRITY_MSG_MAX]; /* where why is made */
} mt_row_judgement_t;

/* Analyze path and decide.  Returns MT_OK or MT_ENOMEM; either way,
 * mt_rows_judgement_release() must follow. */
int mt_rows_judge(mt_row_judgement_t *j, const char *path);

/*
 * The same for a process tree: path is the first process's trace, which
 * decides the outcome as above; children[0, n) the traces of the other
 * processes of the run (its children, the images they exec), whose
 * figures are added to the summary line (mt_heap_add_process(): counts
 * and bytes summed, peaks the sum of each process's own).  The line's
 * status, message and caveats are those of the first trace, in that
 * order, that is not complete, the message then naming a child's trace
 * by its file name, as `memtrace tree` gives the status.  A child trace
 * that cannot be read or is not valid evidence makes the tree's
 * summary_invalid (why says which).
 */
int mt_rows_judge_tree(mt_row_judgement_t *j, const char *path,
		       char *const *children, size_t n);
void mt_rows_judgement_release(mt_row_judgement_t *j);

/* The capture row for a judgement. */
int mt_rows_capture(mt_buf_t *out, const mt_row_judgement_t *j,
		    const char *capture_path, const char *summary_path);

/* The repetition row; j is NULL when the workload failed (exit_code != 0). */
int mt_rows_repetition(mt_buf_t *out, const mt_row_judgement_t *j,
		       uint64_t index, int64_t exit_code);

#endif
