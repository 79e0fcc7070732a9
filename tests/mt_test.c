/*
 * mt_test: shared helpers of the Check suites: paths, command runs, files.
 * Never used by the analyzer or the preload themselves.
 */
#include "mt_test.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

void mt_test_runner_init(void)
{
	if (setenv("CK_DEFAULT_TIMEOUT", MT_TEST_DEFAULT_TIMEOUT, 0))
		abort();
	/* The core the tests drive starts the collector of this build. */
	if (setenv("MEMTRACE_COLLECTOR", MT_BUILD_DIR "/memtrace-collector", 0))
		abort();
}

const char *mt_test_source_dir(void)
{
	return MT_SOURCE_DIR;
}

const char *mt_test_build_dir(void)
{
	return MT_BUILD_DIR;
}

static char *join(const char *a, const char *b, const char *c)
{
	size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
	char *p = malloc(n);

	mt_quiet_ptr_nonnull(p);
	snprintf(p, n, "%s%s%s", a, b, c);
	return p;
}

char *mt_test_fixture(const char *name)
{
	return join(MT_SOURCE_DIR, "/fixtures/", name);
}

char *mt_test_memtrace(void)
{
	return join(MT_BUILD_DIR, "/", "memtrace");
}

char *mt_test_path(const char *dir, const char *name)
{
	return join(dir, "/", name);
}

void mt_test_rmdir(const char *dir)
{
	char *cmd = join("rm -rf '", dir, "'");

	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	free(cmd);
}

/* The scratch directories of this process: owner is the process that
 * made them, so that a child the test forks, inheriting the list, never
 * removes its parent's. */
static struct {
	pid_t owner;
	int registered;
	char **dirs;
	size_t n, cap;
} scratch;

static void scratch_remove(void)
{
	if (scratch.owner != getpid())
		return;
	for (size_t i = 0; i < scratch.n; i++) {
		mt_test_rmdir(scratch.dirs[i]);
		free(scratch.dirs[i]);
	}
	free(scratch.dirs);
	scratch.dirs = NULL;
	scratch.n = scratch.cap = 0;
}

char *mt_test_scratch(void)
{
	const char *base = getenv("TMPDIR");
	char *p = join(base && *base ? base : "/tmp", "/", "mt-test.XXXXXX");

	mt_quiet(mkdtemp(p) != NULL, "mkdtemp: %s", strerror(errno));
	if (scratch.owner != getpid()) {
		/* The first in this process: a forked child's copy of the
		 * list is its parent's, not its own to remove. */
		scratch.owner = getpid();
		scratch.dirs = NULL;
		scratch.n = scratch.cap = 0;
	}
	if (!scratch.registered) {
		mt_quiet(atexit(scratch_remove) == 0, "atexit failed");
		scratch.registered = 1;
	}
	if (scratch.n == scratch.cap) {
		scratch.cap = scratch.cap ? scratch.cap * 2 : 8;
		scratch.dirs = realloc(scratch.dirs,
				       scratch.cap * sizeof(*scratch.dirs));
		mt_quiet_ptr_nonnull(scratch.dirs);
	}
	scratch.dirs[scratch.n++] = p;
	return p;
}

static void slurp_append(char **buf, size_t *len, size_t *cap, const char *p,
			 size_t n)
{
	if (*len + n + 1 > *cap) {
		while (*len + n + 1 > *cap)
			*cap = *cap ? *cap * 2 : 4096;
		*buf = realloc(*buf, *cap);
		mt_quiet_ptr_nonnull(*buf);
	}
	memcpy(*buf + *len, p, n);
	*len += n;
	(*buf)[*len] = '\0';
}

/* The environment of a command: ours, with env's NAME=VALUE strings in
 * place of ours of the same names, and without those env names bare (as
 * putenv would have it).  Made before the fork, so that the
 * child, which may be forked beside another thread, allocates nothing. */
static char **env_with(char *const env[])
{
	size_t n = 0, k = 0, extra = 0;
	char **out;

	while (environ[n])
		n++;
	while (env && env[extra])
		extra++;
	out = calloc(n + extra + 1, sizeof(*out));
	mt_quiet_ptr_nonnull(out);
	for (size_t i = 0; i < n; i++) {
		int replaced = 0;

		for (size_t j = 0; j < extra && !replaced; j++) {
			size_t len = strcspn(env[j], "=");

			replaced = !strncmp(environ[i], env[j], len) && environ[i][len] == '=';
		}
		if (!replaced)
			out[k++] = environ[i];
	}
	for (size_t j = 0; j < extra; j++)
		if (strchr(env[j], '='))
			out[k++] = env[j];
	out[k] = NULL;
	return out;
}

