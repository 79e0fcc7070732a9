/*
 * check_top: `memtrace top`, the live view of a growing trace.  It is
 * driven against a program running under the real preload and collector
 * (wl_steps: 1 MiB every 100 ms for about 4 s), and against traces this
 * file writes in parts, plain, zstd and gzip, cut inside a line, a frame
 * or a member, then completed while top reads them.
 *
 * Its output off a terminal is one block of figures a refresh, blocks
 * separated by a blank line; the figures are read back from the blocks
 * and held against `memtrace summary` of the same trace.  Nothing here is
 * timed but by generous upper bounds on how long a run may take.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "../analyzer/base/mt_error.h"
#include "../analyzer/read/mt_reader.h"
#include "../analyzer/render/mt_top.h"
#include "mt_test.h"

/* Seconds after which a run the test started is ended as hung. */
#define HANG_GUARD_S 60

/* The figures of one block of top's output. */
typedef struct {
	char state[160];
	uint64_t events, live_bytes, live_blocks, peak_bytes, bytes_allocated;
	uint64_t allocations, frees;
	int caveated;
} block_t;

/* "3.0 MiB (3145728 bytes)" or "512 B": the bytes. */
static uint64_t size_at(const char *s)
{
	const char *open = strchr(s, '(');
	const char *nl = strchr(s, '\n');

	if (open && (!nl || open < nl))
		return strtoull(open + 1, NULL, 10);
	return strtoull(s, NULL, 10);
}

/* The text after the label of the line "  LABEL   ..." in block b. */
static const char *field(const char *b, const char *label)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "\n  %s ", label);
	p = strstr(b, key);
	ck_assert_msg(p != NULL, "no '%s' line in:\n%s", label, b);
	p += strlen(key);
	while (*p == ' ')
		p++;
	return p;
}

static uint64_t number_after(const char *p, const char *word)
{
	const char *w = strstr(p, word);

	ck_assert_msg(w != NULL, "no '%s' in '%.80s'", word, p);
	return strtoull(w + strlen(word), NULL, 10);
}

static void parse_block(const char *b, block_t *out)
{
	const char *colon, *nl;

	memset(out, 0, sizeof(*out));
	ck_assert_msg(!strncmp(b, "memtrace top: ", 14), "not a block:\n%s", b);
	nl = strchr(b, '\n');
	ck_assert_ptr_nonnull(nl);
	colon = b + 14;
	/* the state follows the last ": " of the first line */
	for (const char *p = colon; p < nl; p++)
		if (p[0] == ':' && p[1] == ' ')
			colon = p + 2;
	snprintf(out->state, sizeof(out->state), "%.*s", (int)(nl - colon), colon);
	{
		const char *t = field(b, "trace");
		const char *ev = strstr(t, " event");

		ck_assert_ptr_nonnull(ev);
		while (ev > t && ev[-1] >= '0' && ev[-1] <= '9')
			ev--;
		out->events = strtoull(ev, NULL, 10);
	}
	out->live_bytes = size_at(field(b, "live"));
	out->live_blocks = number_after(field(b, "live"), " in ");
	out->peak_bytes = size_at(field(b, "peak"));
	out->bytes_allocated = size_at(field(b, "allocated"));
	out->allocations = number_after(field(b, "allocated"), ") in ");
	out->frees = number_after(field(b, "allocated"), "allocations, ");
	out->caveated = strstr(b, "\n  integrity   CAVEATED") != NULL;
}

/* Split top's output into blocks (malloc'd copies, NULL-terminated). */
static char **split_blocks(const char *out, size_t *n)
{
	char **v = calloc(1, sizeof(*v));
	const char *p = out;

	*n = 0;
	while (*p) {
		const char *end = strstr(p, "\n\n");
		size_t len = end ? (size_t)(end - p) + 1 : strlen(p);

		v = realloc(v, (*n + 2) * sizeof(*v));
		v[*n] = strndup(p, len);
		v[++*n] = NULL;
		p += len + (end ? 1 : 0);
	}
	return v;
}

static void free_blocks(char **v)
{
	for (size_t i = 0; v[i]; i++)
		free(v[i]);
	free(v);
}

