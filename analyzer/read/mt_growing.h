/*
 * mt_growing: when to wait for a trace that is still being written, and
 * when it has ended, for `memtrace top`.  It is the wait of a followed
 * reader (mt_reader_follow(), mt_analysis_run_followed()): called where
 * the bytes written so far end, it refreshes the view when one is due,
 * sleeps a little, and says whether to read on.
 *
 * Following ends, in this order of precedence:
 *   - once: at the first end of what is written (--once);
 *   - stopped: trace.stop was applied (the caller says so);
 *   - gone: the process trace.start names is gone (or no process is named)
 *     and no byte came for two intervals (and at least MT_GROWING_NO_PID_NS
 *     when none is named, so that a trace whose first line is not yet
 *     written is given the time its collector takes to flush it);
 *   - timeout: no byte came for the timeout, whatever the process does.
 *
 * The figures are the pass's, one pass from the trace's start: nothing
 * here reads the trace; the caller sets pid when the pass applies
 * trace.start.
 * It never kills, signals or waits for the process it watches.
 */
#ifndef MT_GROWING_H
#define MT_GROWING_H

#include <stdint.h>

/* How long a trace that names no process may stay still before it ends. */
#define MT_GROWING_NO_PID_NS 2000000000ull

/* The longest sleep between two looks at the file. */
#define MT_GROWING_POLL_NS 100000000ull

typedef enum {
	MT_GROWING_ON = 0,
	MT_GROWING_ONCE,
	MT_GROWING_STOPPED,
	MT_GROWING_GONE,
	MT_GROWING_TIMEOUT,
} mt_growing_end_t;

typedef struct {
	uint64_t interval_ns; /* between refreshes, > 0 */
	uint64_t timeout_ns;  /* 0: none */
	int once;
	int64_t pid;          /* trace.start's, or 0 when unknown */
	int stopped;          /* the caller applied trace.stop */
	mt_growing_end_t end;
	/* Called when a refresh is due: MT_OK, or an error that ends the
	 * following (kept in error). */
	int (*refresh)(void *ctx);
	void *refresh_ctx;
	int error;
	uint64_t bytes_seen;     /* bytes read at the last wait */
	uint64_t last_growth_ns; /* when they last grew */
	uint64_t next_refresh_ns;
	int waited;              /* the end of what is written was reached */
} mt_growing_t;

void mt_growing_init(mt_growing_t *f, uint64_t interval_ns, uint64_t timeout_ns,
		     int once);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t mt_growing_now(void);

/* An mt_reader_wait_t; ctx is the mt_growing_t. */
int mt_growing_wait(void *ctx, uint64_t bytes_read);

/* Refresh when one is due (for an observer, while bytes keep coming):
 * does nothing once following has ended or failed. */
void mt_growing_tick(mt_growing_t *f);

/* Whether process pid is alive: it exists and is not a zombie. */
int mt_growing_process_alive(int64_t pid);

/*
 * Wait, following, until path holds the bytes that tell its format (a
 * collector creates the file before its first flush), or following ends
 * (the pass then judges what is there).  It only looks at the file's
 * size: the pass is the one reader.  The caller has seen the file exist.
 * MT_OK, or MT_EIO (errno set) when the file can no longer be looked at.
 */
int mt_growing_wait_start(mt_growing_t *f, const char *path);

#endif
