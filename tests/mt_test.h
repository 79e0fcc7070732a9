/*
 * mt_test: what the Check suites share: the list of suites, paths to the
 * build and the fixtures, running a command and capturing what it prints,
 * and reading and writing whole files.
 *
 * Test helpers may allocate with plain malloc: they are not the analyzer.
 * They abort the test (ck_abort) on any failure of their own.
 */
#ifndef MT_TEST_H
#define MT_TEST_H

#include <check.h>
#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The suites, one per file, each named for what it tests.  Every one is
 * a plain declaration that tests/mt_tests.c runs: a suite whose file is
 * gone fails the link. */
Suite *mt_suite_seed(void);       /* tests/check_seed.c: the seed's four tests */
Suite *mt_suite_fixtures(void);   /* tests/check_fixtures.c: golden files */
Suite *mt_suite_cli(void);        /* tests/check_cli.c: options, exit statuses */
Suite *mt_suite_summary(void);    /* tests/check_summary.c: summary arithmetic */
Suite *mt_suite_parse(void);      /* tests/check_parse.c: the parser object and its dispatch */
Suite *mt_suite_oom(void);        /* tests/check_oom.c: every allocation failure */
Suite *mt_suite_core(void);       /* tests/check_core.c: the preload core, driven directly */
Suite *mt_suite_exe(void);        /* tests/check_exe.c: the exe's path without /proc/self */
Suite *mt_suite_preload(void);    /* tests/check_preload.c: workloads under LD_PRELOAD */
Suite *mt_suite_run(void);        /* tests/check_run.c: scripts/memtrace-run end to end */
Suite *mt_suite_fds(void);        /* tests/check_fds.c: the tracer holds no descriptor of the program's */
Suite *mt_suite_cancel(void);     /* tests/check_cancel.c: cancelled threads leave the tracer whole */
Suite *mt_suite_deploy(void);     /* tests/check_deploy.c: daemons, containers, services, seccomp */
Suite *mt_suite_limits(void);     /* tests/check_limits.c: resource limits and odd outputs */
Suite *mt_suite_record(void);     /* tests/check_record.c: memtrace record, one collector for a tree */
Suite *mt_suite_man(void);        /* tests/check_man.c: man pages, completion, version, install */
Suite *mt_suite_hostile(void);    /* tests/check_hostile.c: traces and environments an attacker writes */
Suite *mt_suite_stress(void);     /* tests/check_stress.c: threads and fork at once */
Suite *mt_suite_real(void);       /* tests/check_real.c: programs nobody here wrote */
Suite *mt_suite_unwind(void);     /* tests/check_unwind.c: the fast unwinder against libunwind */
Suite *mt_suite_report(void);     /* tests/check_report.c: report, flamegraph, plot */
Suite *mt_suite_gate(void);       /* tests/check_gate.c: gate, diff, repetitions */
Suite *mt_suite_suppress(void);   /* tests/check_suppress.c: leak suppressions */
Suite *mt_suite_sweep(void);      /* tests/check_sweep.c: the out-of-memory sweep */
Suite *mt_suite_fmt(void);        /* tests/check_fmt.c: decimal and hex formatting, hex parsing */
Suite *mt_suite_utf8(void);       /* tests/check_utf8.c: RFC 3629 validation */
Suite *mt_suite_event(void);      /* tests/check_event.c: kind and fn names */
Suite *mt_suite_buf(void);        /* tests/check_buf.c: the output buffer */
Suite *mt_suite_map(void);        /* tests/check_map.c: the hash map */
Suite *mt_suite_blocks(void);     /* tests/check_blocks.c: the live-block table */
Suite *mt_suite_mem(void);        /* tests/check_mem.c: counted allocation */
Suite *mt_suite_reader(void);     /* tests/check_reader.c: the trace reader */
Suite *mt_suite_analysis(void);   /* tests/check_analysis.c: the pass over a trace */
Suite *mt_suite_heap(void);       /* tests/check_heap.c: the heap model */
Suite *mt_suite_clock(void);      /* tests/check_clock.c: the preload's clock */
Suite *mt_suite_process(void);    /* tests/check_process.c: process trees, endings, names */
Suite *mt_suite_tree(void);       /* tests/check_tree.c: memtrace tree, traces summed */
Suite *mt_suite_identity(void);   /* tests/check_identity.c: every view names the program */
Suite *mt_suite_ahead(void);      /* tests/check_ahead.c: --threads, the same output */
Suite *mt_suite_compressed(void); /* tests/check_compressed.c: zstd and gzip traces */
Suite *mt_suite_flat(void);       /* tests/check_flat.c: the fast path against json-c */
Suite *mt_suite_block_line(void); /* tests/check_block_line.c: the exact matcher against json-c */
Suite *mt_suite_any_json(void);   /* tests/check_any_json.c: not JSON, NUL bytes, bad UTF-8 */
Suite *mt_suite_validate(void);   /* tests/check_validate.c: the validator's verdicts */
Suite *mt_suite_run_lines(void);  /* tests/check_run_lines.c: what memtrace run prints, its refusals */
Suite *mt_suite_units(void);      /* tests/check_units.c: the count parser */
Suite *mt_suite_out(void);        /* tests/check_out.c: the collector's trace file */
Suite *mt_suite_zpool(void);      /* tests/check_zpool.c: the collector's zstd workers */
Suite *mt_suite_collector(void);  /* tests/check_collector.c: the write path, end to end */
Suite *mt_suite_export(void);     /* tests/check_export.c: memtrace export */
Suite *mt_suite_html(void);       /* tests/check_html.c: memtrace html */
Suite *mt_suite_sample(void);     /* tests/check_sample.c: MEMTRACE_SAMPLE */
Suite *mt_suite_top(void);        /* tests/check_top.c: memtrace top, the live view */
Suite *mt_suite_docs(void);       /* tests/check_docs.c: the documents' examples */
Suite *mt_suite_jobs(void);       /* tests/check_jobs.c: the suites side by side */
Suite *mt_suite_api(void);        /* tests/check_api.c: memtrace.h, a program's own allocators */