/* The summary line of trace, parsed. */
static json_object *summary_of(const char *trace)
{
	mt_test_run_t r;
	json_object *o;

	mt_test_memtrace_in(&r, NULL, "summary", trace, "--top", "0", NULL);
	ck_assert_int_eq(r.status, 0);
	o = json_tokener_parse(r.out);
	ck_assert_ptr_nonnull(o);
	mt_test_run_release(&r);
	return o;
}

/* The block's figures are the summary's. */
static void assert_block_is_summary(const block_t *b, const char *trace)
{
	json_object *s = summary_of(trace);

	ck_assert_uint_eq(b->events, mt_test_json_u64(s, "events"));
	ck_assert_uint_eq(b->live_bytes, mt_test_json_u64(s, "live_bytes"));
	ck_assert_uint_eq(b->live_blocks, mt_test_json_u64(s, "live_allocations"));
	ck_assert_uint_eq(b->peak_bytes, mt_test_json_u64(s, "peak_live_bytes"));
	ck_assert_uint_eq(b->bytes_allocated, mt_test_json_u64(s, "bytes_allocated"));
	ck_assert_uint_eq(b->allocations, mt_test_json_u64(s, "allocations"));
	ck_assert_uint_eq(b->frees, mt_test_json_u64(s, "frees"));
	json_object_put(s);
}

/* A process of the test's: argv with extra environment entries, stdout
 * and stderr to files (NULL: /dev/null).  SIGALRM ends it after
 * HANG_GUARD_S seconds (the alarm survives exec). */