/* Run argv; in the child, chdir to cwd and set umask 022 when cwd is not
 * NULL. */
static void run_in(mt_test_run_t *r, char *const argv[], char *const env[],
		   const char *cwd)
{
	int out[2], err[2], status;
	size_t out_cap = 0, err_cap = 0;
	char **envp;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	envp = env_with(env);
	/* Close-on-exec, so a command run from another thread at the same
	 * time (mt_test_sweep_allocation_failures) holds no end of these
	 * pipes and their reader sees its end-of-file when this child ends.
	 * dup2 below clears the flag on 1 and 2. */
	mt_quiet_int_eq(pipe2(out, O_CLOEXEC), 0);
	mt_quiet_int_eq(pipe2(err, O_CLOEXEC), 0);
	pid = fork();
	/* The child makes no Check call and no stdio call: Check's asserts
	 * and stdio's streams take locks that the other thread of a sweep
	 * may have held at the fork. */
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);

		dup2(devnull, 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		close(out[0]);
		close(err[0]);
		if (cwd) {
			if (chdir(cwd) < 0) {
				dprintf(2, "cd %s: %s\n", cwd, strerror(errno));
				_exit(127);
			}
			umask(022);
		}
		/* No command may hang the suite: SIGALRM survives exec. */
		alarm(MT_TEST_RUN_TIMEOUT);
		execve(argv[0], argv, envp);
		dprintf(2, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	ck_assert_int_ge(pid, 0);
	close(out[1]);
	close(err[1]);
	slurp_append(&r->out, &r->out_len, &out_cap, "", 0);
	slurp_append(&r->err, &r->err_len, &err_cap, "", 0);
	for (int open_fds = 2; open_fds;) {
		struct pollfd fds[2] = { { out[0], POLLIN, 0 }, { err[0], POLLIN, 0 } };
		char chunk[65536];

		if (poll(fds, 2, -1) < 0) {
			mt_quiet_int_eq(errno, EINTR);
			continue;
		}
		for (int i = 0; i < 2; i++) {
			ssize_t n;

			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP)))
				continue;
			n = read(fds[i].fd, chunk, sizeof(chunk));
			if (n <= 0) {
				close(fds[i].fd);
				if (i == 0)
					out[0] = -1;
				else
					err[0] = -1;
				open_fds--;
				continue;
			}
			if (i == 0)
				slurp_append(&r->out, &r->out_len, &out_cap, chunk, (size_t)n);
			else
				slurp_append(&r->err, &r->err_len, &err_cap, chunk, (size_t)n);
		}
	}
	while (waitpid(pid, &status, 0) < 0)
		mt_quiet_int_eq(errno, EINTR);
	free(envp);
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	/* Under MEMTRACE_UNWIND=verify (make check UNWIND=verify) every
	 * traced command compares the unwinders: a difference is the
	 * walker's bug, whatever the test looks at. */
	mt_quiet(!strstr(r->err, "the unwinders' stacks differ"), "%s: %s", argv[0], r->err);
}

void mt_test_run(mt_test_run_t *r, char *const argv[], char *const env[])
{
	run_in(r, argv, env, NULL);
}

#define MEMTRACE_ARGS_MAX 64

void mt_test_memtrace_in_argv(mt_test_run_t *r, const char *dir,
			      char *const env[], const char *const args[])
{
	char *argv[MEMTRACE_ARGS_MAX + 2];
	char *memtrace = mt_test_memtrace();
	size_t n = 0;

	argv[n++] = memtrace;
	for (size_t i = 0; args[i]; i++) {
		ck_assert_uint_lt(n, MEMTRACE_ARGS_MAX);
		argv[n++] = (char *)args[i];
	}
	argv[n] = NULL;
	run_in(r, argv, env, dir ? dir : ".");
	free(memtrace);
}

void mt_test_memtrace_in(mt_test_run_t *r, const char *dir, ...)
{
	const char *args[MEMTRACE_ARGS_MAX + 1];
	size_t n = 0;
	va_list ap;

	va_start(ap, dir);
	while ((args[n] = va_arg(ap, const char *)) != NULL) {
		ck_assert_uint_lt(n, MEMTRACE_ARGS_MAX);
		n++;
	}
	va_end(ap);
	mt_test_memtrace_in_argv(r, dir, NULL, args);
}