/*
 * What both runners call before they make a suite.  A tcase's timeout is
 * there to end a hung test, never to time one: a tcase that sets none gets
 * MT_TEST_DEFAULT_TIMEOUT seconds, not Check's 4, which a test that runs a
 * few sanitized processes on a busy two-core machine can take.  Either is
 * the caller's to change: CK_DEFAULT_TIMEOUT as given is kept, and
 * CK_TIMEOUT_MULTIPLIER (make sanitize sets it) scales every timeout.
 */
#define MT_TEST_DEFAULT_TIMEOUT "60"
void mt_test_runner_init(void);

/* Absolute paths: the source tree, the build tree, a fixture. */
const char *mt_test_source_dir(void);
const char *mt_test_build_dir(void);
/* Returns a malloc'd "<source>/fixtures/<name>". */
char *mt_test_fixture(const char *name);
/* Returns a malloc'd "<build>/memtrace". */
char *mt_test_memtrace(void);

/*
 * A fresh empty directory under $TMPDIR for the test that asks: it and
 * all it holds are removed when the test's process exits (Check forks
 * one per test, and exits it whether the test passed or failed), so a
 * test neither removes nor frees it.  A process the test forks that
 * exits removes only the directories it asked for itself.
 */
char *mt_test_scratch(void);
/* rm -rf dir, for a test whose behaviour is a directory going away. */
void mt_test_rmdir(const char *dir);
/* A malloc'd "<dir>/<name>". */
char *mt_test_path(const char *dir, const char *name);
/* A malloc'd path of the test workload name (tests/workloads/), built. */
char *mt_test_workload(const char *name);

typedef struct {
	int status;   /* exit status, or 128 + signal */
	char *out;    /* everything written to stdout, NUL-terminated */
	size_t out_len;
	char *err;    /* everything written to stderr */
	size_t err_len;
} mt_test_run_t;

/* Seconds a command may run before SIGALRM ends it (status 128 + 14). */
#define MT_TEST_RUN_TIMEOUT 120

/* Run argv (argv[0] a path) with extra environment entries env (NULL or
 * a NULL-terminated list of "NAME=value"), stdin from /dev/null. */
void mt_test_run(mt_test_run_t *r, char *const argv[], char *const env[]);

/* Run build/memtrace with the given arguments in directory dir (NULL: the
 * current one), umask 022, so rows name relative paths and new files have
 * a known mode.  The varargs form ends with NULL. */
void mt_test_memtrace_in(mt_test_run_t *r, const char *dir, ...)
	__attribute__((sentinel));