static pid_t spawn(char *const argv[], char *const env[], const char *out,
		   const char *err)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		int o = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err ? err : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (in < 0 || o < 0 || e < 0)
			_exit(126);
		dup2(in, 0);
		dup2(o, 1);
		dup2(e, 2);
		for (size_t i = 0; env && env[i]; i++)
			putenv(env[i]);
		alarm(HANG_GUARD_S);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static int wait_status(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		ck_assert_int_eq(errno, EINTR);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Run `memtrace top ARGS...` in the background (NULL-terminated args). */
static pid_t spawn_top(const char *out, const char *err, const char *const args[])
{
	char *argv[16];
	size_t n = 0;

	argv[n++] = mt_test_memtrace();
	argv[n++] = (char *)"top";
	for (size_t i = 0; args[i]; i++) {
		ck_assert_uint_lt(n, 15);
		argv[n++] = (char *)args[i];
	}
	argv[n] = NULL;
	{
		pid_t pid = spawn(argv, NULL, out, err);

		free(argv[0]);
		return pid;
	}
}

START_TEST(test_top_follows_a_running_process_to_its_stop)
{
	char *dir = mt_test_scratch();
	char *trace = mt_test_path(dir, "trace.jsonl.zst");
	char *wl = mt_test_workload("wl_steps");
	/* 4 s: the collector writes a frame a second, so three or so
	 * arrive while it runs. */
	char *argv[] = { wl, (char *)"40", NULL };
	char pre[4096], outenv[4096];
	char *env[] = { pre, outenv, NULL };
	mt_test_run_t r;
	pid_t pid;
	char **blocks;
	size_t n, running = 0;
	uint64_t first_live = 0;
	int grew = 0;
	block_t b;

	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s/libmtpreload.so", mt_test_build_dir());
	snprintf(outenv, sizeof(outenv), "MEMTRACE_OUTPUT=%s", trace);
	pid = spawn(argv, env, NULL, NULL);
	/* top is given the file as soon as it exists, before the
	 * collector's first flush has written anything. */
	for (int i = 0; i < HANG_GUARD_S * 100 && !mt_test_exists(trace); i++)
		mt_test_sleep_ms(10);
	ck_assert_msg(mt_test_exists(trace), "no trace at %s", trace);
	mt_test_memtrace_in(&r, NULL, "top", trace, "--interval", "0.2", NULL);
	ck_assert_int_eq(wait_status(pid), 0);
	ck_assert_msg(r.status == 0, "status %d, stderr: %s", r.status, r.err);
	ck_assert_str_eq(r.err, "");
	blocks = split_blocks(r.out, &n);
	ck_assert_uint_ge(n, 2);
	for (size_t i = 0; i + 1 < n; i++) {
		parse_block(blocks[i], &b);
		ck_assert_str_eq(b.state, "running");
		if (running++ == 0)
			first_live = b.live_bytes;
		else if (b.live_bytes > first_live)
			grew = 1;
	}
	ck_assert_msg(running >= 2 && grew,
		      "%zu refreshes while it ran, live bytes grew: %d\n%s",
		      running, grew, r.out);
	parse_block(blocks[n - 1], &b);
	ck_assert_str_eq(b.state, "stopped (trace.stop, exit)");
	ck_assert_int_eq(b.caveated, 0);
	ck_assert_uint_eq(b.live_bytes, 40u << 20);
	assert_block_is_summary(&b, trace);
	ck_assert_ptr_nonnull(strstr(blocks[n - 1], ", stack 1: grow at "));
	free_blocks(blocks);
	mt_test_run_release(&r);
	free(wl);
	free(trace);
}
END_TEST

/* A trace of n allocations of 1000 + i bytes, every third one freed,
 * that names pid (0: none) and stops when stop is set. */
static mt_test_bytes_t make_trace(int n, int64_t pid, int stop)
{
	mt_test_bytes_t t = { 0 };
	uint64_t seq = 1;

	if (pid)
		mt_test_bytes_addf(&t, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"trace.start\",\"pid\":%" PRId64 "}\n",
				   seq++, pid);
	else
		mt_test_bytes_addf(&t, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"trace.start\"}\n", seq++);
	mt_test_bytes_addf(&t, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"allocator\",\"allocator_id\":0}\n", seq++);
	mt_test_bytes_addf(&t, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"frame\",\"frame_id\":1,\"ip\":\"0x401000\",\"symbol\":\"work\"}\n", seq++);
	mt_test_bytes_addf(&t, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"stack\",\"stack_id\":1,\"frames\":[1]}\n", seq++);
	for (int i = 0; i < n; i++) {
		mt_test_bytes_addf(&t, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x%x\",\"size\":%d,\"fn\":\"malloc\",\"stack\":1,\"tid\":7,\"t\":%d}\n",
				   seq++, 0x10000 + 0x1000 * i, 1000 + i, 1000 * (i + 1));
		if (i % 3 == 2)
			mt_test_bytes_addf(&t, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"0x%x\",\"tid\":7,\"t\":%d}\n",
					   seq++, 0x10000 + 0x1000 * i, 1000 * (i + 1) + 500);
	}
	if (stop)
		mt_test_bytes_addf(&t, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"trace.stop\",\"reason\":\"exit\"}\n", seq++);
	return t;
}

typedef enum { PLAIN, ZSTD, GZIP } format_t;

/* plain as written in format: one zstd frame, one gzip member. */
static mt_test_bytes_t encode(const mt_test_bytes_t *plain, format_t f)
{
	mt_test_bytes_t z = { 0 };

	if (f == PLAIN) {
		mt_test_bytes_add(&z, plain->data, plain->len);
	} else if (f == ZSTD) {
		size_t cap = ZSTD_compressBound(plain->len), got;
		char *buf = malloc(cap);

		got = ZSTD_compress(buf, cap, plain->data, plain->len, 3);
		ck_assert(!ZSTD_isError(got));
		mt_test_bytes_add(&z, buf, got);
		free(buf);
	} else {
		z_stream s = { 0 };
		uLong cap;
		char *buf;

		ck_assert_int_eq(deflateInit2(&s, 6, Z_DEFLATED, 16 + MAX_WBITS, 8,
					      Z_DEFAULT_STRATEGY), Z_OK);
		cap = deflateBound(&s, plain->len);
		buf = malloc(cap);
		s.next_in = (Bytef *)plain->data;
		s.avail_in = (uInt)plain->len;
		s.next_out = (Bytef *)buf;
		s.avail_out = (uInt)cap;
		ck_assert_int_eq(deflate(&s, Z_FINISH), Z_STREAM_END);
		mt_test_bytes_add(&z, buf, cap - s.avail_out);
		deflateEnd(&s);
		free(buf);
	}
	return z;
}

static void append_file(const char *path, const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_APPEND);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
	close(fd);
}

/*
 * Write the first part of a trace in format f, cut inside a line (plain),
 * a frame (zstd) or a member (gzip); start top on it with a short
 * interval; append the rest once top has refreshed; top reads to the
 * trace.stop and exits 0, with the summary's figures and no error.
 */
