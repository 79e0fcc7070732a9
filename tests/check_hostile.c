/*
 * check_hostile: traces and environments written by an attacker.
 *
 * The analyzer treats every byte of a trace as hostile: whatever it reads,
 * it must not crash or hang, it must answer with the status format.md and
 * docs/decisions.md give (or a clear error), and its memory must stay
 * bounded: a line longer than 1 MiB costs the reader's buffer, not its
 * length; a trace's length costs nothing; only live blocks and unique
 * stacks and frames cost memory.  Big inputs are written on the fly into a
 * pipe (the analyzer reads "-" as standard input) by a generator in a
 * child process, and the analyzer's peak RSS comes from wait4() in a
 * small launcher (rss_launcher below).
 *
 * The preload's side: an environment that names a file someone else made,
 * a FIFO, a path too long for a child's trace name, or values that look
 * like format strings, never makes it write where it must not.
 * docs/security.md is the threat model these tests hold.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/mt_fmt.h"
#include "../common/mt_utf8.h"
#include "mt_test.h"

/* The analyzer is slower under ASan (and the preload never is): the big
 * inputs shrink there, keeping the same shape. */
#define SANITIZED MT_TEST_SANITIZED

#define HOSTILE_TIMEOUT 60 /* seconds any one analyzer run may take */

/* ---- a generator writing into a pipe ---- */

typedef struct {
	int fd;
	size_t len;
	char buf[1 << 16];
} gen_t;

static void gen_flush(gen_t *g)
{
	size_t done = 0;

	while (done < g->len) {
		ssize_t n = write(g->fd, g->buf + done, g->len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0); /* the analyzer stopped reading: done */
		done += (size_t)n;
	}
	g->len = 0;
}

static void gen_add(gen_t *g, const char *s, size_t n)
{
	while (n) {
		size_t room = sizeof(g->buf) - g->len, k = n < room ? n : room;

		memcpy(g->buf + g->len, s, k);
		g->len += k;
		s += k;
		n -= k;
		if (g->len == sizeof(g->buf))
			gen_flush(g);
	}
}

static void gen_str(gen_t *g, const char *s)
{
	gen_add(g, s, strlen(s));
}

static void gen_u64(gen_t *g, uint64_t v)
{
	char tmp[MT_FMT_U64_MAX];

	gen_add(g, tmp, mt_fmt_u64(tmp, v));
}

static void gen_hex(gen_t *g, uint64_t v)
{
	char tmp[MT_FMT_HEX_MAX];

	gen_add(g, tmp, mt_fmt_hex(tmp, v));
}

/* n copies of the byte c. */
static void gen_fill(gen_t *g, char c, size_t n)
{
	char chunk[4096];

	memset(chunk, c, sizeof(chunk));
	while (n) {
		size_t k = n < sizeof(chunk) ? n : sizeof(chunk);

		gen_add(g, chunk, k);
		n -= k;
	}
}

static void gen_head(gen_t *g, uint64_t *seq)
{
	gen_str(g, "{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"}\n"
		   "{\"v\":1,\"seq\":2,\"kind\":\"allocator\",\"allocator_id\":0}\n");
	*seq = 3;
}

static void gen_begin(gen_t *g, uint64_t *seq, const char *kind)
{
	gen_str(g, "{\"v\":1,\"seq\":");
	gen_u64(g, (*seq)++);
	gen_str(g, ",\"kind\":\"");
	gen_str(g, kind);
	gen_str(g, "\"");
}

static void gen_alloc(gen_t *g, uint64_t *seq, uint64_t ptr, uint64_t size,
		      uint64_t stack)
{
	gen_begin(g, seq, "alloc");
	gen_str(g, ",\"allocator_id\":0,\"ptr\":\"");
	gen_hex(g, ptr);
	gen_str(g, "\",\"size\":");
	gen_u64(g, size);
	gen_str(g, ",\"fn\":\"malloc\"");
	if (stack) {
		gen_str(g, ",\"stack\":");
		gen_u64(g, stack);
	}
	gen_str(g, ",\"tid\":7,\"t\":");
	gen_u64(g, *seq);
	gen_str(g, "}\n");
}

static void gen_free(gen_t *g, uint64_t *seq, uint64_t ptr)
{
	gen_begin(g, seq, "free");
	gen_str(g, ",\"allocator_id\":0,\"ptr\":\"");
	gen_hex(g, ptr);
	gen_str(g, "\",\"fn\":\"free\",\"tid\":7}\n");
}

static void gen_stop(gen_t *g, uint64_t *seq)
{
	gen_begin(g, seq, "trace.stop");
	gen_str(g, ",\"reason\":\"exit\",\"dropped\":0}\n");
}

typedef void gen_fn_t(gen_t *g, uint64_t n);

/* ---- the analyzer on a generated trace ---- */

typedef struct {
	int status;      /* exit status, or 128 + signal (SIGALRM: timed out) */
	char *out, *err;
	long maxrss_kb;  /* the analyzer's peak resident set */
	double seconds;
} piped_t;

static void piped_release(piped_t *r)
{
	free(r->out);
	free(r->err);
}

/*
 * The analyzer's own peak RSS.  A child's ru_maxrss counts the memory it
 * had before exec, a copy of its parent's: the test process, hundreds of
 * MB under ASan.  So the analyzer runs under a launcher, this very binary
 * freshly exec'd (a few MB), which forks it, waits for it and writes its
 * ru_maxrss to the file MT_HOSTILE_RSS_TO names.  glibc passes argc and
 * argv to constructors.
 */
__attribute__((constructor)) static void rss_launcher(int argc, char **argv)
{
	const char *to = getenv("MT_HOSTILE_RSS_TO");
	struct rusage ru;
	int status, fd;
	pid_t pid;
	char num[32];

	if (!to || argc < 2)
		return;
	pid = fork();
	if (pid < 0)
		_exit(125);
	if (pid == 0) {
		unsetenv("MT_HOSTILE_RSS_TO");
		alarm(HOSTILE_TIMEOUT);
		execv(argv[1], argv + 1);
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR)
			_exit(125);
	fd = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0) {
		int n = snprintf(num, sizeof(num), "%ld\n", ru.ru_maxrss);

		if (write(fd, num, (size_t)n) != n)
			_exit(125);
		close(fd);
	}
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