void mt_test_memtrace_in_argv(mt_test_run_t *r, const char *dir,
			      char *const env[], const char *const args[]);
void mt_test_run_release(mt_test_run_t *r);

/* The out-of-memory sweep of a command that writes to stdout: `memtrace
 * ARGS` with its Nth allocation failing (MEMTRACE_ANALYZER_FAIL_AT), for
 * N = 1, 2, ..., until a run writes what a run without failures writes.
 * Each run before it must exit 4 with nothing on stdout; what names the
 * command in the messages. */
void mt_test_sweep_allocation_failures(const char *const args[], const char *what);

/* Whole-file helpers.  mt_test_read returns NULL when the file is absent. */
char *mt_test_read(const char *path, size_t *len);
void mt_test_write(const char *path, const char *data, size_t len);
int mt_test_exists(const char *path);

/* A file named trace.jsonl holding data, in a fresh directory of its
 * own (a scratch directory); mt_test_file_done() frees the path. */
typedef struct {
	char *dir;  /* a scratch directory (mt_test_scratch()) */
	char *path;
} mt_test_file_t;
void mt_test_file_write(mt_test_file_t *f, const char *data, size_t len);
void mt_test_file_done(mt_test_file_t *f);

/* Key i of the tables' churn pool (check_map, check_blocks): small
 * integers, pointer-like values in clusters, the extremes, random words;
 * distinct for every i. */
uint64_t mt_test_churn_key(size_t i);

/* The page cache: how many pages of path's bytes [off, off + len) it
 * holds (off a multiple of the page size); mt_test_uncache() writes the
 * file back and lets its clean pages go; whether path is on tmpfs, whose
 * pages are the file and never leave. */
size_t mt_test_cached_pages(const char *path, uint64_t off, uint64_t len);
void mt_test_uncache(const char *path);
int mt_test_on_tmpfs(const char *path);

/* 1 in the build of make sanitize.  The preload is never built with the
 * sanitizers (their runtime must come first in a process), so a test that
 * exercises the preload alone, on a real program, learns nothing more
 * there than under make check: such a test says so in a skip line. */
#if defined(__SANITIZE_ADDRESS__)
#define MT_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MT_TEST_SANITIZED 1
#endif
#endif
#ifndef MT_TEST_SANITIZED
#define MT_TEST_SANITIZED 0
#endif

/*
 * What the machine may lack.  A test whose assertions need a property that
 * an x86-64 Linux machine may not have (a file system that lets clean
 * pages go, two CPUs, a tool, a kernel feature, root) probes it first in
 * the place the test uses, and where it is missing calls mt_test_skip():
 * one line on stdout, "skip: TEST: WHY (FOUND)", and the test returns
 * without asserting what it cannot hold there.  Where the property holds
 * the test asserts all it did.  MT_TEST_SKIP names the test it is called
 * from (START_TEST(t) makes a function t_fn); fmt is "why (what was
 * found)".
 */