static void follow_cut(format_t f)
{
	char *dir = mt_test_scratch();
	const char *name = f == ZSTD ? "trace.jsonl.zst" : f == GZIP ? "trace.jsonl.gz" : "trace.jsonl";
	char *trace = mt_test_path(dir, name);
	char *out = mt_test_path(dir, "top.out");
	char *err = mt_test_path(dir, "top.err");
	mt_test_bytes_t plain = make_trace(3000, getpid(), 1);
	mt_test_bytes_t enc = encode(&plain, f);
	size_t cut = enc.len / 2;
	const char *args[] = { trace, "--interval", "0.05", NULL };
	pid_t pid;
	size_t n, len = 0;
	char *text, **blocks;
	block_t b;

	mt_test_write(trace, enc.data, cut);
	pid = spawn_top(out, err, args);
	/* A refresh of the first part (or a generous while) before the
	 * rest comes. */
	for (int i = 0; i < 200; i++) {
		text = mt_test_read(out, &len);
		free(text);
		if (len)
			break;
		mt_test_sleep_ms(25);
	}
	append_file(trace, enc.data + cut, enc.len - cut);
	ck_assert_int_eq(wait_status(pid), 0);
	text = mt_test_read(err, &len);
	ck_assert_str_eq(text, "");
	free(text);
	text = mt_test_read(out, &len);
	blocks = split_blocks(text, &n);
	/* a refresh of the cut trace, then the final figures */
	ck_assert_msg(n >= 2, "%zu blocks:\n%s", n, text);
	parse_block(blocks[0], &b);
	ck_assert_str_eq(b.state, "running");
	parse_block(blocks[n - 1], &b);
	ck_assert_str_eq(b.state, "stopped (trace.stop, exit)");
	ck_assert_int_eq(b.caveated, 0);
	assert_block_is_summary(&b, trace);
	free_blocks(blocks);
	free(text);
	free(plain.data);
	free(enc.data);
	free(err);
	free(out);
	free(trace);
}

START_TEST(test_a_zstd_trace_cut_mid_frame_reads_on_when_completed)
{
	follow_cut(ZSTD);
}
END_TEST

START_TEST(test_a_gzip_trace_cut_mid_member_reads_on_when_completed)
{
	follow_cut(GZIP);
}
END_TEST

START_TEST(test_a_plain_trace_cut_mid_line_reads_on_when_completed)
{
	follow_cut(PLAIN);
}
END_TEST

/* --once on a finished trace of each format: the summary's figures. */
START_TEST(test_once_on_a_finished_trace_equals_the_summary)
{
	static const format_t formats[] = { PLAIN, ZSTD, GZIP };
	static const char *const names[] = { "t.jsonl", "t.jsonl.zst", "t.jsonl.gz" };

	for (size_t i = 0; i < 3; i++) {
		char *dir = mt_test_scratch();
		char *trace = mt_test_path(dir, names[i]);
		mt_test_bytes_t plain = make_trace(500, 0, 1);
		mt_test_bytes_t enc = encode(&plain, formats[i]);
		mt_test_run_t r;
		char **blocks;
		size_t n;
		block_t b;

		mt_test_write(trace, enc.data, enc.len);
		mt_test_memtrace_in(&r, NULL, "top", trace, "--once", NULL);
		ck_assert_msg(r.status == 0, "%s: status %d: %s", names[i], r.status, r.err);
		blocks = split_blocks(r.out, &n);
		ck_assert_uint_eq(n, 1);
		parse_block(blocks[0], &b);
		ck_assert_str_eq(b.state, "stopped (trace.stop, exit)");
		assert_block_is_summary(&b, trace);
		ck_assert_ptr_nonnull(strstr(blocks[0], ", stack 1: work"));
		free_blocks(blocks);
		mt_test_run_release(&r);
		free(plain.data);
		free(enc.data);
		free(trace);
	}
}
END_TEST

/* top reads the trace once, line 1 included: a FIFO gives its bytes to
 * one read only, and top following one fed a finished trace reads it to
 * its trace.stop and prints the figures of that trace, once (a top that
 * read line 1 apart, for the pid, then began its pass again, would wait
 * for a second writer, and the writer die of SIGPIPE).  Followed, not
 * --once: a pipe's reads stop short wherever the writer is, and --once
 * would end there; the long interval keeps a slow machine from printing
 * a view before the stop. */