void mt_test_run_release(mt_test_run_t *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

/* One run of a sweep: the analyzer with its nth allocation failing. */
typedef struct {
	const char *const *args;
	int n;
	char env0[64];
	mt_test_run_t r;
} sweep_run_t;

static void *sweep_run(void *arg)
{
	sweep_run_t *s = arg;
	char *env[] = { s->env0, NULL };

	snprintf(s->env0, sizeof(s->env0), "MEMTRACE_ANALYZER_FAIL_AT=%d", s->n);
	mt_test_memtrace_in_argv(&s->r, NULL, env, s->args);
	return NULL;
}

/*
 * The runs go two at a time, the second on a thread of its own: each is a
 * process of its own, so the sweep takes half the wall time where two
 * CPUs are free, and the verdicts are read in the runs' order.
 */
void mt_test_sweep_allocation_failures(const char *const args[], const char *what)
{
	mt_test_run_t full;
	int done = 0;

	mt_test_memtrace_in_argv(&full, NULL, NULL, args);
	ck_assert_int_eq(full.status, 0);
	for (int n = 1; !done && n < 100000; n += 2) {
		sweep_run_t runs[2] = { { .args = args, .n = n }, { .args = args, .n = n + 1 } };
		pthread_t second;

		mt_quiet_int_eq(pthread_create(&second, NULL, sweep_run, &runs[1]), 0);
		sweep_run(&runs[0]);
		mt_quiet_int_eq(pthread_join(second, NULL), 0);
		for (int i = 0; i < 2; i++) {
			mt_test_run_t *r = &runs[i].r;

			if (!done) {
				mt_quiet(r->status == 0 || r->status == 4,
					 "%s, allocation %d failing: status %d: %s", what,
					 runs[i].n, r->status, r->err);
				if (r->status == 4)
					mt_quiet(r->out_len == 0,
						 "%s, allocation %d: half an output", what,
						 runs[i].n);
				else
					done = r->out_len == full.out_len &&
					       !memcmp(r->out, full.out, r->out_len);
			}
			mt_test_run_release(r);
		}
	}
	ck_assert_msg(done, "%s never completed", what);
	mt_test_run_release(&full);
}

char *mt_test_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0;
	char chunk[65536];
	size_t got;

	if (!f)
		return NULL;
	slurp_append(&buf, &n, &cap, "", 0);
	while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
		slurp_append(&buf, &n, &cap, chunk, got);
	fclose(f);
	if (len)
		*len = n;
	return buf;
}

void mt_test_write(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	mt_quiet(f != NULL, "cannot write %s: %s", path, strerror(errno));
	mt_quiet_uint_eq(fwrite(data, 1, len, f), len);
	mt_quiet_int_eq(fclose(f), 0);
}

int mt_test_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

size_t mt_test_cached_pages(const char *path, uint64_t off, uint64_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned char *vec;
	size_t pages, n = 0;
	void *p;

	mt_quiet(fd >= 0, "cannot open %s: %s", path, strerror(errno));
	mt_quiet(off % (uint64_t)page == 0 && len > 0, "%s: range not in whole pages",
		 path);
	pages = (size_t)((len + (uint64_t)page - 1) / (uint64_t)page);
	/* A mapping of its own faults nothing in: mincore() then tells what
	 * the page cache holds, whoever brought it in. */
	p = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, fd, (off_t)off);
	mt_quiet(p != MAP_FAILED, "cannot map %s: %s", path, strerror(errno));
	vec = malloc(pages);
	mt_quiet(vec != NULL, "out of memory");
	mt_quiet(mincore(p, (size_t)len, vec) == 0, "mincore: %s", strerror(errno));
	for (size_t i = 0; i < pages; i++)
		n += vec[i] & 1;
	free(vec);
	munmap(p, (size_t)len);
	close(fd);
	return n;
}

void mt_test_uncache(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	mt_quiet(fd >= 0, "cannot open %s: %s", path, strerror(errno));
	mt_quiet(fdatasync(fd) == 0, "fdatasync %s: %s", path, strerror(errno));
	mt_quiet(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0,
		 "posix_fadvise %s", path);
	close(fd);
}

int mt_test_on_tmpfs(const char *path)
{
	struct statfs fs;

	mt_quiet(statfs(path, &fs) == 0, "statfs %s: %s", path, strerror(errno));
	return fs.f_type == 0x01021994; /* TMPFS_MAGIC */
}

void mt_test_skip(const char *test, const char *fmt, ...)
{
	size_t n = strlen(test);
	va_list ap;

	/* START_TEST(t) names its function t_fn. */
	if (n > 3 && !strcmp(test + n - 3, "_fn"))
		n -= 3;
	printf("skip: %.*s: ", (int)n, test);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	/* Check runs the test in a child it may end with _exit(). */
	fflush(stdout);
}

