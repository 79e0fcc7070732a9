/*
 * check_oom: the seed's "survives every allocation failure", in process.
 *
 * For each command that writes a file (summary -o, capture --append,
 * repetition --index 1 and --index 2), over a trace with allocators,
 * frames, stacks, allocations, reallocations and frees: make the Nth
 * allocation fail for N = 1, 2, ... and run mt_cli_main().  While it
 * fails it must exit 4 with a message, leave the directory exactly as it
 * was (no output, no temporary file, an appended file byte-identical) and
 * leak nothing (mt_mem_outstanding() back where it was); the sweep ends
 * when N passes the command's last allocation, and that run's outputs
 * must equal an unfailed run's.  The sticky variant fails every
 * allocation from the Nth on, so the cleanup paths cannot allocate either.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mt_test.h"
#include "../analyzer/cmd/mt_cli.h"
#include "../analyzer/base/mt_error.h"
#include "../analyzer/base/mt_mem.h"

/* No command of these makes anywhere near this many allocations. */
#define MAX_SWEEP 100000
#define MAX_REPORTED 12

/* ---- the trace ---- */

static char *trace_text(size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *t = malloc(cap);
	uint64_t seq = 1;

	mt_quiet_ptr_nonnull(t);
#define LINE(...)                                                            \
	do {                                                                 \
		n += (size_t)snprintf(t + n, cap - n, "{\"v\":1,\"seq\":%" PRIu64 \
				      ",", seq++);                           \
		n += (size_t)snprintf(t + n, cap - n, __VA_ARGS__);          \
		t[n++] = '\n';                                               \
		ck_assert_uint_lt(n, cap - 512);                             \
	} while (0)
	/* argv and the spaced frames below go through json-c. */
	LINE("\"kind\":\"trace.start\",\"pid\":4242,\"argv\":[\"oom\",\"-x\"],\"stack_depth\":8}");
	LINE("\"kind\":\"allocator\",\"allocator_id\":0,\"name\":\"libc\"}");
	LINE("\"kind\":\"allocator\",\"allocator_id\":1,\"name\":\"arena \\\"two\\\"\"}");
	for (int f = 1; f <= 6; f++)
		LINE("\"kind\":\"frame\",\"frame_id\":%d,\"ip\":\"0x40%d000\","
		     "\"symbol\":\"fn_%d\",\"offset\":\"0x%x\",\"module\":\"/bin/oom\","
		     "\"module_offset\":%d}", f, f, f, f * 16, f * 4096);
	LINE("\"kind\":\"frame\",\"frame_id\":7,\"ip\":\"0x7f0000001000\"}");
	/* json-c's frames first, so that it allocates their storage. */
	LINE("\"kind\":\"stack\",\"stack_id\":2,\"frames\":[4, 3, 7]}");
	LINE("\"kind\":\"stack\",\"stack_id\":1,\"frames\":[1,2,3]}");
	LINE("\"kind\":\"stack\",\"stack_id\":3,\"frames\":[5,6,2,3]}");
	LINE("\"kind\":\"stack\",\"stack_id\":4,\"frames\":[7]}");
	/* Enough live blocks, sites and threads to grow every table. */
	for (int i = 0; i < 60; i++)
		LINE("\"kind\":\"alloc\",\"allocator_id\":%d,\"ptr\":\"0x%x\","
		     "\"size\":%d,\"fn\":\"%s\",\"stack\":%d,\"tid\":%d,\"t\":%d}",
		     i % 7 == 0, 0x10000 + i * 64, 8 + i * 3,
		     i % 3 ? "malloc" : "calloc", 1 + i % 4, 100 + i % 5, i * 10);
	LINE("\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x90000\",\"size\":5,"
	     "\"fn\":\"malloc\",\"tid\":100}");
	for (int i = 0; i < 60; i += 3)
		LINE("\"kind\":\"free\",\"allocator_id\":%d,\"ptr\":\"0x%x\","
		     "\"fn\":\"free\",\"tid\":%d,\"t\":%d}",
		     i % 7 == 0, 0x10000 + i * 64, 100 + i % 5, 1000 + i);
	LINE("\"kind\":\"resize\",\"allocator_id\":0,\"ptr\":\"0x%x\",\"size\":4096,"
	     "\"fn\":\"realloc\",\"stack\":3,\"tid\":101,\"t\":2000}", 0x10000 + 64);
	LINE("\"kind\":\"remap\",\"allocator_id\":0,\"ptr\":\"0x%x\","
	     "\"new_ptr\":\"0x7f00000a0000\",\"size\":65536,\"fn\":\"realloc\","
	     "\"stack\":2,\"tid\":102,\"t\":2100}", 0x10000 + 2 * 64);
	LINE("\"kind\":\"alloc.fail\",\"allocator_id\":0,\"size\":1099511627776,"
	     "\"fn\":\"malloc\",\"stack\":4,\"tid\":103,\"t\":2200}");
	LINE("\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"0xdead0\",\"tid\":104}");
	/* An alloc over a live block, freed at once. */
	LINE("\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"0x90000\",\"size\":7,"
	     "\"fn\":\"malloc\",\"stack\":1,\"tid\":105}");
	LINE("\"kind\":\"free\",\"allocator_id\":0,\"ptr\":\"0x90000\",\"tid\":105}");
	LINE("\"kind\":\"trace.stop\",\"reason\":\"exit\",\"dropped\":0,\"t\":3000}");
#undef LINE
	*len = n;
	return t;
}