START_TEST(test_top_reads_the_trace_once)
{
	char *dir = mt_test_scratch();
	char *fifo = mt_test_path(dir, "t.fifo"), *file = mt_test_path(dir, "t.jsonl");
	char *out = mt_test_path(dir, "out.txt");
	const char *const args[] = { fifo, "--interval", "60", NULL };
	mt_test_bytes_t plain = make_trace(500, 0, 1);
	char *text, **blocks;
	size_t n, len;
	pid_t top;
	block_t b;
	int fd;

	mt_test_write(file, plain.data, plain.len);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	top = spawn_top(out, NULL, args);
	fd = open(fifo, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, plain.data, plain.len), (ssize_t)plain.len);
	close(fd);
	ck_assert_int_eq(wait_status(top), 0);
	text = mt_test_read(out, &len);
	blocks = split_blocks(text, &n);
	ck_assert_uint_eq(n, 1);
	parse_block(blocks[0], &b);
	ck_assert_str_eq(b.state, "stopped (trace.stop, exit)");
	assert_block_is_summary(&b, file);
	free_blocks(blocks);
	free(text);
	free(plain.data);
	free(out);
	free(file);
	free(fifo);
}
END_TEST

/* Without --once a finished trace is printed once too. */
START_TEST(test_a_finished_trace_prints_once_and_exits)
{
	mt_test_file_t f;
	mt_test_bytes_t plain = make_trace(50, 0, 1);
	mt_test_run_t r;
	char **blocks;
	size_t n;

	mt_test_file_write(&f, plain.data, plain.len);
	mt_test_memtrace_in(&r, NULL, "top", f.path, NULL);
	ck_assert_int_eq(r.status, 0);
	blocks = split_blocks(r.out, &n);
	ck_assert_uint_eq(n, 1);
	free_blocks(blocks);
	mt_test_run_release(&r);
	free(plain.data);
	mt_test_file_done(&f);
}
END_TEST

/* The pid of a process that has ended and been reaped. */
static int64_t gone_pid(void)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(0);
	ck_assert_int_eq(wait_status(pid), 0);
	return pid;
}

START_TEST(test_a_trace_whose_process_is_gone_ends_without_stop)
{
	mt_test_file_t f;
	mt_test_bytes_t plain = make_trace(50, gone_pid(), 0);
	mt_test_run_t r;
	char **blocks;
	size_t n;
	block_t b;

	mt_test_file_write(&f, plain.data, plain.len);
	mt_test_memtrace_in(&r, NULL, "top", f.path, "--interval", "0.1", NULL);
	/* missing_stop_event: the status `check` gives it */
	ck_assert_int_eq(r.status, 1);
	blocks = split_blocks(r.out, &n);
	parse_block(blocks[n - 1], &b);
	ck_assert_ptr_nonnull(strstr(b.state, "ended without trace.stop"));
	ck_assert_int_eq(b.caveated, 1);
	ck_assert_ptr_nonnull(strstr(blocks[n - 1], "(missing_stop_event)"));
	assert_block_is_summary(&b, f.path);
	free_blocks(blocks);
	mt_test_run_release(&r);
	free(plain.data);
	mt_test_file_done(&f);
}
END_TEST

START_TEST(test_timeout_gives_up_with_its_own_status)
{
	mt_test_file_t f;
	/* The test's own pid: a process that lives on. */
	mt_test_bytes_t plain = make_trace(10, getpid(), 0);
	mt_test_run_t r;

	mt_test_file_write(&f, plain.data, plain.len);
	mt_test_memtrace_in(&r, NULL, "top", f.path, "--interval", "0.1",
			    "--timeout", "0.3", NULL);
	ck_assert_int_eq(r.status, 75);
	ck_assert_ptr_nonnull(strstr(r.err, "--timeout"));
	ck_assert_ptr_nonnull(strstr(r.out, ": gave up waiting"));
	mt_test_run_release(&r);
	free(plain.data);
	mt_test_file_done(&f);
}
END_TEST