/* memtrace ARGS... with "-" for the trace, reading what gen(n) writes. */
static void run_piped(piped_t *r, gen_fn_t *gen, uint64_t n, const char *cmd,
		      const char *opt1, const char *opt2)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "out");
	char *err = mt_test_path(dir, "err"), *mt = mt_test_memtrace();
	char *rss = mt_test_path(dir, "rss"), *rss_text;
	struct timespec t0, t1;
	struct rusage ru;
	int p[2], status;
	pid_t gpid, apid;

	memset(r, 0, sizeof(*r));
	mt_quiet_int_eq(pipe(p), 0);
	gpid = fork();
	ck_assert_int_ge(gpid, 0);
	if (gpid == 0) {
		static gen_t g;

		close(p[0]);
		signal(SIGPIPE, SIG_IGN);
		g.fd = p[1];
		gen(&g, n);
		gen_flush(&g);
		_exit(0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	apid = fork();
	ck_assert_int_ge(apid, 0);
	if (apid == 0) {
		char *argv[] = { "rss-launcher", mt, (char *)cmd, "-", (char *)opt1,
				 (char *)opt2, NULL };
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(p[0], 0);
		dup2(o, 1);
		dup2(e, 2);
		close(p[0]);
		close(p[1]);
		setenv("MT_HOSTILE_RSS_TO", rss, 1);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	close(p[0]);
	close(p[1]);
	while (wait4(apid, &status, 0, &ru) < 0)
		mt_quiet_int_eq(errno, EINTR);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	kill(gpid, SIGKILL);
	waitpid(gpid, NULL, 0);
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	rss_text = mt_test_read(rss, NULL);
	mt_quiet(rss_text != NULL, "the launcher wrote no RSS (status %d)", r->status);
	r->maxrss_kb = atol(rss_text);
	free(rss_text);
	r->seconds = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	r->out = mt_test_read(out, NULL);
	r->err = mt_test_read(err, NULL);
	mt_quiet_ptr_nonnull(r->out);
	mt_quiet_ptr_nonnull(r->err);
	mt_quiet(r->status != 128 + SIGALRM, "memtrace %s hung (%d s): %s", cmd,
		 HOSTILE_TIMEOUT, r->err);
	free(out);
	free(err);
	free(rss);
	free(mt);
}

/* The peak RSS of the analyzer on the smallest trace: what the absolute
 * bounds below add to (ASan alone makes it hundreds of MB). */
static void gen_minimal(gen_t *g, uint64_t n)
{
	uint64_t seq;

	(void)n;
	gen_head(g, &seq);
	gen_stop(g, &seq);
}

static long baseline_rss_kb(void)
{
	piped_t r;
	long kb;

	run_piped(&r, gen_minimal, 0, "check", NULL, NULL);
	mt_quiet_int_eq(r.status, 0);
	kb = r.maxrss_kb;
	piped_release(&r);
	return kb;
}

/* ---- reading the rows ---- */

/* The first line of out as a JSON object; every line of out must be one
 * (strict json-c, UTF-8 checked: the rows are JSON whatever the trace). */
static json_object *first_row(const char *out)
{
	struct json_tokener *tok = json_tokener_new();
	json_object *first = NULL;
	const char *line = out;

	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	while (*line) {
		const char *nl = strchr(line, '\n');
		json_object *o;

		mt_quiet(nl != NULL, "an output line without newline: %s", line);
		mt_quiet(nl - line < 8192, "an output line of %td bytes", nl - line);
		json_tokener_reset(tok);
		o = json_tokener_parse_ex(tok, line, (int)(nl - line));
		mt_quiet(o && json_object_is_type(o, json_type_object),
			 "an output line is not a JSON object: %.*s",
			 (int)(nl - line), line);
		if (!first)
			first = o;
		else
			json_object_put(o);
		line = nl + 1;
	}
	json_tokener_free(tok);
	mt_quiet(first != NULL, "no output");
	return first;
}

/* The summary's totals must hold together whatever the trace held. */
static void assert_consistent(json_object *s)
{
	mt_quiet_uint_eq(mt_test_json_u64(s, "live_bytes"),
			 mt_test_json_u64(s, "bytes_allocated") - mt_test_json_u64(s, "bytes_freed"));
	mt_quiet_uint_le(mt_test_json_u64(s, "bytes_freed"), mt_test_json_u64(s, "bytes_allocated"));
	mt_quiet_uint_ge(mt_test_json_u64(s, "peak_live_bytes"), mt_test_json_u64(s, "live_bytes"));
	mt_quiet_uint_le(mt_test_json_u64(s, "peak_live_bytes"), mt_test_json_u64(s, "bytes_allocated"));
}

/* ---- small traces, from a string, through a file ---- */

typedef struct {
	int status;
	char *out, *err;
} small_t;

static void run_small(small_t *r, const char *trace, size_t len, const char *cmd)
{
	char *dir = mt_test_scratch(), *path = mt_test_path(dir, "t.jsonl");
	char *mt = mt_test_memtrace();
	char *argv[] = { mt, (char *)cmd, path, NULL };
	mt_test_run_t run;

	mt_test_write(path, trace, len);
	mt_test_run(&run, argv, NULL);
	r->status = run.status;
	r->out = run.out;
	r->err = run.err;
	free(path);
	free(mt);
}

#define HEAD                                                               \
	"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"}\n"                   \
	"{\"v\":1,\"seq\":2,\"kind\":\"allocator\",\"allocator_id\":0}\n"

/* summary of a small trace: the status and the first row. */
static json_object *summary_of(const char *trace, size_t len, int want_status)
{
	small_t r;
	json_object *s;

	run_small(&r, trace, len, "summary");
	mt_quiet(r.status == want_status, "summary exits %d, not %d: %s%s",
		 r.status, want_status, r.out, r.err);
	s = first_row(r.out);
	free(r.out);
	free(r.err);
	return s;
}

static void assert_message_has(json_object *s, const char *text)
{
	const char *m = mt_test_json_str(s, "message");

	/* A complete trace's message is null: it has only "". */
	if (!m)
		m = "";
	mt_quiet(strstr(m, text), "message '%s' lacks '%s'", m, text);
}

/* A trace whose frame names hold what json-c's UTF-8 check lets through
 * (overlong forms, a surrogate): those lines are malformed, and every row
 * stays text a strict decoder reads. */
START_TEST(test_rows_stay_utf8_when_frame_names_are_not)
{
	static const char trace[] =
		"{\"v\":1,\"seq\":1,\"kind\":\"trace.start\"}\n"
		"{\"v\":1,\"seq\":2,\"kind\":\"allocator\",\"allocator_id\":0}\n"
		"{\"v\":1,\"seq\":3,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x10\",\"symbol\":\"a\xc0\x80" "b\"}\n"
		"{\"v\":1,\"seq\":4,\"kind\":\"frame\",\"frame_id\":2,\"ip\":\"0x20\",\"symbol\":\"e\xed\xa0\x80" "f\"}\n"
		"{\"v\":1,\"seq\":5,\"kind\":\"frame\",\"frame_id\":3,\"ip\":\"0x30\",\"symbol\":\"caf\xc3\xa9\"}\n"
		"{\"v\":1,\"seq\":6,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[3]}\n"
		"{\"v\":1,\"seq\":7,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x1\",\"size\":5,\"fn\":\"malloc\",\"stack\":1}\n"
		"{\"v\":1,\"seq\":8,\"kind\":\"trace.stop\"}\n";
	json_object *s = summary_of(trace, sizeof(trace) - 1, 0);
	small_t r;

	ck_assert_str_eq(mt_test_json_str(s, "status"), "malformed_event");
	mt_quiet_int_eq(mt_test_json_i64(s, "malformed_events"), 2);
	assert_message_has(s, "the first, at line 3: it is not valid UTF-8");
	mt_quiet_int_eq(mt_test_json_i64(s, "allocations"), 1);
	json_object_put(s);
	run_small(&r, trace, sizeof(trace) - 1, "summary");
	mt_quiet(mt_utf8_valid(r.out, strlen(r.out)), "rows not UTF-8: %s", r.out);
	mt_quiet_ptr_nonnull(strstr(r.out, "\"symbol\":\"caf\xc3\xa9\""));
	free(r.out);
	free(r.err);
}
END_TEST

/* ======================= long lines ======================= */

static uint64_t long_line_bytes;

/* start, allocator, alloc, one line of long_line_bytes (a frame whose
 * symbol is that long), alloc, stop. */
static void gen_with_long_line(gen_t *g, uint64_t n)
{
	uint64_t seq;

	(void)n;
	gen_head(g, &seq);
	gen_alloc(g, &seq, 0x1000, 10, 0);
	gen_begin(g, &seq, "frame");
	gen_str(g, ",\"frame_id\":1,\"ip\":\"0x1\",\"symbol\":\"");
	gen_fill(g, 'x', long_line_bytes);
	gen_str(g, "\"}\n");
	gen_alloc(g, &seq, 0x2000, 20, 0);
	gen_stop(g, &seq);
}

START_TEST(test_line_longer_than_1_mib_is_malformed_and_costs_its_limit_not_its_length)
{
	piped_t shortl, longl;
	json_object *s;

	long_line_bytes = 1000;
	run_piped(&shortl, gen_with_long_line, 0, "summary", "--top", "0");
	mt_quiet_int_eq(shortl.status, 0);
	long_line_bytes = 64u << 20;
	run_piped(&longl, gen_with_long_line, 0, "summary", "--top", "0");
	mt_quiet_int_eq(longl.status, 0);
	s = first_row(longl.out);
	ck_assert_str_eq(mt_test_json_str(s, "status"), "malformed_event");
	assert_message_has(s, "at line 4: it is longer than 1 MiB");
	mt_quiet_int_eq(mt_test_json_i64(s, "malformed_events"), 1);
	mt_quiet_int_eq(mt_test_json_i64(s, "allocations"), 2);
	mt_quiet_int_eq(mt_test_json_i64(s, "events"), 5);
	/* The 64 MiB line costs nothing beyond the reader's buffer, which
	 * the 1 KB one has too. */
	fprintf(stderr, "hostile: peak RSS %ld KB with a 1 KB line, %ld KB with a 64 MiB one\n",
		shortl.maxrss_kb, longl.maxrss_kb);
	mt_quiet(longl.maxrss_kb < shortl.maxrss_kb + 4096,
		 "a 64 MiB line cost %ld KB, a 1 KB one %ld KB", longl.maxrss_kb,
		 shortl.maxrss_kb);
	json_object_put(s);
	piped_release(&shortl);
	piped_release(&longl);
}
END_TEST

/* 96 MiB without a single newline. */
static void gen_one_endless_line(gen_t *g, uint64_t n)
{
	(void)n;
	gen_str(g, "{\"v\":1,\"seq\":1,\"kind\":\"trace.start\",\"x\":\"");
	gen_fill(g, 'y', 96u << 20);
}

START_TEST(test_first_line_longer_than_1_mib_is_not_evidence)
{
	piped_t r;
	json_object *o;

	run_piped(&r, gen_one_endless_line, 0, "check", NULL, NULL);
	mt_quiet_int_eq(r.status, 2);
	o = first_row(r.out);
	ck_assert_str_eq(mt_test_json_str(o, "status"), "invalid");
	assert_message_has(o, "line 1 is longer than 1048576 bytes");
	mt_quiet(r.maxrss_kb < baseline_rss_kb() + 8 * 1024,
		 "96 MiB on one line cost %ld KB", r.maxrss_kb);
	json_object_put(o);
	piped_release(&r);
}
END_TEST

static void gen_cut_long_tail(gen_t *g, uint64_t n)
{
	uint64_t seq;

	(void)n;
	gen_head(g, &seq);
	gen_alloc(g, &seq, 0x1000, 10, 0);
	gen_fill(g, '{', 3u << 20);
}

START_TEST(test_cut_off_last_line_longer_than_1_mib_is_a_missing_stop)
{
	piped_t r;
	json_object *s;

	run_piped(&r, gen_cut_long_tail, 0, "summary", "--top", "0");
	mt_quiet_int_eq(r.status, 0);
	s = first_row(r.out);
	ck_assert_str_eq(mt_test_json_str(s, "status"), "missing_stop_event");
	assert_message_has(s, "its last line 4, which has no newline, was dropped");
	mt_quiet_int_eq(mt_test_json_i64(s, "allocations"), 1);
	json_object_put(s);
	piped_release(&r);
}
END_TEST

/* ======================= bytes that are not text ======================= */

START_TEST(test_nul_bytes_inside_lines_are_malformed)
{
	static const char trace[] =
		HEAD
		"{\"v\":1,\"seq\":3,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x1\",\"symbol\":\"a\0b\"}\n"
		"\0\0\0\0\n"
		"{\"v\":1,\"seq\":5,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x10\",\"size\":1,\"fn\":\"malloc\"}\n"
		"{\"v\":1,\"seq\":6,\"kind\":\"trace.stop\"}\n";
	static const char first[] = "{\"v\":1,\"seq\":1,\0\"kind\":\"trace.start\"}\n";
	json_object *s = summary_of(trace, sizeof(trace) - 1, 0);
	small_t r;

	ck_assert_str_eq(mt_test_json_str(s, "status"), "malformed_event");
	mt_quiet_int_eq(mt_test_json_i64(s, "malformed_events"), 2);
	assert_message_has(s, "at line 3: it contains a NUL byte");
	mt_quiet_int_eq(mt_test_json_i64(s, "allocations"), 1);
	json_object_put(s);

	run_small(&r, first, sizeof(first) - 1, "check");
	mt_quiet_int_eq(r.status, 2);
	mt_quiet_ptr_nonnull(strstr(r.out, "line 1 is not a memtrace event: it contains a NUL byte"));
	free(r.out);
	free(r.err);
}
END_TEST

START_TEST(test_invalid_utf8_is_malformed_and_never_reaches_the_rows)
{
	static const char trace[] =
		HEAD
		"{\"v\":1,\"seq\":3,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x1\",\"symbol\":\"\xff\xfe\"}\n"
		"{\"v\":1,\"seq\":4,\"kind\":\"frame\",\"frame_id\":2,\"ip\":\"0x2\",\"symbol\":\"cut\xe2\x82\"}\n"
		"{\"v\":1,\"seq\":5,\"kind\":\"frame\",\"frame_id\":3,\"ip\":\"0x3\",\"module\":\"\x80lone\"}\n"
		"{\"v\":1,\"seq\":6,\"kind\":\"allocator\",\"allocator_id\":1,\"name\":\"\xc3\"}\n"
		"{\"v\":1,\"seq\":7,\"kind\":\"frame\",\"frame_id\":4,\"ip\":\"0x4\",\"symbol\":\"caf\xc3\xa9\"}\n"
		"{\"v\":1,\"seq\":8,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[4]}\n"
		"{\"v\":1,\"seq\":9,\"kind\":\"stack\",\"stack_id\":2,\"frames\":[1]}\n"
		"{\"v\":1,\"seq\":10,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x10\",\"size\":5,\"fn\":\"malloc\",\"stack\":1}\n"
		"{\"v\":1,\"seq\":11,\"kind\":\"trace.stop\"}\n";
	small_t r;
	json_object *s, *site;
	const char *second;

	run_small(&r, trace, sizeof(trace) - 1, "summary");
	mt_quiet_int_eq(r.status, 0);
	s = first_row(r.out); /* every row is valid UTF-8 JSON */
	ck_assert_str_eq(mt_test_json_str(s, "status"), "malformed_event");
	/* Four bad strings, and the stack of a frame that was refused. */
	mt_quiet_int_eq(mt_test_json_i64(s, "malformed_events"), 5);
	assert_message_has(s, "at line 3: it is not valid UTF-8");
	second = strchr(r.out, '\n') + 1;
	site = first_row(second);
	mt_quiet_ptr_nonnull(strstr(second, "\"symbol\":\"caf\xc3\xa9\""));
	json_object_put(site);
	json_object_put(s);
	free(r.out);
	free(r.err);
}
END_TEST

/* ======================= structure ======================= */

static size_t nest_depth;
static const char *nest_open = "[", *nest_close = "]";

/* line nest_depth levels deep in an unknown field; as line 1 when n is 1. */
static void gen_deep(gen_t *g, uint64_t n)
{
	uint64_t seq = 1;

	if (n != 1)
		gen_head(g, &seq);
	gen_begin(g, &seq, "trace.start");
	gen_str(g, ",\"x\":");
	for (size_t i = 0; i < nest_depth; i++)
		gen_str(g, nest_open);
	gen_str(g, "1");
	for (size_t i = 0; i < nest_depth; i++)
		gen_str(g, nest_close);
	gen_str(g, "}\n");
	gen_stop(g, &seq);
}

START_TEST(test_deep_nesting_is_malformed_without_recursion)
{
	piped_t r;
	json_object *s;

	/* Half a million arrays deep: json-c stops at its depth limit. */
	nest_depth = 500000;
	nest_open = "[";
	nest_close = "]";
	run_piped(&r, gen_deep, 0, "summary", "--top", "0");
	mt_quiet_int_eq(r.status, 0);
	s = first_row(r.out);
	ck_assert_str_eq(mt_test_json_str(s, "status"), "malformed_event");
	mt_quiet_int_eq(mt_test_json_i64(s, "malformed_events"), 1);
	json_object_put(s);
	piped_release(&r);

	nest_depth = 150000;
	nest_open = "{\"a\":";
	nest_close = "}";
	run_piped(&r, gen_deep, 1, "check", NULL, NULL);
	mt_quiet_int_eq(r.status, 2);
	mt_quiet_ptr_nonnull(strstr(r.out, "line 1 is not a memtrace event"));
	piped_release(&r);

	/* 40 levels is more than json-c's 32, at any size. */
	nest_depth = 40;
	nest_open = "[";
	nest_close = "]";
	run_piped(&r, gen_deep, 0, "check", NULL, NULL);
	mt_quiet_int_eq(r.status, 1);
	mt_quiet_ptr_nonnull(strstr(r.out, "at line 3: it is not valid JSON"));
	piped_release(&r);
}
END_TEST

static size_t containers;

/* trace.start whose unknown field x holds containers - 1 empty objects:
 * with the line's own object, containers in all. */
static void gen_containers(gen_t *g, uint64_t n)
{
	uint64_t seq;

	(void)n;
	gen_head(g, &seq);
	gen_begin(g, &seq, "trace.start");
	gen_str(g, ",\"x\":[");
	for (size_t i = 0; i + 2 < containers; i++)
		gen_str(g, i ? ",{}" : "{}");
	gen_str(g, "]}\n");
	gen_stop(g, &seq);
}

START_TEST(test_a_line_of_many_objects_is_refused_before_json_c_reads_it)
{
	piped_t r;
	json_object *s;

	/* json-c spent 270 MB and a second on a 1 MiB line of "{},". */
	containers = 340000;
	run_piped(&r, gen_containers, 0, "summary", "--top", "0");
	mt_quiet_int_eq(r.status, 0);
	s = first_row(r.out);
	ck_assert_str_eq(mt_test_json_str(s, "status"), "malformed_event");
	assert_message_has(s, "at line 3: it holds more than 1024 JSON objects and arrays");
	fprintf(stderr, "hostile: a 1 MiB line of {}: %ld KB, %.2f s\n", r.maxrss_kb, r.seconds);
	mt_quiet(r.maxrss_kb < baseline_rss_kb() + 8 * 1024, "peak RSS %ld KB",
		 r.maxrss_kb);
	json_object_put(s);
	piped_release(&r);

	/* 1024 are read, unknown field or not. */
	containers = 1024;
	run_piped(&r, gen_containers, 0, "check", NULL, NULL);
	mt_quiet(r.status == 0 && strstr(r.out, "\"complete\""), "%s", r.out);
	piped_release(&r);
	containers = 1025;
	run_piped(&r, gen_containers, 0, "check", NULL, NULL);
	mt_quiet_ptr_nonnull(strstr(r.out, "more than 1024 JSON objects and arrays"));
	piped_release(&r);
}
END_TEST

START_TEST(test_duplicated_keys_count_with_their_last_value)
{
	static const char trace[] =
		HEAD
		"{\"v\":1,\"seq\":3,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x10\",\"size\":100,\"fn\":\"malloc\",\"size\":7}\n"
		"{\"v\":1,\"seq\":4,\"kind\":\"alloc\",\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"0x10\",\"fn\":\"free\"}\n"
		"{\"v\":1,\"seq\":5,\"seq\":9,\"kind\":\"trace.stop\"}\n";
	json_object *s = summary_of(trace, sizeof(trace) - 1, 0);

	/* As json-c and jq read them: the last value of a key counts. */
	mt_quiet_int_eq(mt_test_json_i64(s, "bytes_allocated"), 7);
	mt_quiet_int_eq(mt_test_json_i64(s, "frees"), 1);
	mt_quiet_int_eq(mt_test_json_i64(s, "allocations"), 1);
	ck_assert_str_eq(mt_test_json_str(s, "status"), "sequence_gap");
	assert_message_has(s, "expected seq 5, found 9");
	json_object_put(s);
}
END_TEST

/* ======================= numbers ======================= */

START_TEST(test_numbers_out_of_range_and_negative_sizes_are_malformed)
{
#define A(seq, size) "{\"v\":1,\"seq\":" #seq ",\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x" #seq "0\",\"size\":" size ",\"fn\":\"malloc\"}\n"
	static const char trace[] =
		HEAD
		A(3, "18446744073709551616")
		A(4, "-1")
		A(5, "-9223372036854775809")
		A(6, "1e400")
		A(7, "1.5")
		A(8, "1e2")
		A(9, "\"12\"")
		A(10, "99999999999999999999999999999999")
		A(11, "-0")
		A(12, "18446744073709551615")
		"{\"v\":1,\"seq\":13,\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"0x12345678901234567\"}\n"
		"{\"v\":1,\"seq\":14,\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"0x\"}\n"
		"{\"v\":1,\"seq\":15,\"kind\":\"free\",\"allocator_id\":-1,\"ptr\":\"0x110\"}\n"
		"{\"v\":1,\"seq\":16,\"kind\":\"trace.stop\",\"t\":1e-400}\n"
		"{\"v\":1,\"seq\":17,\"kind\":\"trace.stop\"}\n";
#undef A
	json_object *s = summary_of(trace, sizeof(trace) - 1, 0);

	/* -0 is 0; 2^64 - 1 is the largest size; nothing else is read. */
	mt_quiet_int_eq(mt_test_json_i64(s, "allocations"), 2);
	mt_quiet_uint_eq(mt_test_json_u64(s, "bytes_allocated"), UINT64_MAX);
	mt_quiet_int_eq(mt_test_json_i64(s, "malformed_events"), 12);
	mt_quiet_int_eq(mt_test_json_i64(s, "frees"), 0);
	assert_message_has(s, "at line 3: a number is out of range");
	assert_consistent(s);
	json_object_put(s);
}
END_TEST

START_TEST(test_sizes_that_would_overflow_the_totals_are_malformed)
{
	static const char trace[] =
		HEAD
		"{\"v\":1,\"seq\":3,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x10\",\"size\":9223372036854775808,\"fn\":\"malloc\"}\n"
		"{\"v\":1,\"seq\":4,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x20\",\"size\":9223372036854775808,\"fn\":\"malloc\"}\n"
		"{\"v\":1,\"seq\":5,\"kind\":\"remap\",\"allocator_id\":0,\"ptr\":\"0x10\",\"new_ptr\":\"0x30\",\"size\":9223372036854775808}\n"
		"{\"v\":1,\"seq\":6,\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"0x10\"}\n"
		"{\"v\":1,\"seq\":7,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x40\",\"size\":5,\"fn\":\"malloc\"}\n"
		"{\"v\":1,\"seq\":8,\"kind\":\"trace.stop\"}\n";
	json_object *s = summary_of(trace, sizeof(trace) - 1, 0);

	/* Unchecked, the sums would wrap: 5 bytes allocated, a peak of
	 * 2^63 and live bytes that are neither. */
	ck_assert_str_eq(mt_test_json_str(s, "status"), "malformed_event");
	mt_quiet_int_eq(mt_test_json_i64(s, "malformed_events"), 2);
	assert_message_has(s, "at line 4: its size takes bytes_allocated beyond 2^64 - 1 ('size')");
	mt_quiet_int_eq(mt_test_json_i64(s, "allocations"), 2);
	mt_quiet_int_eq(mt_test_json_i64(s, "frees"), 1);
	mt_quiet_uint_eq(mt_test_json_u64(s, "bytes_allocated"), 9223372036854775813ull);
	mt_quiet_uint_eq(mt_test_json_u64(s, "live_bytes"), 5);
	mt_quiet_uint_eq(mt_test_json_u64(s, "peak_live_bytes"), 9223372036854775808ull);
	assert_consistent(s);
	json_object_put(s);
}
END_TEST

START_TEST(test_ids_never_declared_or_declared_twice_are_malformed)
{
	static const char trace[] =
		HEAD
		"{\"v\":1,\"seq\":3,\"kind\":\"alloc\",\"allocator_id\":5,\"ptr\":\"0x10\",\"size\":1,\"fn\":\"malloc\"}\n"
		"{\"v\":1,\"seq\":4,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x10\",\"size\":1,\"fn\":\"malloc\",\"stack\":9}\n"
		"{\"v\":1,\"seq\":5,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[3]}\n"
		"{\"v\":1,\"seq\":6,\"kind\":\"free\",\"allocator_id\":5,\"ptr\":\"0x10\"}\n"
		"{\"v\":1,\"seq\":7,\"kind\":\"allocator\",\"allocator_id\":0}\n"
		"{\"v\":1,\"seq\":8,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x1\"}\n"
		"{\"v\":1,\"seq\":9,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x2\"}\n"
		"{\"v\":1,\"seq\":10,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[1]}\n"
		"{\"v\":1,\"seq\":11,\"kind\":\"stack\",\"stack_id\":1,\"frames\":[1,1]}\n"
		"{\"v\":1,\"seq\":12,\"kind\":\"resize\",\"allocator_id\":0,\"ptr\":\"0x10\",\"size\":2,\"stack\":2}\n"
		"{\"v\":1,\"seq\":13,\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x10\",\"size\":3,\"fn\":\"malloc\",\"stack\":1}\n"
		"{\"v\":1,\"seq\":14,\"kind\":\"trace.stop\"}\n";
	json_object *s = summary_of(trace, sizeof(trace) - 1, 0);

	mt_quiet_int_eq(mt_test_json_i64(s, "malformed_events"), 8);
	assert_message_has(s, "at line 3: it names an allocator never declared ('allocator_id')");
	/* A refused event changes nothing. */
	mt_quiet_int_eq(mt_test_json_i64(s, "allocations"), 1);
	mt_quiet_int_eq(mt_test_json_i64(s, "bytes_allocated"), 3);
	mt_quiet_int_eq(mt_test_json_i64(s, "unknown_frees"), 0);
	mt_quiet_int_eq(mt_test_json_i64(s, "events"), 6);
	json_object_put(s);
}
END_TEST

/* ======================= volume ======================= */

/*
 * Pointers chosen to collide in an unseeded hash, h = p * K,
 * h ^= h >> 29, slot = h mod cap: for each wanted h (low 24 bits zero, so
 * one slot for every table up to 2^24), invert the xor-shift and the
 * multiply.  Then 2^14 pointers that differ only in their 14 high bits,
 * which share a slot under any multiply-and-fold hash of that shape.
 */
static uint64_t fixed_hash_preimage(uint64_t h)
{
	const uint64_t k = 0x9e3779b97f4a7c15ull;
	uint64_t inv = k, p;

	for (int i = 0; i < 6; i++) /* Newton: inv = k^-1 mod 2^64 */
		inv *= 2 - k * inv;
	p = h ^ (h >> 29) ^ (h >> 58);
	return p * inv - 1; /* the map stores key + 1 */
}

static void gen_colliding(gen_t *g, uint64_t n)
{
	uint64_t seq;

	gen_head(g, &seq);
	for (uint64_t i = 1; i <= n; i++)
		gen_alloc(g, &seq, fixed_hash_preimage(i << 24), 16, 0);
	for (uint64_t i = 0; i < 16384; i++)
		gen_alloc(g, &seq, i << 50 | 0x5555550, 16, 0);
	for (uint64_t i = 1; i <= n; i++)
		gen_free(g, &seq, fixed_hash_preimage(i << 24));
	gen_stop(g, &seq);
}

/* The same events as gen_colliding(n), on pointers 16 bytes apart, as
 * malloc gives them. */
static void gen_spread(gen_t *g, uint64_t n)
{
	uint64_t seq;

	gen_head(g, &seq);
	for (uint64_t i = 1; i <= n; i++)
		gen_alloc(g, &seq, 0x555555550000 + 16 * i, 16, 0);
	for (uint64_t i = 0; i < 16384; i++)
		gen_alloc(g, &seq, 0x7f0000000000 + 16 * i, 16, 0);
	for (uint64_t i = 1; i <= n; i++)
		gen_free(g, &seq, 0x555555550000 + 16 * i);
	gen_stop(g, &seq);
}

/*
 * An unseeded hash takes about 1 s for 40,000 of these pointers, and 4
 * times that for every doubling: minutes for 300,000, against a fraction of a
 * second for as many pointers spread out.  The time is weighed against
 * that of the spread pointers on the same machine, never against a fixed
 * number of seconds, which a slow or busy machine (or ASan) may need for
 * either: four times as long and a second to spare hold on any machine,
 * and an unseeded hash is tens of times past them.  The analyzer's alarm
 * (HOSTILE_TIMEOUT) only ends a hang.
 */
START_TEST(test_pointers_chosen_to_collide_do_not_slow_the_analyzer)
{
	const uint64_t n = SANITIZED ? 100000 : 300000;
	piped_t r, spread;
	json_object *s;

	run_piped(&spread, gen_spread, n, "summary", "--top", "0");
	mt_quiet_int_eq(spread.status, 0);
	run_piped(&r, gen_colliding, n, "summary", "--top", "0");
	mt_quiet_int_eq(r.status, 0);
	s = first_row(r.out);
	ck_assert_str_eq(mt_test_json_str(s, "status"), "complete");
	mt_quiet_uint_eq(mt_test_json_u64(s, "allocations"), n + 16384);
	mt_quiet_uint_eq(mt_test_json_u64(s, "frees"), n);
	mt_quiet_uint_eq(mt_test_json_u64(s, "live_allocations"), 16384);
	json_object_put(s);
	s = first_row(spread.out);
	mt_quiet_uint_eq(mt_test_json_u64(s, "allocations"), n + 16384);
	mt_quiet_uint_eq(mt_test_json_u64(s, "live_allocations"), 16384);
	json_object_put(s);
	fprintf(stderr, "hostile: %" PRIu64 " colliding pointers in %.2f s, "
			"spread in %.2f s\n", n + 16384, r.seconds, spread.seconds);
	mt_quiet(r.seconds <= 4 * spread.seconds + 1,
		 "%" PRIu64 " colliding pointers took %.2f s, spread ones %.2f s",
		 n, r.seconds, spread.seconds);
	piped_release(&r);
	piped_release(&spread);
}
END_TEST

/* n distinct stacks on one frame, one allocation of i bytes on stack i. */
static void gen_stacks(gen_t *g, uint64_t n)
{
	uint64_t seq;

	gen_head(g, &seq);
	gen_str(g, "{\"v\":1,\"seq\":3,\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x401000\",\"symbol\":\"f\"}\n");
	seq = 4;
	for (uint64_t i = 1; i <= n; i++) {
		gen_begin(g, &seq, "stack");
		gen_str(g, ",\"stack_id\":");
		gen_u64(g, i);
		gen_str(g, ",\"frames\":[1]}\n");
		gen_alloc(g, &seq, 0x10000 + 16 * i, i, i);
	}
	gen_stop(g, &seq);
}

START_TEST(test_millions_of_distinct_stacks_are_ranked)
{
	const uint64_t n = SANITIZED ? 400000 : 2000000;
	piped_t r;
	json_object *s;
	const char *site;

	run_piped(&r, gen_stacks, n, "summary", "--top", "3");
	mt_quiet_int_eq(r.status, 0);
	s = first_row(r.out);
	ck_assert_str_eq(mt_test_json_str(s, "status"), "complete");
	mt_quiet_uint_eq(mt_test_json_u64(s, "allocations"), n);
	json_object_put(s);
	/* Ranked by live bytes: stack n, then n - 1, then n - 2. */
	site = strchr(r.out, '\n') + 1;
	for (uint64_t rank = 1; rank <= 3; rank++) {
		json_object *o = first_row(site);

		mt_quiet_uint_eq(mt_test_json_u64(o, "rank"), rank);
		mt_quiet_uint_eq(mt_test_json_u64(o, "stack_id"), n + 1 - rank);
		json_object_put(o);
		site = strchr(site, '\n') + 1;
	}
	ck_assert_str_eq(site, "");
	fprintf(stderr, "hostile: %" PRIu64 " distinct stacks: %.2f s, peak RSS %ld KB\n", n,
		r.seconds, r.maxrss_kb);
	piped_release(&r);
}
END_TEST

/* n events: start, allocator, 64 frames, 256 stacks, then allocs and
 * frees that keep 1000 blocks live, and stop. */
static void gen_long(gen_t *g, uint64_t n)
{
	uint64_t seq, i = 0;

	gen_head(g, &seq);
	for (uint64_t f = 1; f <= 64; f++) {
		gen_begin(g, &seq, "frame");
		gen_str(g, ",\"frame_id\":");
		gen_u64(g, f);
		gen_str(g, ",\"ip\":\"");
		gen_hex(g, 0x400000 + 64 * f);
		gen_str(g, "\",\"symbol\":\"fn_");
		gen_u64(g, f);
		gen_str(g, "\"}\n");
	}
	for (uint64_t k = 1; k <= 256; k++) {
		gen_begin(g, &seq, "stack");
		gen_str(g, ",\"stack_id\":");
		gen_u64(g, k);
		gen_str(g, ",\"frames\":[");
		gen_u64(g, 1 + k % 64);
		gen_str(g, ",");
		gen_u64(g, 1 + k / 4 % 64);
		gen_str(g, "]}\n");
	}
	while (seq < n) {
		uint64_t ptr = 0x7f0000000000 + 48 * (i % 1000);

		if (i >= 1000) /* the block of i - 1000 had that address */
			gen_free(g, &seq, ptr);
		if (seq < n)
			gen_alloc(g, &seq, ptr, 16 + i % 500, 1 + i % 256);
		i++;
	}
	gen_stop(g, &seq);
}

START_TEST(test_memory_does_not_grow_with_the_trace_length)
{
	const uint64_t small = SANITIZED ? 300000 : 1000000;
	const uint64_t big = small * 10;
	piped_t a, b;
	json_object *s;

	run_piped(&a, gen_long, small, "summary", "--top", "0");
	run_piped(&b, gen_long, big, "summary", "--top", "0");
	mt_quiet_int_eq(a.status, 0);
	mt_quiet_int_eq(b.status, 0);
	s = first_row(b.out);
	ck_assert_str_eq(mt_test_json_str(s, "status"), "complete");
	mt_quiet_uint_eq(mt_test_json_u64(s, "events"), big);
	mt_quiet_uint_ge(mt_test_json_u64(s, "live_allocations"), 999);
	mt_quiet_uint_le(mt_test_json_u64(s, "live_allocations"), 1000);
	json_object_put(s);
	fprintf(stderr, "hostile: %" PRIu64 " events: %ld KB in %.1f s; %" PRIu64
			" events: %ld KB in %.1f s\n",
		small, a.maxrss_kb, a.seconds, big, b.maxrss_kb, b.seconds);
	/* Ten times the events, the same memory (within 1 MiB). */
	mt_quiet(b.maxrss_kb <= a.maxrss_kb + 1024,
		 "peak RSS grew from %ld KB to %ld KB", a.maxrss_kb, b.maxrss_kb);
	piped_release(&a);
	piped_release(&b);
}
END_TEST

/* ======================= regressions ======================= */

/* Every input kept in fixtures/fuzz/ (what the fuzzer once found, and the
 * hostile traces of fixtures/traces/hostile_*) and a few random ones:
 * check and summary end with a status of format.md, rows that are JSON. */
static void assert_survives(const char *trace, size_t len, const char *what)
{
	static const char *const cmds[] = { "check", "summary" };

	for (int c = 0; c < 2; c++) {
		small_t r;

		run_small(&r, trace, len, cmds[c]);
		mt_quiet(r.status <= 2, "%s: %s exits %d: %s", what, cmds[c], r.status,
			 r.err);
		if (*r.out)
			json_object_put(first_row(r.out));
		free(r.out);
		free(r.err);
	}
}

START_TEST(test_fuzz_findings_and_random_bytes_never_crash_the_analyzer)
{
	char *dir = mt_test_fixture("fuzz");
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned state = 12345;
	int kept = 0;

	if (d) {
		while ((e = readdir(d))) {
			char *path;
			char *data;
			size_t len;

			if (e->d_name[0] == '.' || !strcmp(e->d_name, "README.md"))
				continue;
			path = mt_test_path(dir, e->d_name);
			data = mt_test_read(path, &len);
			mt_quiet_ptr_nonnull(data);
			assert_survives(data, len, e->d_name);
			kept++;
			free(data);
			free(path);
		}
		closedir(d);
	}
	for (int i = 0; i < 16; i++) {
		char buf[4096];
		size_t len = 0;

		if (i & 1) {
			memcpy(buf, HEAD, sizeof(HEAD) - 1);
			len = sizeof(HEAD) - 1;
		}
		while (len < sizeof(buf)) {
			state = state * 1103515245u + 12345u;
			/* Mostly JSON's own bytes, so that lines get parsed. */
			static const char json_bytes[] = "{}[]\":,0123456789-ex\n \\u";

			buf[len++] = (state >> 16) % 4 ?
					     json_bytes[(state >> 8) % (sizeof(json_bytes) - 1)] :
					     (char)(state >> 8);
		}
		assert_survives(buf, len, "random bytes");
	}
	fprintf(stderr, "hostile: %d kept fuzz findings replayed\n", kept);
	free(dir);
}
END_TEST

/* The hostile inputs of fixtures/fuzz/ and the verdicts its README gives. */
START_TEST(test_kept_hostile_inputs_keep_their_verdicts)
{
	static const struct {
		const char *file, *status, *text;
	} cases[] = {
		{ "hostile_size_overflow.jsonl", "malformed_event",
		  "2 malformed events skipped; the first, at line 4: its size takes "
		  "bytes_allocated beyond 2^64 - 1" },
		{ "hostile_containers.jsonl", "malformed_event",
		  "at line 3: it holds more than 1024 JSON objects and arrays" },
		{ "hostile_deep_nesting.jsonl", "malformed_event", "at line 3: it is not valid JSON" },
		{ "hostile_nul_and_utf8.jsonl", "malformed_event",
		  "3 malformed events skipped; the first, at line 3: it contains a NUL byte" },
		{ "hostile_duplicate_keys.jsonl", "sequence_gap", "expected seq 5, found 9" },
		{ "hostile_undeclared_ids.jsonl", "malformed_event",
		  "4 malformed events skipped; the first, at line 3: it names an allocator never declared" },
		{ "hostile_long_site.jsonl", "complete", "" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char rel[256], *path, *data;
		size_t len;
		json_object *s;

		snprintf(rel, sizeof(rel), "fuzz/%s", cases[i].file);
		path = mt_test_fixture(rel);
		data = mt_test_read(path, &len);
		mt_quiet(data != NULL, "no fixture %s", path);
		s = summary_of(data, len, 0);
		mt_quiet(!strcmp(mt_test_json_str(s, "status"), cases[i].status), "%s: status %s",
			 cases[i].file, mt_test_json_str(s, "status"));
		assert_message_has(s, cases[i].text);
		assert_consistent(s);
		json_object_put(s);
		free(data);
		free(path);
	}
}
END_TEST

/* ======================= the preload's environment ======================= */

/* Run a workload under the preload with MEMTRACE_OUTPUT=output (and one
 * more NAME=value, or NULL). */
static void run_traced(mt_test_run_t *r, const char *name, const char *output,
		       const char *extra)
{
	char preload[4096], out_env[8192];
	char *prog = mt_test_workload(name);
	char *argv[] = { prog, NULL };
	char *env[] = { preload, out_env, (char *)extra, NULL };

	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s/libmtpreload.so", mt_test_build_dir());
	snprintf(out_env, sizeof(out_env), "MEMTRACE_OUTPUT=%s", output);
	mt_test_run(r, argv, env);
	free(prog);
}

static int count_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	mt_quiet_ptr_nonnull(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

START_TEST(test_a_trace_file_someone_else_made_is_refused_untouched)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	mt_test_run_t r;
	struct stat st;

	/* In a shared directory, another user made the name first, readable
	 * by all, to read what the trace would say.  Making a file of
	 * another user needs root, and a uid 65534 the file system takes
	 * (a user namespace may map none). */
	mt_test_write(trace, "theirs\n", 7);
	mt_quiet_int_eq(chmod(trace, 0666), 0);
	if (geteuid() != 0 || chown(trace, 65534, 65534) != 0) {
		MT_TEST_SKIP("cannot make a file of another user here (euid %u, "
			     "chown to 65534: %s)", (unsigned)geteuid(),
			     geteuid() ? "not tried" : strerror(errno));
		free(trace);
		return;
	}
	run_traced(&r, "wl_entry", trace, NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "entry points done\n");
	mt_quiet_ptr_nonnull(strstr(r.err, "cannot open trace"));
	mt_test_assert_file_eq(trace, "theirs\n");
	mt_quiet_int_eq(stat(trace, &st), 0);
	mt_quiet_int_eq(st.st_mode & 07777, 0666);
	mt_test_run_release(&r);
	free(trace);
}
END_TEST

START_TEST(test_an_old_trace_file_of_ours_is_made_private_and_replaced)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *mt = mt_test_memtrace();
	char *argv[] = { mt, "check", trace, NULL };
	mt_test_run_t r;
	struct stat st;

	mt_test_write(trace, "an older, longer trace, readable by all\n", 40);
	mt_quiet_int_eq(chmod(trace, 0644), 0);
	run_traced(&r, "wl_entry", trace, NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	mt_test_run_release(&r);
	mt_quiet_int_eq(stat(trace, &st), 0);
	mt_quiet_int_eq(st.st_mode & 07777, 0600);
	mt_test_run(&r, argv, NULL);
	mt_quiet_int_eq(r.status, 0); /* complete: nothing of the old file */
	mt_test_run_release(&r);
	free(mt);
	free(trace);
}
END_TEST

START_TEST(test_a_fifo_or_a_directory_as_trace_is_refused_without_blocking)
{
	char *dir = mt_test_scratch(), *fifo = mt_test_path(dir, "fifo.jsonl");
	mt_test_run_t r;

	mt_quiet_int_eq(mkfifo(fifo, 0600), 0);
	run_traced(&r, "wl_entry", fifo, NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "entry points done\n");
	mt_quiet_ptr_nonnull(strstr(r.err, "cannot open trace"));
	mt_test_run_release(&r);
	run_traced(&r, "wl_entry", dir, NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet_ptr_nonnull(strstr(r.err, "cannot open trace"));
	mt_test_run_release(&r);
	free(fifo);
}
END_TEST

/* A MEMTRACE_OUTPUT that fits, but whose child form (".PID" added) would
 * not: a child that fell back to the parent's own name would truncate
 * its trace.  So nobody is traced, and the program runs as it would. */
START_TEST(test_an_output_too_long_for_a_child_name_runs_untraced)
{
	char *dir = mt_test_scratch();
	char path[4096];
	size_t n = strlen(dir);
	mt_test_run_t r;

	memcpy(path, dir, n + 1);
	/* Directories of 200 bytes, then a name (of at most 250) that
	 * makes 4093 bytes. */
	while (4093 - (n + 1) > 250) {
		path[n++] = '/';
		memset(path + n, 'd', 200);
		n += 200;
		path[n] = '\0';
		mt_quiet_int_eq(mkdir(path, 0700), 0);
	}
	path[n++] = '/';
	memset(path + n, 'f', 4093 - 6 - n);
	n = 4093 - 6;
	memcpy(path + n, ".jsonl", 7);
	mt_quiet_uint_eq(strlen(path), 4093);
	run_traced(&r, "wl_fork", path, NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "fork done\n");
	mt_quiet_ptr_nonnull(strstr(r.err, "MEMTRACE_OUTPUT is too long"));
	ck_assert(!mt_test_exists(path));
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_format_strings_in_the_environment_are_plain_text)
{
	char *dir = mt_test_scratch(), *pattern = mt_test_path(dir, "%s%n%x%d%%p.jsonl");
	char *file = mt_test_path(dir, "%s%n%x%d%p.jsonl");
	char *mt = mt_test_memtrace();
	char *argv[] = { mt, "check", file, NULL };
	mt_test_run_t r;

	/* Only %p and %% mean something in MEMTRACE_OUTPUT; "%%p" is a
	 * literal "%p"; a depth of "%n" is not a number. */
	run_traced(&r, "wl_entry", pattern, "MEMTRACE_STACK_DEPTH=%n%s%s%s");
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "entry points done\n");
	ck_assert_str_eq(r.err, "memtrace: MEMTRACE_STACK_DEPTH is not a number of frames: "
				"'%n%s%s%s'; using 32\n");
	mt_quiet_int_eq(count_files(dir), 1);
	mt_test_run_release(&r);
	/* The analyzer takes such a path as it is, too. */
	mt_test_run(&r, argv, NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_test_run_release(&r);
	free(mt);
	free(file);
	free(pattern);
}
END_TEST

START_TEST(test_hostile_stack_depths_fall_back_to_the_default_or_the_cap)
{
	static const char *const bad[] = {
		"-1", "99999999999999999999999", "12abc", "0x10", " ", NULL,
	};
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char env[64];
	mt_test_run_t r;

	for (int i = 0; bad[i]; i++) {
		snprintf(env, sizeof(env), "MEMTRACE_STACK_DEPTH=%s", bad[i]);
		run_traced(&r, "wl_entry", trace, env);
		mt_quiet_int_eq(r.status, 0);
		ck_assert_str_eq(r.out, "entry points done\n");
		mt_quiet(strstr(r.err, "is not a number of frames") &&
				      strstr(r.err, "; using 32\n"),
			      "%s: %s", bad[i], r.err);
		mt_test_run_release(&r);
	}
	/* A depth beyond the cap is the cap: 256 frames at most. */
	run_traced(&r, "wl_entry", trace, "MEMTRACE_STACK_DEPTH=100000");
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	mt_test_run_release(&r);
	{
		char *data = mt_test_read(trace, NULL);

		mt_quiet_ptr_nonnull(data);
		mt_quiet_ptr_nonnull(strstr(data, "\"stack_depth\":256"));
		free(data);
	}
	free(trace);
}
END_TEST

Suite *mt_suite_hostile(void)
{
	Suite *s = suite_create("hostile");
	TCase *lines = tcase_create("lines");
	TCase *volume = tcase_create("volume");
	TCase *env = tcase_create("environment");

	tcase_set_timeout(lines, 120);
	tcase_add_test(lines, test_line_longer_than_1_mib_is_malformed_and_costs_its_limit_not_its_length);
	tcase_add_test(lines, test_rows_stay_utf8_when_frame_names_are_not);
	tcase_add_test(lines, test_first_line_longer_than_1_mib_is_not_evidence);
	tcase_add_test(lines, test_cut_off_last_line_longer_than_1_mib_is_a_missing_stop);
	tcase_add_test(lines, test_nul_bytes_inside_lines_are_malformed);
	tcase_add_test(lines, test_invalid_utf8_is_malformed_and_never_reaches_the_rows);
	tcase_add_test(lines, test_deep_nesting_is_malformed_without_recursion);
	tcase_add_test(lines, test_a_line_of_many_objects_is_refused_before_json_c_reads_it);
	tcase_add_test(lines, test_duplicated_keys_count_with_their_last_value);
	tcase_add_test(lines, test_numbers_out_of_range_and_negative_sizes_are_malformed);
	tcase_add_test(lines, test_sizes_that_would_overflow_the_totals_are_malformed);
	tcase_add_test(lines, test_ids_never_declared_or_declared_twice_are_malformed);
	tcase_add_test(lines, test_fuzz_findings_and_random_bytes_never_crash_the_analyzer);
	tcase_add_test(lines, test_kept_hostile_inputs_keep_their_verdicts);
	suite_add_tcase(s, lines);

	tcase_set_timeout(volume, 300);
	tcase_add_test(volume, test_pointers_chosen_to_collide_do_not_slow_the_analyzer);
	tcase_add_test(volume, test_millions_of_distinct_stacks_are_ranked);
	tcase_add_test(volume, test_memory_does_not_grow_with_the_trace_length);
	suite_add_tcase(s, volume);

	tcase_set_timeout(env, 120);
	tcase_add_test(env, test_a_trace_file_someone_else_made_is_refused_untouched);
	tcase_add_test(env, test_an_old_trace_file_of_ours_is_made_private_and_replaced);
	tcase_add_test(env, test_a_fifo_or_a_directory_as_trace_is_refused_without_blocking);
	tcase_add_test(env, test_an_output_too_long_for_a_child_name_runs_untraced);
	tcase_add_test(env, test_format_strings_in_the_environment_are_plain_text);
	tcase_add_test(env, test_hostile_stack_depths_fall_back_to_the_default_or_the_cap);
	suite_add_tcase(s, env);
	return s;
}
