/*
 * mt_test_trace: what the suites that run programs under the preload ask
 * of the trace files those programs leave: which files a run left in a
 * directory, what each one's trace.start says, and whether each ends
 * whole (cut to its last line, with the trace.stop it should have).
 *
 * Each reads a trace plain or zstd-compressed (mt_test_trace_text).  Like
 * mt_test, these helpers allocate with plain malloc and abort the test
 * (ck_abort) on a failure of their own.
 */
#ifndef MT_TEST_TRACE_H
#define MT_TEST_TRACE_H

#include <json-c/json.h>
#include <stddef.h>
#include <sys/types.h>

#include "mt_test.h"

/* Run argv (argv[0] a path) under build/libmtpreload.so with
 * MEMTRACE_OUTPUT=output, and extra ("NAME=value", or NULL), as
 * mt_test_run() runs a command. */
void mt_test_run_traced(mt_test_run_t *r, char *const argv[], const char *output,
			const char *extra);

/* The names (not paths) of the *.jsonl files in dir, sorted, in a
 * malloc'd array of *n malloc'd strings; mt_test_traces_release frees. */
char **mt_test_traces(const char *dir, size_t *n);
/* The same for the files whose names end in ext (".jsonl.zst"). */
char **mt_test_traces_ending(const char *dir, const char *ext, size_t *n);
void mt_test_traces_release(char **names, size_t n);

/* The text of the trace at path, NUL-terminated, *len its length (len
 * may be NULL): a zstd trace decompressed (as much as decodes, so a trace
 * a collector is still writing gives its whole frames so far; whole = 1
 * fails the test when it ends inside a frame), any other file as it is.
 * NULL when the file is missing. */
char *mt_test_trace_text(const char *path, size_t *len, int whole);

/* The first line of the trace at path, parsed (the caller puts it). */
json_object *mt_test_trace_start(const char *path);

/* The trace at path ends whole: not empty, its last byte a newline, no
 * NUL byte anywhere (no zero padding), its first line trace.start and its
 * last trace.stop with the given reason (NULL: any).  Fails the test
 * otherwise, naming the file and what it found. */
void mt_test_assert_trace_whole(const char *path, const char *reason);

/* The trace at path is cut to whole lines (not empty, no NUL byte, its
 * last byte a newline, its first line trace.start), with or without a
 * trace.stop. */
void mt_test_assert_trace_cut(const char *path);

/* The trace at path, whose collector was killed: as
 * mt_test_assert_trace_cut, but its last line may be cut, as a SIGKILL
 * can end the collector's write(2) part way (readers drop such a line:
 * format.md, section 3). */
void mt_test_assert_trace_cut_by_kill(const char *path);

/* Wait until the collector writing the trace at path has finished it (it
 * holds an exclusive flock on the file while it writes): after a SIGKILL
 * of the program, the collector still writes what it recorded. */
void mt_test_wait_trace_finished(const char *path);

/* memtrace check's status word for the trace at path (malloc'd). */
char *mt_test_check_status(const char *path);

/* Every *.jsonl trace in dir is complete (memtrace check) and ends whole;
 * returns how many there are. */
size_t mt_test_assert_traces_complete(const char *dir);
/* The same for the files whose names end in ext (".jsonl.zst"). */
size_t mt_test_assert_traces_complete_ending(const char *dir, const char *ext);

/* How many lines of the trace at path have "kind":kind and, when size is
 * not 0, "size":size. */
int mt_test_trace_count(const char *path, const char *kind, long size);

/* The collector of program pid: a process named memtrace-collector (comm
 * "memtrace-collec") whose argv is "memtrace-collector NAME ROOT PID
 * PIDFD".  Returns its pid, or 0. */
pid_t mt_test_find_collector(pid_t program);

#endif