START_TEST(test_a_missing_trace_is_an_error)
{
	mt_test_run_t r;

	mt_test_memtrace_in(&r, NULL, "top", "/nonexistent/trace.jsonl", NULL);
	ck_assert_int_eq(r.status, 3);
	ck_assert_str_eq(r.out, "");
	ck_assert_str_eq(r.err, "memtrace: cannot read '/nonexistent/trace.jsonl': "
				"No such file or directory\n");
	mt_test_run_release(&r);
}
END_TEST

START_TEST(test_not_a_trace_is_not_evidence)
{
	mt_test_file_t f;
	mt_test_run_t r;

	mt_test_file_write(&f, "hello, world\n", 13);
	mt_test_memtrace_in(&r, NULL, "top", f.path, "--interval", "0.1", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_str_eq(r.out, "");
	ck_assert_ptr_nonnull(strstr(r.err, "is not valid memtrace evidence"));
	mt_test_run_release(&r);
	mt_test_file_done(&f);
}
END_TEST

START_TEST(test_bad_options_are_usage_errors)
{
	static const char *const bad[][2] = {
		{ "--interval", "0" }, { "--interval", "1s" }, { "--interval", "-1" },
		{ "--timeout", "0.0" }, { "--timeout", ".5" }, { "--top", "ten" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		mt_test_run_t r;

		mt_test_memtrace_in(&r, NULL, "top", "trace.jsonl", bad[i][0],
				    bad[i][1], NULL);
		ck_assert_msg(r.status == 64, "%s %s: status %d", bad[i][0],
			      bad[i][1], r.status);
		mt_test_run_release(&r);
	}
}
END_TEST

/* ---- the reader's follow mode, without a clock ---- */

/* A writer the reader's wait plays: on its first call it appends the
 * rest of the file (or overwrites at an offset), on the next it ends. */
typedef struct {
	const char *path;
	const char *rest;
	size_t len;
	off_t at; /* -1: append */
	int calls;
	uint64_t bytes_read[4];
} writer_t;

static int writer_wait(void *ctx, uint64_t bytes_read)
{
	writer_t *w = ctx;

	if (w->calls < 4)
		w->bytes_read[w->calls] = bytes_read;
	if (w->calls++)
		return 0;
	if (w->at < 0) {
		append_file(w->path, w->rest, w->len);
	} else {
		int fd = open(w->path, O_WRONLY);

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(pwrite(fd, w->rest, w->len, w->at), (ssize_t)w->len);
		close(fd);
	}
	return 1;
}

static size_t count_lines(const char *s, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += s[i] == '\n';
	return n;
}

/* Every line of a trace whose zstd frame (gzip member) the writer had cut
 * when the reader reached it: read whole, in order, not cut, not
 * corrupt. */
static void reader_resumes(format_t f)
{
	char *dir = mt_test_scratch();
	char *path = mt_test_path(dir, "trace");
	mt_test_bytes_t plain = make_trace(3000, 0, 1);
	mt_test_bytes_t enc = encode(&plain, f);
	size_t cut = enc.len / 2, lines = 0, bytes = 0;
	writer_t w = { path, enc.data + cut, enc.len - cut, -1, 0, { 0 } };
	const char *unit;
	uint64_t at;
	mt_reader_t r;
	mt_line_t line;
	int got;

	mt_test_write(path, enc.data, cut);
	ck_assert_int_eq(mt_reader_open(&r, path), MT_OK);
	mt_reader_follow(&r, writer_wait, &w);
	while ((got = mt_reader_next(&r, &line)) == 1) {
		mt_quiet(line.terminated, "line %" PRIu64 " is cut", line.number);
		mt_quiet_mem_eq(line.data, plain.data + bytes, line.len);
		bytes += line.len + 1;
		lines++;
	}
	ck_assert_int_eq(got, 0);
	ck_assert_uint_eq(lines, count_lines(plain.data, plain.len));
	ck_assert_int_eq(mt_reader_cut(&r, &unit, &at), 0);
	ck_assert_int_eq(w.calls, 2);
	ck_assert_uint_eq(w.bytes_read[0], cut);
	ck_assert_uint_eq(w.bytes_read[1], enc.len);
	mt_reader_release(&r);
	free(plain.data);
	free(enc.data);
	free(path);
}

START_TEST(test_reader_follow_resumes_a_zstd_frame_cut_by_the_writer)
{
	reader_resumes(ZSTD);
}
END_TEST

START_TEST(test_reader_follow_resumes_a_gzip_member_cut_by_the_writer)
{
	reader_resumes(GZIP);
}
END_TEST

/* A plain trace's NUL bytes after its content are not read while the
 * file is followed: the line later written over them is. */
START_TEST(test_reader_follow_reads_no_zero_padding_until_content_follows)
{
	static const char head[] = "{\"line\":1}\n\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0";
	static const char next[] = "{\"line\":2}\n";
	char *dir = mt_test_scratch();
	char *path = mt_test_path(dir, "trace.jsonl");
	writer_t w = { path, next, sizeof(next) - 1, 11, 0, { 0 } };
	mt_reader_t r;
	mt_line_t line;

	mt_test_write(path, head, sizeof(head) - 1);
	ck_assert_int_eq(mt_reader_open(&r, path), MT_OK);
	mt_reader_follow(&r, writer_wait, &w);
	ck_assert_int_eq(mt_reader_next(&r, &line), 1);
	ck_assert_int_eq((int)line.len, 10);
	ck_assert_int_eq(mt_reader_next(&r, &line), 1);
	ck_assert_int_eq(line.terminated, 1);
	ck_assert(line.len == 10 && !memcmp(line.data, next, 10));
	ck_assert_int_eq(mt_reader_next(&r, &line), 0);
	/* the NUL bytes left after it are padding, as in a trace read whole */
	ck_assert_int_eq(r.zero_padded, 1);
	ck_assert_int_eq(w.calls, 2);
	mt_reader_release(&r);
	free(path);
}
END_TEST

/* Every allocation failure of `top --once`: exit 4, the message, nothing
 * on stdout; the sweep ends where no allocation is left to fail. */
START_TEST(test_every_allocation_failure_exits_4)
{
	mt_test_file_t f;
	mt_test_bytes_t plain = make_trace(100, 0, 1);
	uint64_t n;

	mt_test_file_write(&f, plain.data, plain.len);
	for (n = 1; n < 5000; n++) {
		char fail[64];
		char *env[] = { fail, NULL };
		const char *args[] = { "top", f.path, "--once", NULL };
		mt_test_run_t r;

		snprintf(fail, sizeof(fail), "MEMTRACE_ANALYZER_FAIL_AT=%" PRIu64, n);
		mt_test_memtrace_in_argv(&r, NULL, env, args);
		if (r.status == 0) {
			mt_test_run_release(&r);
			break;
		}
		mt_quiet(r.status == 4, "N=%" PRIu64 ": status %d: %s", n,
			 r.status, r.err);
		ck_assert_str_eq(r.err, "memtrace: out of memory\n");
		ck_assert_str_eq(r.out, "");
		mt_test_run_release(&r);
	}
	ck_assert_uint_gt(n, 10);
	ck_assert_uint_lt(n, 5000);
	free(plain.data);
	mt_test_file_done(&f);
}
END_TEST

/* On a terminal a view is drawn in place: home, each line cut to the
 * width (a UTF-8 character whole) and cleared to its end, no more lines
 * than the height less one, the rest of the screen cleared. */
START_TEST(test_a_terminal_frame_redraws_in_place)
{
	static const char view[] = "abc\nd\xc3\xa9" "fgh\nxyz\n";
	mt_buf_t in = MT_BUF_INIT, out = MT_BUF_INIT;

	ck_assert_int_eq(mt_buf_add_str(&in, view), MT_OK);
	ck_assert_int_eq(mt_top_frame(&in, 4, 3, &out), MT_OK);
	ck_assert_str_eq(out.data, "\033[Habc\033[K\nd\xc3\xa9" "f\033[K\n\033[J");
	mt_buf_reset(&out);
	ck_assert_int_eq(mt_top_frame(&in, 0, 0, &out), MT_OK);
	ck_assert_str_eq(out.data, "\033[Habc\033[K\nd\xc3\xa9" "fgh\033[K\nxyz\033[K\n\033[J");
	mt_buf_release(&out);
	mt_buf_release(&in);
}
END_TEST

/* Every site top lists ("stack N: LABEL") is named as the report names
 * it ("     site: LABEL" above "     stack N: ..."), with and without an
 * --alloc-fn: its first frame in the program's own code, not the
 * allocator's frame. */
static void assert_top_labels_are_the_reports(const char *trace, const char *pattern)
{
	mt_test_run_t top, rep;
	const char *p;
	size_t listed = 0;

	if (pattern) {
		mt_test_memtrace_in(&top, NULL, "top", "--once", "--alloc-fn", pattern,
				    trace, NULL);
		mt_test_memtrace_in(&rep, NULL, "report", "--alloc-fn", pattern, trace, NULL);
	} else {
		mt_test_memtrace_in(&top, NULL, "top", "--once", trace, NULL);
		mt_test_memtrace_in(&rep, NULL, "report", trace, NULL);
	}
	mt_quiet(top.status == 0 && rep.status == 0, "top %d, report %d: %s%s",
		 top.status, rep.status, top.err, rep.err);
	for (p = strstr(top.out, ", stack "); p; p = strstr(p, ", stack ")) {
		unsigned long long id;
		int n = 0;
		const char *eol;
		char *want = NULL;

		ck_assert_int_eq(sscanf(p, ", stack %llu: %n", &id, &n), 1);
		p += n;
		eol = strchr(p, '\n');
		ck_assert_ptr_nonnull(eol);
		ck_assert(asprintf(&want, "\n     site: %.*s\n     stack %llu: ",
				   (int)(eol - p), p, id) > 0);
		mt_quiet(strstr(rep.out, want) != NULL, "top names stack %llu %.*s, "
			 "the report otherwise:\n%.3000s", id, (int)(eol - p), p, rep.out);
		free(want);
		listed++;
	}
	mt_quiet(listed >= 3, "top lists %zu sites:\n%s", listed, top.out);
	mt_test_run_release(&top);
	mt_test_run_release(&rep);
}

START_TEST(test_top_names_each_site_as_the_report_does)
{
	char *trace = mt_test_fixture("report/app.jsonl");
	mt_test_run_t r;

	assert_top_labels_are_the_reports(trace, NULL);
	assert_top_labels_are_the_reports(trace, "^load_config$");
	mt_test_memtrace_in(&r, NULL, "top", "--once", "--alloc-fn", "(", trace, NULL);
	mt_quiet(r.status == 64 && strstr(r.err, "--alloc-fn"),
		 "a bad pattern: %d %s", r.status, r.err);
	mt_test_run_release(&r);
	free(trace);
}
END_TEST

Suite *mt_suite_top(void)
{
	Suite *s = suite_create("top");
	TCase *tc = tcase_create("top");

	tcase_add_test(tc, test_top_follows_a_running_process_to_its_stop);
	tcase_add_test(tc, test_a_zstd_trace_cut_mid_frame_reads_on_when_completed);
	tcase_add_test(tc, test_a_gzip_trace_cut_mid_member_reads_on_when_completed);
	tcase_add_test(tc, test_a_plain_trace_cut_mid_line_reads_on_when_completed);
	tcase_add_test(tc, test_once_on_a_finished_trace_equals_the_summary);
	tcase_add_test(tc, test_a_finished_trace_prints_once_and_exits);
	tcase_add_test(tc, test_top_reads_the_trace_once);
	tcase_add_test(tc, test_a_trace_whose_process_is_gone_ends_without_stop);
	tcase_add_test(tc, test_timeout_gives_up_with_its_own_status);
	tcase_add_test(tc, test_a_missing_trace_is_an_error);
	tcase_add_test(tc, test_not_a_trace_is_not_evidence);
	tcase_add_test(tc, test_bad_options_are_usage_errors);
	tcase_add_test(tc, test_top_names_each_site_as_the_report_does);
	tcase_add_test(tc, test_reader_follow_resumes_a_zstd_frame_cut_by_the_writer);
	tcase_add_test(tc, test_reader_follow_resumes_a_gzip_member_cut_by_the_writer);
	tcase_add_test(tc, test_reader_follow_reads_no_zero_padding_until_content_follows);
	tcase_add_test(tc, test_every_allocation_failure_exits_4);
	tcase_add_test(tc, test_a_terminal_frame_redraws_in_place);
	suite_add_tcase(s, tc);
	return s;
}
