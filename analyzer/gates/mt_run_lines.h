/*
 * mt_run_lines: what memtrace-run (`memtrace run`, cmd/run.c) prints,
 * apart from its process control (docs/memtrace-run.md): a run's figures
 * as its repetition row gives them, the min/median/max table and the
 * warning over the runs' figures, and the out-of-memory sweep's failed
 * allocation with its stack, or a sweep run's row and lines.
 *
 * A run's figures pass to the table as one line of words, "EXIT STATE
 * [STATUS ALLOCATIONS PEAK LIVE]", of which the table reads STATE and
 * STATUS for --strict.  EXIT is the shell's status as given; STATE the
 * row's state ("-" when there is no row); the rest for summary_written,
 * and for workload_failed when the run's traces could be read (a failed
 * run's row has no summary, but its figures still count in the table):
 * the trace status and the figures the run's line gives (the whole
 * tree's, summed, when the run left child traces).
 *
 * Invariants: the functions print nothing; they append whole lines to a
 * buffer or nothing, and return MT_OK or an MT_E* code.
 */
#ifndef MT_RUN_LINES_H
#define MT_RUN_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "../base/mt_buf.h"

/* Room for the sentence saying why a file is not what it should be. */
#define MT_RUN_LINES_WHY_MAX 256

/* The last row of a repetitions file, as a run's line reads it. */
/* The standard errors of a sampled run's allocations and peak. */
typedef struct {
	uint64_t allocations, peak;
} mt_run_lines_stderr_t;

typedef struct {
	char state[32];  /* "" when the file holds no row */
	char status[32]; /* the summary's, for summary_written */
	uint64_t allocations, peak_live_bytes, live_bytes;
	/* A sampled summary's (sample_bytes and its _stderr fields). */
	int sampled;
	mt_run_lines_stderr_t stderr_of;
} mt_run_lines_row_t;

/*
 * Read the last line of the repetitions file at path into row.  MT_OK;
 * MT_EIO (*err the errno); MT_ENOMEM; MT_ECORRUPT when the line says
 * summary_written but holds no summary (why says why).
 */
int mt_run_lines_last_row(const char *path, mt_run_lines_row_t *row, int *err,
			  char *why, size_t cap);

/* "N allocations, peak SIZE, STATUS" ("1 allocation"); of a sampled
 * run (se not NULL) "N +- E allocations, peak SIZE +- E, STATUS". */
int mt_run_lines_add_figures(mt_buf_t *b, uint64_t allocations, uint64_t peak,
			     const mt_run_lines_stderr_t *se, const char *status);

/* The median of n sorted values (n >= 1): of an even number, the mean of
 * the two middle ones, rounded down, computed without wrapping. */
uint64_t mt_run_lines_median(const uint64_t *v, size_t n);

/* What mt_run_lines_table() adds to its lines. */
enum {
	/* First a line with the status memtrace-run ends with: the first
	 * non-zero EXIT, else (MT_RUN_LINES_STRICT) the first run's --strict
	 * status, else 0. */
	MT_RUN_LINES_VERDICT = 1,
	/* Judge each run's trace as --strict does (1 caveated, 2 not
	 * evidence, 3 missing), with a last line saying which run failed. */
	MT_RUN_LINES_STRICT = 2,
	/* No table and no warning: the verdict only. */
	MT_RUN_LINES_QUIET = 4,
};

/*
 * The lines memtrace-run ends with: "memtrace-run: N runs of NAME, ...",
 * the table of min, median and max over the summarized runs, and the
 * warning when the runs differ, from the figures lines in the file at
 * path ("-": standard input), as flags (MT_RUN_LINES_*) say.  name is CMD's
 * file name, rows the repetitions file's path as memtrace-run names it.
 * MT_OK; MT_EIO (*err); MT_ENOMEM; MT_ECORRUPT when a line is not a run's
 * figures (why).
 */
int mt_run_lines_table(const char *path, const char *name, const char *rows,
		       int flags, mt_buf_t *out, int *err, char *why, size_t cap);

/*
 * The allocation that MEMTRACE_FAIL_AT=n failed in the trace at path: the
 * first line holding "fail_at":n, when it is an alloc.fail.  *found is
 * set when there is one, and out gets two lines: "FN of SIZE" and its
 * stack as report names frames ("symbol (module) < caller (module) <
 * ...", at most 8 frames), or "(no stack recorded)".  MT_OK; MT_EIO
 * (*err); MT_ENOMEM.
 */
int mt_run_lines_oom(const char *path, uint64_t n, mt_buf_t *out, int *found,
		     int *err);

/* How a sweep run ended, as memtrace-run saw it. */
typedef struct {
	uint64_t n;          /* MEMTRACE_FAIL_AT */
	uint64_t exit;       /* the shell's status */
	const char *signal;  /* the signal's name when it died of one, or NULL */
	const char *hung;    /* the watchdog's seconds when it killed it, or NULL */
	int stopped;         /* memtrace-run was interrupted during it */
	int quiet;           /* no line for a run that exited */
	const char *trace, *log;
} mt_run_lines_oom_run_t;

/*
 * A sweep run's lines from the trace at r->trace: first its row for
 * memtrace-run, "FAILED RESULT" (FAILED "fail" when allocation n failed,
 * "none" when the program made fewer; RESULT clean, error, crash, hang or
 * stopped), then "N=n CALL: RESULT" and, for a crash or a hang, the
 * failed allocation's stack and the run's files.  MT_OK; MT_EIO (*err);
 * MT_ENOMEM.
 */
int mt_run_lines_oom_line(const mt_run_lines_oom_run_t *r, mt_buf_t *out, int *err);

#endif
