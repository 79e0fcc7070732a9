/*
 * mt_test_trace: the trace files a traced run leaves, as the suites
 * judge them (mt_test_trace.h).  It reads files only; it never runs the
 * analyzer, whose own verdict the suites ask for separately.
 */
#include "mt_test_trace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include <zstd.h>

#include "mt_test.h"

void mt_test_run_traced(mt_test_run_t *r, char *const argv[], const char *output,
			const char *extra)
{
	char preload[4096], out[4096];
	char *env[] = { preload, out, (char *)extra, NULL };

	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s/libmtpreload.so",
		 mt_test_build_dir());
	snprintf(out, sizeof(out), "MEMTRACE_OUTPUT=%s", output);
	mt_test_run(r, argv, env);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **mt_test_traces(const char *dir, size_t *n)
{
	return mt_test_traces_ending(dir, ".jsonl", n);
}

char **mt_test_traces_ending(const char *dir, const char *ext, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t cap = 0, k = strlen(ext);

	mt_quiet(d != NULL, "cannot open '%s'", dir);
	*n = 0;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (len < k || strcmp(e->d_name + len - k, ext))
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			names = realloc(names, cap * sizeof(*names));
			mt_quiet_ptr_nonnull(names);
		}
		names[(*n)++] = strdup(e->d_name);
	}
	closedir(d);
	if (*n)
		qsort(names, *n, sizeof(*names), by_name);
	return names;
}

void mt_test_traces_release(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

char *mt_test_trace_text(const char *path, size_t *len, int whole)
{
	static const unsigned char magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
	size_t zlen, n = 0, cap = 1 << 16, r = 0;
	char *z = mt_test_read(path, &zlen), *out;
	ZSTD_DCtx *d;
	ZSTD_inBuffer in = { z, zlen, 0 };

	if (!z || zlen < sizeof(magic) || memcmp(z, magic, sizeof(magic))) {
		if (len)
			*len = z ? zlen : 0;
		return z;
	}
	out = malloc(cap);
	d = ZSTD_createDCtx();
	mt_quiet(out && d, "out of memory");
	for (;;) {
		ZSTD_outBuffer ob;

		if (cap - n < 1 << 15) {
			cap *= 2;
			out = realloc(out, cap);
			mt_quiet_ptr_nonnull(out);
		}
		ob = (ZSTD_outBuffer){ out + n, cap - n - 1, 0 };
		r = ZSTD_decompressStream(d, &ob, &in);
		mt_quiet(!ZSTD_isError(r), "%s: %s", path, ZSTD_getErrorName(r));
		n += ob.pos;
		if (in.pos == in.size && ob.pos < ob.size)
			break;
	}
	mt_quiet(!whole || r == 0, "%s ends inside a zstd frame", path);
	out[n] = '\0';
	ZSTD_freeDCtx(d);
	free(z);
	if (len)
		*len = n;
	return out;
}

json_object *mt_test_trace_start(const char *path)
{
	size_t len;
	char *data = mt_test_trace_text(path, &len, 0), *nl;
	json_object *o;

	mt_quiet(data != NULL && len > 0, "%s: missing or empty", path);
	nl = memchr(data, '\n', len);
	if (nl)
		*nl = '\0';
	o = json_tokener_parse(data);
	mt_quiet(o != NULL, "%s: its first line is not JSON", path);
	free(data);
	return o;
}

/* The last line of data[0..len), which ends in a newline, NUL-terminated
 * in place. */
static char *last_line(char *data, size_t len)
{
	char *p = data + len - 1;

	*p = '\0';
	while (p > data && p[-1] != '\n')
		p--;
	return p;
}

/* The trace's text, checked: not empty, no NUL byte, its first line a
 * whole trace.start, and, when whole_lines, its last byte a newline. */
static char *read_lines(const char *path, size_t *len, int whole_lines)
{
	char *data = mt_test_trace_text(path, len, 1), *start, *nl;

	mt_quiet(data != NULL && *len > 0, "%s: missing or empty", path);
	mt_quiet(memchr(data, '\0', *len) == NULL,
		 "%s: %zu bytes with zero padding (first NUL at %zu)", path, *len,
		 (size_t)((char *)memchr(data, '\0', *len) - data));
	if (whole_lines)
		mt_quiet(data[*len - 1] == '\n', "%s: does not end with a newline", path);
	start = strstr(data, "\"kind\":\"trace.start\"");
	nl = strchr(data, '\n');
	mt_quiet(start && nl && start < nl, "%s: the first line is not trace.start", path);
	return data;
}

static char *read_cut(const char *path, size_t *len)
{
	return read_lines(path, len, 1);
}

void mt_test_assert_trace_cut(const char *path)
{
	size_t len;

	free(read_cut(path, &len));
}

void mt_test_assert_trace_cut_by_kill(const char *path)
{
	size_t len;

	free(read_lines(path, &len, 0));
}

void mt_test_assert_trace_whole(const char *path, const char *reason)
{
	size_t len;
	char *data = read_cut(path, &len), *last = last_line(data, len);

	mt_quiet(strstr(last, "\"kind\":\"trace.stop\"") != NULL,
		 "%s: the last line is not trace.stop: %s", path, last);
	if (reason) {
		char want[64];

		snprintf(want, sizeof(want), "\"reason\":\"%s\"", reason);
		mt_quiet(strstr(last, want) != NULL,
			 "%s: trace.stop has not %s: %s", path, want, last);
	}
	free(data);
}

int mt_test_trace_count(const char *path, const char *kind, long size)
{
	size_t len;
	char *data = mt_test_trace_text(path, &len, 0), *line, *save = NULL;
	char k[64], s[64];
	int n = 0;

	mt_quiet(data != NULL, "%s: missing", path);
	snprintf(k, sizeof(k), "\"kind\":\"%s\"", kind);
	snprintf(s, sizeof(s), "\"size\":%ld,", size);
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strstr(line, k) && (!size || strstr(line, s)))
			n++;
	free(data);
	return n;
}