/* ---- a directory's files, to compare and restore ---- */

#define MAX_ENTRIES 16

typedef struct {
	char *name;
	char *data;
	size_t len;
} entry_t;

typedef struct {
	entry_t e[MAX_ENTRIES];
	int n;
} snap_t;

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const entry_t *)a)->name, ((const entry_t *)b)->name);
}

static void snap_take(snap_t *s, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	mt_quiet(d != NULL, "opendir %s: %s", dir, strerror(errno));
	s->n = 0;
	while ((de = readdir(d))) {
		char *path;
		entry_t *e;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		ck_assert_int_lt(s->n, MAX_ENTRIES);
		e = &s->e[s->n++];
		e->name = strdup(de->d_name);
		mt_quiet_ptr_nonnull(e->name);
		path = mt_test_path(dir, de->d_name);
		e->data = mt_test_read(path, &e->len);
		mt_quiet(e->data != NULL, "cannot read %s", path);
		free(path);
	}
	closedir(d);
	qsort(s->e, (size_t)s->n, sizeof(s->e[0]), entry_cmp);
}

static void snap_free(snap_t *s)
{
	for (int i = 0; i < s->n; i++) {
		free(s->e[i].name);
		free(s->e[i].data);
	}
	s->n = 0;
}

static const entry_t *snap_find(const snap_t *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->e[i].name, name))
			return &s->e[i];
	return NULL;
}

/* Describe how the directory now differs from want into why; 0 when it
 * does not. */
static int snap_differs(const snap_t *want, const snap_t *got, char *why,
			size_t cap)
{
	for (int i = 0; i < got->n; i++) {
		const entry_t *w = snap_find(want, got->e[i].name);

		if (!w) {
			snprintf(why, cap, "%s was left behind", got->e[i].name);
			return 1;
		}
		if (w->len != got->e[i].len ||
		    memcmp(w->data, got->e[i].data, w->len)) {
			snprintf(why, cap, "%s holds %zu bytes:\n%.*s\nwant %zu:\n%.*s",
				 w->name, got->e[i].len, (int)got->e[i].len,
				 got->e[i].data, w->len, (int)w->len, w->data);
			return 1;
		}
	}
	for (int i = 0; i < want->n; i++)
		if (!snap_find(got, want->e[i].name)) {
			snprintf(why, cap, "%s is gone", want->e[i].name);
			return 1;
		}
	return 0;
}