void mt_test_skip(const char *test, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
#define MT_TEST_SKIP(...) mt_test_skip(__func__, __VA_ARGS__)
/* The CPUs this process may run on (its affinity mask). */
int mt_test_cpus(void);
/* CLOCK_MONOTONIC in milliseconds; a sleep of ms milliseconds, whole
 * whatever signals come. */
uint64_t mt_test_now_ms(void);
void mt_test_sleep_ms(long ms);
/* The file system path is on: "ext4", "tmpfs", "overlay", ... or its
 * statfs magic in hex; a static string, or buf (at least 24 bytes). */
const char *mt_test_fs_name(const char *path, char *buf, size_t size);
/* Whether the file system of directory dir lets a file's clean pages
 * leave the page cache on POSIX_FADV_DONTNEED, as mt_test_uncache() and
 * the preload's writer ask (tmpfs never does: its pages are the file).
 * Probed with a scratch file in dir; on 0, found says what stayed. */
int mt_test_drops_clean_pages(const char *dir, char *found, size_t size);

/* splitmix64: a test sets mt_test_rng_state to its own fixed seed, so a
 * failure reproduces. */
extern uint64_t mt_test_rng_state;
uint64_t mt_test_rng(void);

/* How many lines of objdump's disassembly of function fn in the built
 * memtrace contain needle.  Ask mt_test_objdump_by_name() first: whether
 * objdump is here and disassembles one function by name
 * (--disassemble=SYM, binutils 2.32 on); on 0, found says what it did. */
int mt_test_disassembly_count(const char *fn, const char *needle);
int mt_test_objdump_by_name(char *found, size_t size);

/* Fail the test unless the file at path holds exactly the expected bytes;
 * the message shows both. */
void mt_test_assert_file_eq(const char *path, const char *expected);
/* Fail the test unless actual equals the content of fixture name. */
void mt_test_assert_golden(const char *actual, size_t len, const char *name);

/* Members of a JSON object (a row, an event) a test requires: each fails
 * the test when o has no member key.  _i64 and _u64 read it as an integer,
 * _str as a string (NULL for null); _opt_str is NULL also when key is
 * absent, and never fails. */
json_object *mt_test_json_member(json_object *o, const char *key);
int64_t mt_test_json_i64(json_object *o, const char *key);
uint64_t mt_test_json_u64(json_object *o, const char *key);
const char *mt_test_json_str(json_object *o, const char *key);
const char *mt_test_json_opt_str(json_object *o, const char *key);

/* The smallest complete trace of the spec. */
#define MT_TEST_MINIMAL_TRACE                                      \
	"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"}\n"           \
	"{\"v\":1,\"seq\":2,\"kind\":\"allocator\",\"allocator_id\":0}\n" \
	"{\"v\":1,\"seq\":3,\"kind\":\"trace.stop\"}\n"

/*
 * Quiet assertions, for loops that check thousands of things: each of
 * Check's ck_assert_* that passes records its place for the "after this
 * point" message with a write(2), microseconds apiece (a test of 200,000
 * operations spent most of its time there); these call Check only when
 * they fail.  The message names the expression and both values.
 */
#define mt_quiet(cond, ...)                                                \
	do {                                                               \
		if (!(cond))                                               \
			ck_abort_msg(__VA_ARGS__);                         \
	} while (0)
#define mt_quiet_cmp_(T, fmt, a, op, b)                                    \
	do {                                                               \
		T a_ = (T)(a);                                             \
		T b_ = (T)(b);                                             \
		if (!(a_ op b_))                                           \
			ck_abort_msg("%s %s %s: " fmt " vs " fmt, #a, #op,  \
				     #b, a_, b_);                          \
	} while (0)
#define mt_quiet_int_eq(a, b) mt_quiet_cmp_(intmax_t, "%jd", a, ==, b)
#define mt_quiet_uint_eq(a, b) mt_quiet_cmp_(uintmax_t, "%ju", a, ==, b)
#define mt_quiet_uint_ge(a, b) mt_quiet_cmp_(uintmax_t, "%ju", a, >=, b)
#define mt_quiet_uint_gt(a, b) mt_quiet_cmp_(uintmax_t, "%ju", a, >, b)
#define mt_quiet_uint_le(a, b) mt_quiet_cmp_(uintmax_t, "%ju", a, <=, b)
#define mt_quiet_ptr_eq(a, b)                                              \
	mt_quiet_cmp_(const void *, "%p", a, ==, b)
#define mt_quiet_ptr_null(p)                                               \
	mt_quiet((const void *)(p) == NULL, "%s is not NULL", #p)
#define mt_quiet_ptr_nonnull(p)                                            \
	mt_quiet((const void *)(p) != NULL, "%s is NULL", #p)
#define mt_quiet_mem_eq(a, b, n)                                           \
	mt_quiet(!memcmp((a), (b), (n)), "%s and %s differ", #a, #b)

/* A growing byte string, NUL-terminated, for traces made in memory;
 * free data when done. */
typedef struct {
	char *data;
	size_t len, cap;
} mt_test_bytes_t;

void mt_test_bytes_add(mt_test_bytes_t *b, const void *p, size_t n);
/* printf's formatting, a line of at most 511 bytes; returns its length. */
size_t mt_test_bytes_addf(mt_test_bytes_t *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The head of the suites' generated traces, from seq 1: trace.start of
 * pid 42 (start_extra added to its members: "" or ",\"stack_depth\":32"),
 * allocator 0 "libc", frames 1 to 3 of /opt/app/bin/app, stacks 1 [1,3]
 * and 2 [2,3].  Returns the next line's seq. */
uint64_t mt_test_bytes_add_trace_head(mt_test_bytes_t *b, const char *start_extra);

#endif