void mt_test_wait_trace_finished(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	mt_quiet(fd >= 0, "%s: %s", path, strerror(errno));
	while (flock(fd, LOCK_SH) < 0)
		mt_quiet_int_eq(errno, EINTR);
	close(fd);
}

char *mt_test_check_status(const char *path)
{
	char *mt = mt_test_memtrace();
	char *argv[] = { mt, "check", (char *)path, NULL };
	mt_test_run_t r;
	json_object *o;
	char *status;

	mt_test_run(&r, argv, NULL);
	o = json_tokener_parse(r.out);
	mt_quiet(o != NULL, "memtrace check %s printed %s", path, r.out);
	status = strdup(mt_test_json_str(o, "status"));
	json_object_put(o);
	mt_test_run_release(&r);
	free(mt);
	return status;
}

size_t mt_test_assert_traces_complete(const char *dir)
{
	return mt_test_assert_traces_complete_ending(dir, ".jsonl");
}

size_t mt_test_assert_traces_complete_ending(const char *dir, const char *ext)
{
	size_t n;
	char **names = mt_test_traces_ending(dir, ext, &n);

	for (size_t i = 0; i < n; i++) {
		char *path = mt_test_path(dir, names[i]);
		char *status = mt_test_check_status(path);

		mt_quiet(!strcmp(status, "complete"), "%s: memtrace check says %s",
			 names[i], status);
		mt_test_assert_trace_whole(path, NULL);
		free(status);
		free(path);
	}
	mt_test_traces_release(names, n);
	return n;
}

/*
 * The collector of program pid: a process named memtrace-collector (comm
 * "memtrace-collec") whose argv is "memtrace-collector NAME ROOT PID PIDFD".
 * Returns its pid, or 0.
 */
pid_t mt_test_find_collector(pid_t program)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;

	mt_quiet_ptr_nonnull(d);
	while (!found && (e = readdir(d))) {
		char path[300], comm[64], cmd[8192];
		const char *arg;
		size_t n;
		FILE *f;
		int i;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		n = fread(comm, 1, sizeof(comm) - 1, f);
		fclose(f);
		comm[n] = '\0';
		if (strcmp(comm, "memtrace-collec\n"))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		n = fread(cmd, 1, sizeof(cmd) - 1, f);
		fclose(f);
		cmd[n] = '\0';
		/* argv[3], past three NUL-terminated arguments. */
		for (arg = cmd, i = 0; i < 3 && arg < cmd + n; i++)
			arg += strlen(arg) + 1;
		if (arg < cmd + n && atol(arg) == (long)program)
			found = (pid_t)atol(e->d_name);
	}
	closedir(d);
	return found;
}