/* Put the directory back as want has it. */
static void snap_restore(const snap_t *want, const char *dir)
{
	snap_t now;

	snap_take(&now, dir);
	for (int i = 0; i < now.n; i++) {
		const entry_t *w = snap_find(want, now.e[i].name);
		char *path = mt_test_path(dir, now.e[i].name);

		if (!w)
			mt_quiet_int_eq(unlink(path), 0);
		free(path);
	}
	for (int i = 0; i < want->n; i++) {
		char *path = mt_test_path(dir, want->e[i].name);

		mt_test_write(path, want->e[i].data, want->e[i].len);
		free(path);
	}
	snap_free(&now);
}

/* ---- running the command ---- */

typedef struct {
	char *dir;
	char *args[16];
	int argc;
	int err_fd, saved_stderr; /* stderr goes to a file meanwhile */
} cmd_t;

static void cmd_arg(cmd_t *c, const char *arg, int in_dir)
{
	ck_assert_int_lt(c->argc, 15);
	c->args[c->argc++] = in_dir ? mt_test_path(c->dir, arg) : strdup(arg);
	c->args[c->argc] = NULL;
}

/* Run the command once; a fresh argv each time, as getopt permutes it. */
static int cmd_run(cmd_t *c)
{
	char *argv[16];

	memcpy(argv, c->args, sizeof(argv));
	if (c->err_fd >= 0) {
		mt_quiet_int_eq(ftruncate(c->err_fd, 0), 0);
		mt_quiet_int_eq(lseek(c->err_fd, 0, SEEK_SET), 0);
	}
	return mt_cli_main(c->argc, argv);
}

/* What the last run wrote on stderr (malloc'd). */
static char *cmd_stderr(cmd_t *c)
{
	off_t n = lseek(c->err_fd, 0, SEEK_END);
	char *buf = malloc((size_t)n + 1);

	mt_quiet_ptr_nonnull(buf);
	mt_quiet_int_eq(pread(c->err_fd, buf, (size_t)n, 0), n);
	buf[n] = '\0';
	return buf;
}

static void cmd_init(cmd_t *c)
{
	size_t len;
	char *trace = trace_text(&len);
	char *path;

	memset(c, 0, sizeof(*c));
	c->err_fd = -1;
	c->saved_stderr = -1;
	c->dir = mt_test_scratch();
	path = mt_test_path(c->dir, "trace.jsonl");
	mt_test_write(path, trace, len);
	free(path);
	free(trace);
	cmd_arg(c, "memtrace", 0);
}

static void cmd_quiet(cmd_t *c)
{
	FILE *f = tmpfile();

	mt_quiet_ptr_nonnull(f);
	fflush(stderr);
	c->err_fd = dup(fileno(f));
	fclose(f);
	c->saved_stderr = dup(2);
	ck_assert_int_ge(c->err_fd, 0);
	ck_assert_int_ge(c->saved_stderr, 0);
	mt_quiet_int_eq(dup2(c->err_fd, 2), 2);
}

static void cmd_release(cmd_t *c)
{
	if (c->saved_stderr >= 0) {
		dup2(c->saved_stderr, 2);
		close(c->saved_stderr);
	}
	if (c->err_fd >= 0)
		close(c->err_fd);
	for (int i = 0; i < c->argc; i++)
		free(c->args[i]);
}

/* ---- the sweep ---- */

static void report(char *buf, size_t cap, int *count, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void report(char *buf, size_t cap, int *count, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if ((*count)++ >= MAX_REPORTED || n + 2 >= cap)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, cap - n, fmt, ap);
	va_end(ap);
	n = strlen(buf);
	if (n + 1 < cap) {
		buf[n] = '\n';
		buf[n + 1] = '\0';
	}
}

/*
 * Sweep c's command over every allocation failure.  The directory as it is
 * now is what a failed run must leave; an unfailed run gives the outputs
 * the last run of the sweep must give.
 */