int mt_test_cpus(void)
{
	cpu_set_t set;

	mt_quiet(sched_getaffinity(0, sizeof(set), &set) == 0,
		 "sched_getaffinity: %s", strerror(errno));
	return CPU_COUNT(&set);
}

uint64_t mt_test_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void mt_test_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

const char *mt_test_fs_name(const char *path, char *buf, size_t size)
{
	static const struct {
		unsigned long magic;
		const char *name;
	} names[] = {
		{ 0xEF53, "ext4" },	       { 0x01021994, "tmpfs" },
		{ 0x794c7630, "overlay" },     { 0x58465342, "xfs" },
		{ 0x9123683E, "btrfs" },       { 0x6969, "nfs" },
		{ 0x01021997, "9p" },	       { 0x65735546, "fuse" },
		{ 0x2FC12FC1, "zfs" },	       { 0xF2F52010, "f2fs" },
		{ 0x858458f6, "ramfs" },       { 0xFF534D42, "cifs" },
	};
	struct statfs fs;

	mt_quiet(statfs(path, &fs) == 0, "statfs %s: %s", path, strerror(errno));
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((unsigned long)fs.f_type == names[i].magic)
			return names[i].name;
	snprintf(buf, size, "fs 0x%lx", (unsigned long)fs.f_type);
	return buf;
}

int mt_test_drops_clean_pages(const char *dir, char *found, size_t size)
{
	const size_t pages = 16;
	const size_t len = pages * (size_t)sysconf(_SC_PAGESIZE);
	char *path = mt_test_path(dir, "mt-probe.XXXXXX"), *data, fsbuf[32];
	int fd = mkstemp(path), rc;
	size_t stay;

	mt_quiet(fd >= 0, "mkstemp %s: %s", path, strerror(errno));
	data = malloc(len);
	mt_quiet_ptr_nonnull(data);
	memset(data, 'p', len);
	mt_quiet(write(fd, data, len) == (ssize_t)len, "write %s: %s", path,
		 strerror(errno));
	free(data);
	mt_quiet(fdatasync(fd) == 0, "fdatasync %s: %s", path, strerror(errno));
	rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
	stay = rc ? pages : mt_test_cached_pages(path, 0, len);
	unlink(path);
	if (rc)
		snprintf(found, size, "%s: posix_fadvise: %s",
			 mt_test_fs_name(dir, fsbuf, sizeof(fsbuf)), strerror(rc));
	else if (stay)
		snprintf(found, size,
			 "%s: %zu of %zu clean pages stay after POSIX_FADV_DONTNEED",
			 mt_test_fs_name(dir, fsbuf, sizeof(fsbuf)), stay, pages);
	free(path);
	return !rc && !stay;
}

void mt_test_assert_file_eq(const char *path, const char *expected)
{
	size_t len;
	char *got = mt_test_read(path, &len);

	mt_quiet(got != NULL, "%s does not exist", path);
	mt_quiet(len == strlen(expected) && !memcmp(got, expected, len),
		 "%s differs:\n--- expected\n%s--- got\n%s", path, expected,
		 got);
	free(got);
}

void mt_test_assert_golden(const char *actual, size_t len, const char *name)
{
	char *path = mt_test_fixture(name);
	size_t elen;
	char *expected = mt_test_read(path, &elen);

	mt_quiet(expected != NULL, "golden file %s is missing", path);
	mt_quiet(elen == len && !memcmp(expected, actual, len),
		 "output differs from %s:\n--- expected\n%s--- got\n%.*s",
		 path, expected, (int)len, actual);
	free(expected);
	free(path);
}

json_object *mt_test_json_member(json_object *o, const char *key)
{
	json_object *v = NULL;

	mt_quiet(json_object_object_get_ex(o, key, &v), "no field %s", key);
	return v;
}

int64_t mt_test_json_i64(json_object *o, const char *key)
{
	return json_object_get_int64(mt_test_json_member(o, key));
}

uint64_t mt_test_json_u64(json_object *o, const char *key)
{
	return json_object_get_uint64(mt_test_json_member(o, key));
}

const char *mt_test_json_str(json_object *o, const char *key)
{
	json_object *v = mt_test_json_member(o, key);

	return json_object_is_type(v, json_type_null) ? NULL : json_object_get_string(v);
}

const char *mt_test_json_opt_str(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
		return NULL;
	return json_object_get_string(v);
}

uint64_t mt_test_rng_state;