static void sweep(cmd_t *c, int sticky)
{
	static char problems[16384];
	snap_t pre, ref, now;
	uint64_t calls_ref, n;
	int64_t before;
	int rc, count = 0;
	char why[4096];

	problems[0] = '\0';
	cmd_quiet(c);
	snap_take(&pre, c->dir);

	/* The unfailed run: its outputs, and how many allocations it makes. */
	before = mt_mem_outstanding();
	mt_mem_fail_at(0, 0);
	rc = cmd_run(c);
	calls_ref = mt_mem_calls();
	mt_quiet(rc == 0, "the unfailed run exits %d", rc);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
	mt_quiet_uint_gt(calls_ref, 20);
	snap_take(&ref, c->dir);
	mt_quiet(snap_differs(&pre, &ref, why, sizeof(why)),
		 "the unfailed run wrote nothing");
	snap_restore(&pre, c->dir);

	for (n = 1; n <= MAX_SWEEP; n++) {
		uint64_t calls;

		before = mt_mem_outstanding();
		mt_mem_fail_at(n, sticky);
		rc = cmd_run(c);
		calls = mt_mem_calls();
		mt_mem_fail_at(0, 0);
		if (mt_mem_outstanding() != before)
			report(problems, sizeof(problems), &count,
			       "N=%" PRIu64 ": %" PRId64 " blocks leaked (exit %d)",
			       n, mt_mem_outstanding() - before, rc);
		snap_take(&now, c->dir);
		if (rc == 0) {
			/* Done only once the failure no longer happens: a
			 * failure swallowed would end the sweep early. */
			if (calls >= n)
				report(problems, sizeof(problems), &count,
				       "N=%" PRIu64 ": allocation %" PRIu64
				       " failed, yet the command exits 0", n, n);
			if (snap_differs(&ref, &now, why, sizeof(why)))
				report(problems, sizeof(problems), &count,
				       "N=%" PRIu64 ": the outputs differ from an "
				       "unfailed run's: %s", n, why);
			snap_free(&now);
			break;
		}
		if (rc != MT_EXIT_NOMEM) {
			report(problems, sizeof(problems), &count,
			       "N=%" PRIu64 ": exit %d, want %d (out of memory)",
			       n, rc, MT_EXIT_NOMEM);
		} else {
			char *err = cmd_stderr(c);

			if (!strstr(err, "out of memory"))
				report(problems, sizeof(problems), &count,
				       "N=%" PRIu64 ": exit 4 without saying so: "
				       "stderr is '%s'", n, err);
			free(err);
		}
		if (snap_differs(&pre, &now, why, sizeof(why))) {
			report(problems, sizeof(problems), &count,
			       "N=%" PRIu64 ": exit %d, but %s", n, rc, why);
			snap_restore(&pre, c->dir);
		}
		snap_free(&now);
	}
	mt_quiet(count == 0, "%s: %d problems over %" PRIu64
		 " allocation failures%s:\n%s", c->args[1], count, n,
		 sticky ? " (sticky)" : "", problems);
	/* Every one of the unfailed run's allocations was made to fail. */
	mt_quiet(n == calls_ref + 1,
		 "the sweep ended at N=%" PRIu64 "; the unfailed run "
		 "makes %" PRIu64 " allocations", n, calls_ref);
	snap_free(&pre);
	snap_free(&ref);
}

static void summary_cmd(cmd_t *c)
{
	cmd_init(c);
	cmd_arg(c, "summary", 0);
	cmd_arg(c, "trace.jsonl", 1);
	cmd_arg(c, "-o", 0);
	cmd_arg(c, "summary.jsonl", 1);
	cmd_arg(c, "--top", 0);
	cmd_arg(c, "5", 0);
}