uint64_t mt_test_rng(void)
{
	uint64_t z = (mt_test_rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int mt_test_disassembly_count(const char *fn, const char *needle)
{
	char cmd[512];
	char line[512];
	char *bin = mt_test_memtrace();
	FILE *f;
	int n = 0, rc;

	snprintf(cmd, sizeof(cmd),
		 "objdump -d --no-show-raw-insn --disassemble=%s '%s'", fn, bin);
	free(bin);
	f = popen(cmd, "r");
	mt_quiet_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	rc = pclose(f);
	mt_quiet(rc == 0, "'%s' failed (%d)", cmd, rc);
	return n;
}

int mt_test_objdump_by_name(char *found, size_t size)
{
	char *bin = mt_test_memtrace();
	char cmd[4096], line[512], version[128] = "";
	int labelled = 0, rc;
	FILE *f;

	f = popen("objdump --version 2>&1", "r");
	mt_quiet_ptr_nonnull(f);
	if (fgets(version, sizeof(version), f))
		version[strcspn(version, "\n")] = '\0';
	while (fgets(line, sizeof(line), f))
		;
	rc = pclose(f);
	if (rc != 0) {
		snprintf(found, size, "objdump --version: exit %d: %s",
			 WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, version);
		free(bin);
		return 0;
	}
	snprintf(cmd, sizeof(cmd),
		 "objdump -d --no-show-raw-insn --disassemble=main '%s' 2>&1", bin);
	free(bin);
	f = popen(cmd, "r");
	mt_quiet_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		labelled += strstr(line, "<main>:") != NULL;
	rc = pclose(f);
	if (rc != 0 || labelled != 1) {
		snprintf(found, size, "%s: --disassemble=main: exit %d, "
			 "%d <main> labels", version,
			 WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, labelled);
		return 0;
	}
	return 1;
}

void mt_test_file_write(mt_test_file_t *f, const char *data, size_t len)
{
	f->dir = mt_test_scratch();
	f->path = mt_test_path(f->dir, "trace.jsonl");
	mt_test_write(f->path, data, len);
}

void mt_test_file_done(mt_test_file_t *f)
{
	free(f->path);
}

uint64_t mt_test_churn_key(size_t i)
{
	switch (i % 6) {
	case 0:
		return i / 6;
	case 1:
		return 0x55d0c2b00000ull + (i / 6) * 16;
	case 2:
		return UINT64_MAX - i / 6;
	case 3:
		return (uint64_t)(i / 6 + 1) << 32;
	case 4:
		return 0x7f3a5c000000ull + (i / 6) * 4096;
	default:
		return i * 0x9e3779b97f4a7c15ull; /* distinct for i < 2^64 */
	}
}

char *mt_test_workload(const char *name)
{
	char *dir = mt_test_path(mt_test_build_dir(), "workloads");
	char *p = mt_test_path(dir, name);

	free(dir);
	return p;
}

void mt_test_bytes_add(mt_test_bytes_t *b, const void *p, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n) * 2 + 4096;
		b->data = realloc(b->data, b->cap);
		mt_quiet_ptr_nonnull(b->data);
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

size_t mt_test_bytes_addf(mt_test_bytes_t *b, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	mt_quiet(n > 0 && (size_t)n < sizeof(line), "line too long");
	mt_test_bytes_add(b, line, (size_t)n);
	return (size_t)n;
}

uint64_t mt_test_bytes_add_trace_head(mt_test_bytes_t *b, const char *start_extra)
{
	uint64_t seq = 1;

	mt_test_bytes_addf(b, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"trace.start\",\"pid\":42%s}\n",
			   seq++, start_extra);
	mt_test_bytes_addf(b, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"allocator\",\"allocator_id\":0,"
			   "\"name\":\"libc\"}\n", seq++);
	for (int f = 1; f <= 3; f++)
		mt_test_bytes_addf(b, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"frame\",\"frame_id\":%d,"
				   "\"ip\":\"0x40%04x\",\"symbol\":\"fn_%d\",\"offset\":\"0x%x\","
				   "\"module\":\"/opt/app/bin/app\"}\n",
				   seq++, f, f * 0x40, f, f * 4);
	mt_test_bytes_addf(b, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"stack\",\"stack_id\":1,"
			   "\"frames\":[1,3]}\n", seq++);
	mt_test_bytes_addf(b, "{\"v\":1,\"seq\":%" PRIu64 ",\"kind\":\"stack\",\"stack_id\":2,"
			   "\"frames\":[2,3]}\n", seq++);
	return seq;
}