static void capture_cmd(cmd_t *c)
{
	char *caps;
	static const char earlier[] =
		"{\"kind\":\"allocation_trace\",\"note\":\"an earlier row\"}\n";

	cmd_init(c);
	cmd_arg(c, "capture", 0);
	cmd_arg(c, "--capture", 0);
	cmd_arg(c, "trace.jsonl", 1);
	cmd_arg(c, "--summary", 0);
	cmd_arg(c, "capture.summary.jsonl", 1);
	cmd_arg(c, "--append", 0);
	cmd_arg(c, "captures.jsonl", 1);
	/* The row goes after the rows already there. */
	caps = mt_test_path(c->dir, "captures.jsonl");
	mt_test_write(caps, earlier, strlen(earlier));
	free(caps);
}

static void repetition_cmd(cmd_t *c, const char *index)
{
	cmd_init(c);
	cmd_arg(c, "repetition", 0);
	cmd_arg(c, "--capture", 0);
	cmd_arg(c, "trace.jsonl", 1);
	cmd_arg(c, "--out", 0);
	cmd_arg(c, "repetitions.jsonl", 1);
	cmd_arg(c, "--index", 0);
	cmd_arg(c, index, 0);
}

/* Repetition 2 appends to what repetition 1 wrote. */
static void repetition_second_cmd(cmd_t *c)
{
	char *path;

	repetition_cmd(c, "1");
	mt_quiet_int_eq(cmd_run(c), 0);
	free(c->args[c->argc - 1]);
	c->args[c->argc - 1] = strdup("2");
	mt_quiet_ptr_nonnull(c->args[c->argc - 1]);
	path = mt_test_path(c->dir, "repetitions.jsonl");
	ck_assert(mt_test_exists(path));
	free(path);
}

START_TEST(test_summary_survives_every_allocation_failure)
{
	cmd_t c;

	summary_cmd(&c);
	sweep(&c, 0);
	cmd_release(&c);
}
END_TEST

START_TEST(test_summary_survives_sticky_allocation_failure)
{
	cmd_t c;

	summary_cmd(&c);
	sweep(&c, 1);
	cmd_release(&c);
}
END_TEST

START_TEST(test_capture_survives_every_allocation_failure)
{
	cmd_t c;

	capture_cmd(&c);
	sweep(&c, 0);
	cmd_release(&c);
}
END_TEST

START_TEST(test_capture_survives_sticky_allocation_failure)
{
	cmd_t c;

	capture_cmd(&c);
	sweep(&c, 1);
	cmd_release(&c);
}
END_TEST

START_TEST(test_repetition_first_survives_every_allocation_failure)
{
	cmd_t c;

	repetition_cmd(&c, "1");
	sweep(&c, 0);
	cmd_release(&c);
}
END_TEST

START_TEST(test_repetition_first_survives_sticky_allocation_failure)
{
	cmd_t c;

	repetition_cmd(&c, "1");
	sweep(&c, 1);
	cmd_release(&c);
}
END_TEST

START_TEST(test_repetition_append_survives_every_allocation_failure)
{
	cmd_t c;

	repetition_second_cmd(&c);
	sweep(&c, 0);
	cmd_release(&c);
}
END_TEST

START_TEST(test_repetition_append_survives_sticky_allocation_failure)
{
	cmd_t c;

	repetition_second_cmd(&c);
	sweep(&c, 1);
	cmd_release(&c);
}
END_TEST

Suite *mt_suite_oom(void)
{
	Suite *s = suite_create("oom");
	TCase *tc = tcase_create("every_allocation_failure");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_summary_survives_every_allocation_failure);
	tcase_add_test(tc, test_summary_survives_sticky_allocation_failure);
	tcase_add_test(tc, test_capture_survives_every_allocation_failure);
	tcase_add_test(tc, test_capture_survives_sticky_allocation_failure);
	tcase_add_test(tc, test_repetition_first_survives_every_allocation_failure);
	tcase_add_test(tc, test_repetition_first_survives_sticky_allocation_failure);
	tcase_add_test(tc, test_repetition_append_survives_every_allocation_failure);
	tcase_add_test(tc, test_repetition_append_survives_sticky_allocation_failure);
	suite_add_tcase(s, tc);
	return s;
}
