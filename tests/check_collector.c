/*
 * check_collector: the write path, as a program under the
 * preload meets it: records go to a shared ring, a collector process of
 * their own (not the program's child, outside its session) drains it and
 * writes the trace.  Each test runs a whole workload and holds it to what
 * the design promises: a SIGKILL of the program loses no event it had
 * finished, a SIGKILL of the collector leaves the program running to its
 * own end, `wait`, SIGCHLD handlers and child subreapers never see a
 * collector they must wait for, a full ring makes writers wait rather
 * than drop, forks from threads each get a whole trace, and a zstd trace
 * says what the plain one says.
 *
 * The tests that need to watch a run while it goes (kill it, kill its
 * collector) start it themselves (start_traced); the others use
 * mt_test_run_traced(), which returns once stdout and stderr reach their
 * end: the collectors keep the program's stderr, so every trace is
 * finished by then.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "mt_test.h"
#include "mt_test_trace.h"
#include "../collector/mt_collect.h"
#include "../collector/mt_out.h"
#include "../common/mt_event.h"
#include "../common/mt_jsonl.h"
#include "../common/mt_ring.h"

/* A bound that only ends a hang: no test here times anything. */
#define HANG_GUARD_S 20

static void assert_status(const char *path, const char *want)
{
	char *status = mt_test_check_status(path);

	mt_quiet(!strcmp(status, want), "%s: memtrace check says %s, not %s", path,
		 status, want);
	free(status);
}

/* A traced run the test watches while it goes: its pid, and the test's
 * ends of its stdin (-1: /dev/null), stdout and stderr. */
typedef struct {
	pid_t pid;
	int in, out, err;
} run_t;

/*
 * Start argv under the preload with MEMTRACE_OUTPUT=output and the extra
 * environment entries (NULL-terminated, or NULL); with_stdin gives it a
 * pipe for stdin.  SIGALRM after HANG_GUARD_S seconds ends a run that
 * hangs (it survives exec).
 */
static void start_traced(run_t *r, char *const argv[], const char *output,
			 char *const extra[], int with_stdin)
{
	int in[2] = { -1, -1 }, out[2], err[2];
	char preload[4096], outenv[4096];

	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s/libmtpreload.so",
		 mt_test_build_dir());
	snprintf(outenv, sizeof(outenv), "MEMTRACE_OUTPUT=%s", output);
	if (with_stdin)
		mt_quiet_int_eq(pipe(in), 0);
	mt_quiet_int_eq(pipe(out), 0);
	mt_quiet_int_eq(pipe(err), 0);
	r->pid = fork();
	ck_assert_int_ge(r->pid, 0);
	if (r->pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);

		dup2(with_stdin ? in[0] : devnull, 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		putenv(preload);
		putenv(outenv);
		for (size_t i = 0; extra && extra[i]; i++)
			putenv(extra[i]);
		alarm(HANG_GUARD_S);
		execv(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (with_stdin)
		close(in[0]);
	close(out[1]);
	close(err[1]);
	r->in = in[1];
	r->out = out[0];
	r->err = err[0];
}

/* Append what fd holds to *buf (malloc'd, NUL-terminated) until it
 * holds needle (NULL: until the end of fd); fails the test after
 * HANG_GUARD_S seconds. */
static void read_until(int fd, char **buf, size_t *len, const char *needle)
{
	uint64_t end = mt_test_now_ms() + HANG_GUARD_S * 1000;

	if (!*buf) {
		*buf = calloc(1, 1);
		*len = 0;
	}
	while (!needle || !strstr(*buf, needle)) {
		struct pollfd p = { fd, POLLIN, 0 };
		char chunk[4096];
		ssize_t n;

		mt_quiet(mt_test_now_ms() < end, "read_until: no '%s' after %d s; got '%s'",
			 needle ? needle : "end", HANG_GUARD_S, *buf);
		if (poll(&p, 1, 1000) <= 0)
			continue;
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			mt_quiet(needle == NULL, "read_until: end before '%s'; got '%s'",
				 needle, *buf);
			return;
		}
		*buf = realloc(*buf, *len + (size_t)n + 1);
		mt_quiet_ptr_nonnull(*buf);
		memcpy(*buf + *len, chunk, (size_t)n);
		*len += (size_t)n;
		(*buf)[*len] = '\0';
	}
}

/* Reap r's process: its exit status, or 128 + signal. */
static int reap(run_t *r)
{
	int st;

	while (waitpid(r->pid, &st, 0) < 0)
		mt_quiet_int_eq(errno, EINTR);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}


/* The last line of the file at path (malloc'd, without its newline). */
static char *last_line(const char *path)
{
	size_t len;
	char *data = mt_test_read(path, &len), *start, *line;

	mt_quiet(data != NULL && len > 1, "%s: missing or empty", path);
	data[len - 1] = '\0';
	start = strrchr(data, '\n');
	line = strdup(start ? start + 1 : data);
	free(data);
	return line;
}

/*
 * 1. A SIGKILL in the middle of a burst of malloc+free pairs: the trace
 * keeps every pair the program had finished before the kill (it counts
 * them in a shared mapping after each free returns), has no trace.stop
 * (nothing runs after SIGKILL), and its seq is contiguous, which memtrace
 * check would call a sequence_gap otherwise: missing_stop_event is its
 * verdict.  Each pair's records are published before malloc and free
 * return, and the collector writes every published record once the
 * program is gone.
 */
START_TEST(test_sigkill_mid_burst_loses_no_finished_event)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *count = mt_test_path(dir, "count"), *prog = mt_test_workload("wl_burst");
	char *argv[] = { prog, count, NULL };
	_Atomic uint64_t *done;
	char *err = NULL;
	uint64_t finished, end;
	size_t err_len;
	run_t r;
	int fd;

	fd = open(count, O_RDWR | O_CREAT, 0600);
	mt_quiet(fd >= 0 && ftruncate(fd, 4096) == 0, "%s: %s", count, strerror(errno));
	done = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	mt_quiet(done != MAP_FAILED, "mmap: %s", strerror(errno));
	close(fd);
	start_traced(&r, argv, trace, NULL, 0);
	/* Mid-burst: past 400,000 events, more than the default ring holds,
	 * so the collector is draining behind it when the kill lands. */
	end = mt_test_now_ms() + HANG_GUARD_S * 1000;
	while (atomic_load(done) < 200000) {
		mt_quiet(mt_test_now_ms() < end, "wl_burst finished only %ju pairs",
			 (uintmax_t)atomic_load(done));
		mt_quiet(waitpid(r.pid, NULL, WNOHANG) == 0, "wl_burst ended early");
		mt_test_sleep_ms(1);
	}
	mt_quiet_int_eq(kill(r.pid, SIGKILL), 0);
	mt_quiet_int_eq(reap(&r), 128 + SIGKILL);
	finished = atomic_load(done);
	/* The collector keeps the program's stderr until it has finished. */
	read_until(r.err, &err, &err_len, NULL);
	mt_test_wait_trace_finished(trace);
	ck_assert_str_eq(err, "");
	mt_test_assert_trace_cut(trace);
	assert_status(trace, "missing_stop_event");
	mt_quiet_int_eq(mt_test_trace_count(trace, "trace.stop", 0), 0);
	mt_quiet_uint_ge((uintmax_t)mt_test_trace_count(trace, "alloc", 4242), finished);
	/* Each finished pair's free is there too (frees name no size). */
	mt_quiet_uint_ge((uintmax_t)mt_test_trace_count(trace, "free", 0), finished);
	close(r.out);
	close(r.err);
	free(err);
	munmap((void *)done, 4096);
	free(prog);
	free(count);
	free(trace);
}
END_TEST

/*
 * 2. The collector SIGKILLed while the program runs: the program runs on
 * to its own end, exit status and output as bare, and says so at most
 * once on stderr.  With a ring of 64 slots it fills at once and the
 * writers find the collector gone (this test is the collectors'
 * subreaper, so it reaps the killed one: no zombie keeps answering
 * kill(pid, 0)).  The test waits until the collector has flushed
 * something before it kills it (it flushes at least every second), so
 * the trace holds whole lines from trace.start on, with no trace.stop
 * (missing_stop_event), and none of the allocations made after the kill.
 */
static void collector_killed(char *const extra[])
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *prog = mt_test_workload("wl_gate");
	char *argv[] = { prog, NULL };
	char *out = NULL, *err = NULL;
	size_t out_len, err_len;
	pid_t collector = 0;
	struct stat st;
	uint64_t end;
	run_t r;
	int cst;

	mt_quiet_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	start_traced(&r, argv, trace, extra, 1);
	read_until(r.out, &out, &out_len, "ready\n");
	end = mt_test_now_ms() + HANG_GUARD_S * 1000;
	while (!(collector = mt_test_find_collector(r.pid))) {
		mt_quiet(mt_test_now_ms() < end, "no collector of pid %d", (int)r.pid);
		mt_test_sleep_ms(5);
	}
	while (stat(trace, &st) != 0 || st.st_size == 0) {
		mt_quiet(mt_test_now_ms() < end, "the collector flushed nothing in %d s",
			 HANG_GUARD_S);
		mt_test_sleep_ms(5);
	}
	mt_quiet_int_eq(kill(collector, SIGKILL), 0);
	/* Adopted by this test, the subreaper, when its parent exited. */
	mt_quiet(waitpid(collector, &cst, 0) == collector, "waitpid(collector): %s",
		 strerror(errno));
	mt_quiet(WIFSIGNALED(cst) && WTERMSIG(cst) == SIGKILL, "collector status %#x",
		 cst);
	close(r.in);
	read_until(r.out, &out, &out_len, NULL);
	read_until(r.err, &err, &err_len, NULL);
	mt_quiet_int_eq(reap(&r), 7);
	ck_assert_str_eq(out, "ready\ndone 100000\n");
	/* The preload's one line that tracing stopped, and nothing else. */
	ck_assert_str_eq(err, "memtrace: the collector has stopped; tracing stops, "
			      "the program runs on\n");
	(void)err_len;
	mt_test_assert_trace_cut_by_kill(trace);
	assert_status(trace, "missing_stop_event");
	mt_quiet_int_eq(mt_test_trace_count(trace, "trace.stop", 0), 0);
	mt_quiet_int_eq(mt_test_trace_count(trace, "alloc", 3232), 0);
	mt_quiet_uint_le((uintmax_t)mt_test_trace_count(trace, "alloc", 3131), 1000);
	close(r.out);
	close(r.err);
	free(out);
	free(err);
	free(prog);
	free(trace);
}

START_TEST(test_collector_killed_mid_run_leaves_the_program_running)
{
	char *extra[] = { "MEMTRACE_RING_SLOTS=64", NULL };

	collector_killed(extra);
}
END_TEST

/* The same with the default ring, which the 200,000 events after the
 * kill do not fill: a writer asks every 65,536 slots whether the
 * collector still runs, so the program still says, once, that tracing
 * stopped. */
START_TEST(test_a_killed_collector_is_noticed_before_the_ring_fills)
{
	collector_killed(NULL);
}
END_TEST

/*
 * 3a. bash's `wait` waits for every child bash has: a collector that were
 * bash's child would never end (it waits for bash), nor would the
 * script.  `sleep 0.1 & wait` must end with status 0 (SIGALRM after
 * HANG_GUARD_S seconds ends a hang, status 142), and bash's, its forked
 * child's and sleep's traces are complete.
 */
START_TEST(test_bash_wait_does_not_wait_for_collectors)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.%p.jsonl");
	char *argv[] = { "/bin/bash", "-c", "sleep 0.1 & wait; echo waited", NULL };
	char *out = NULL, *err = NULL;
	size_t out_len, err_len;
	run_t r;
	int status;

	if (access(argv[0], X_OK) != 0) {
		MT_TEST_SKIP("needs bash (%s: %s)", argv[0], strerror(errno));
		goto out;
	}
	start_traced(&r, argv, trace, NULL, 0);
	read_until(r.out, &out, &out_len, NULL);
	read_until(r.err, &err, &err_len, NULL);
	status = reap(&r);
	mt_quiet(status == 0, "bash ended with %d (142: it hung); stderr: %s",
		 status, err);
	ck_assert_str_eq(out, "waited\n");
	ck_assert_str_eq(err, "");
	mt_quiet_uint_ge(mt_test_assert_traces_complete(dir), 2);
	close(r.out);
	close(r.err);
	free(out);
	free(err);
out:
	free(trace);
}
END_TEST

/*
 * 3b. A SIGCHLD handler that reaps with waitpid(-1, WNOHANG), and a
 * final waitpid(-1): the program sees its K children and nothing else
 * (a collector as its child would be reaped as foreign, or keep the last
 * waitpid from saying ECHILD), and every trace, its own and each
 * child's, is complete.
 */
START_TEST(test_sigchld_handler_sees_only_its_own_children)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *prog = mt_test_workload("wl_sigchld");
	char *argv[] = { prog, "6", NULL };
	int k, reaped, foreign, echild, signals;
	char **names;
	mt_test_run_t r;
	size_t n;

	mt_test_run_traced(&r, argv, trace, NULL);
	mt_quiet(r.status == 0, "wl_sigchld ended with %d: %s", r.status, r.err);
	mt_quiet(sscanf(r.out, "forked %d reaped %d foreign %d echild %d signals %d",
			&k, &reaped, &foreign, &echild, &signals) == 5,
		 "printed %s", r.out);
	mt_quiet_int_eq(k, 6);
	mt_quiet_int_eq(reaped, 6);
	mt_quiet_int_eq(foreign, 0);
	mt_quiet_int_eq(echild, 1);
	mt_quiet(signals >= 1 && signals <= 6, "%d SIGCHLDs for 6 children", signals);
	ck_assert_str_eq(r.err, "");
	mt_quiet_uint_eq(mt_test_assert_traces_complete(dir), 7);
	mt_test_assert_trace_whole(trace, "exit");
	names = mt_test_traces(dir, &n);
	for (size_t i = 0; i < n; i++) {
		char *path = mt_test_path(dir, names[i]);

		if (strcmp(names[i], "t.jsonl"))
			mt_quiet_int_eq(mt_test_trace_count(path, "alloc", 5151), 2);
		free(path);
	}
	mt_test_traces_release(names, n);
	mt_test_run_release(&r);
	free(prog);
	free(trace);
}
END_TEST

/*
 * 4. A ring of 64 slots and 4 threads making 50,000 allocations (100,000
 * events, the ring full some 1,500 times over): the writers wait for room
 * over and over, and nothing is dropped: the trace is complete,
 * trace.stop says dropped 0, and it holds exactly every allocation.
 * (A writer that finds the ring full rings the sleeping collector's
 * doorbell: without it each refill waited out a 1 ms nap, 1.6 s here.)
 */
START_TEST(test_full_ring_makes_writers_wait_and_drops_nothing)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *prog = mt_test_workload("wl_fullring");
	char *argv[] = { prog, NULL };
	mt_test_run_t r;
	json_object *stop;
	char *last;

	mt_test_run_traced(&r, argv, trace, "MEMTRACE_RING_SLOTS=64");
	mt_quiet(r.status == 0, "wl_fullring ended with %d: %s", r.status, r.err);
	ck_assert_str_eq(r.out, "done 50000\n");
	ck_assert_str_eq(r.err, "");
	assert_status(trace, "complete");
	mt_test_assert_trace_whole(trace, "exit");
	mt_quiet_int_eq(mt_test_trace_count(trace, "alloc", 8181), 50000);
	last = last_line(trace);
	stop = json_tokener_parse(last);
	mt_quiet(stop != NULL, "last line: %s", last);
	mt_quiet_uint_eq(mt_test_json_u64(stop, "dropped"), 0);
	json_object_put(stop);
	free(last);
	mt_test_run_release(&r);
	free(prog);
	free(trace);
}
END_TEST

/* The workers the collector of a zstd trace of prog (with extra in its
 * environment, exiting with status) says it started (MEMTRACE_STATS), or
 * -1. */
static int workers_started(const char *prog, const char *extra, int status)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl.zst");
	char *argv[] = { (char *)prog, NULL };
	char *env[] = { "MEMTRACE_STATS=1", (char *)extra, NULL };
	char *out = NULL, *err = NULL;
	size_t out_len = 0, err_len = 0;
	const char *at;
	int workers = -1;
	run_t r;

	start_traced(&r, argv, trace, env, 0);
	read_until(r.out, &out, &out_len, NULL);
	read_until(r.err, &err, &err_len, NULL);
	mt_quiet_int_eq(reap(&r), status);
	assert_status(trace, "complete");
	at = strstr(err, " workers ");
	if (at)
		workers = atoi(at + 9);
	close(r.out);
	close(r.err);
	free(out);
	free(err);
	free(trace);
	return workers;
}

/* The collector of a compressed trace starts its zstd workers once the
 * program waits for room in the ring, and not before: a program it keeps
 * up with has none beside it. */
START_TEST(test_zstd_workers_start_when_the_program_waits_for_room)
{
	char *full = mt_test_workload("wl_fullring"), *calm = mt_test_workload("wl_exit");
	struct rlimit rl;
	int want = mt_out_workers_here();

	mt_quiet_int_eq(workers_started(calm, NULL, 3), 0);
	if (!want) {
		getrlimit(RLIMIT_NPROC, &rl);
		MT_TEST_SKIP("the collector may start no worker here (%d CPUs, "
			     "RLIMIT_NPROC %llu)", mt_test_cpus(), (unsigned long long)rl.rlim_cur);
	} else {
		mt_quiet_int_eq(workers_started(full, "MEMTRACE_RING_SLOTS=64", 0), want);
	}
	free(full);
	free(calm);
}
END_TEST

/*
 * 5. A child subreaper adopts its orphaned grandchildren, and would adopt
 * with them the collectors of its descendants (each is an orphan once the
 * clone that made it exits), and its reap-until-ECHILD loop would count
 * them.  It became one after its start, so its own trace is whole, and
 * from its first fork on it says in one line that its children run
 * untraced (memtrace record traces such a tree): it reaps its 9
 * processes, exactly.
 */
START_TEST(test_child_subreaper_reaps_its_orphans_and_ends)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *prog = mt_test_workload("wl_subreaper");
	char *argv[] = { prog, "3", "2", NULL };
	int forked, reaped;
	mt_test_run_t r;

	mt_test_run_traced(&r, argv, trace, NULL);
	mt_quiet(r.status == 0, "wl_subreaper ended with %d (142: it hung): %s",
		 r.status, r.err);
	mt_quiet(sscanf(r.out, "forked %d reaped %d", &forked, &reaped) == 2,
		 "printed %s", r.out);
	mt_quiet_int_eq(forked, 9);
	mt_quiet_int_eq(reaped, forked);
	ck_assert_str_eq(r.err, "memtrace: this process is a child subreaper: its collectors "
				"would be its children; trace it with memtrace record\n");
	mt_test_assert_trace_whole(trace, "exit");
	mt_quiet_uint_eq(mt_test_assert_traces_complete(dir), 1);
	mt_test_run_release(&r);
	free(prog);
	free(trace);
}
END_TEST

/*
 * 6. 8 threads allocating while four of them fork a child each: the
 * parent's trace holds exactly its threads' 16,000 allocations, each
 * child's trace (t.PID.jsonl, by the naming rule for a name without %p)
 * exactly its own 300 and none of its parent's, and all five are
 * complete.
 */
START_TEST(test_threads_that_fork_leave_every_trace_complete)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *prog = mt_test_workload("wl_threadfork");
	char *argv[] = { prog, NULL };
	mt_test_run_t r;
	int children = 0;
	const char *p;

	mt_test_run_traced(&r, argv, trace, NULL);
	mt_quiet(r.status == 0, "wl_threadfork ended with %d: %s", r.status, r.err);
	ck_assert_str_eq(r.err, "");
	mt_quiet_uint_eq(mt_test_assert_traces_complete(dir), 5);
	mt_test_assert_trace_whole(trace, "exit");
	mt_quiet_int_eq(mt_test_trace_count(trace, "alloc", 7171), 16000);
	mt_quiet_int_eq(mt_test_trace_count(trace, "alloc", 7272), 0);
	for (p = r.out; (p = strstr(p, "child ")); p++) {
		char name[64], *path;
		json_object *o;
		long pid = atol(p + 6);

		snprintf(name, sizeof(name), "t.%ld.jsonl", pid);
		path = mt_test_path(dir, name);
		mt_quiet(mt_test_exists(path), "no trace %s of child %ld", name, pid);
		mt_test_assert_trace_whole(path, "exit");
		mt_quiet_int_eq(mt_test_trace_count(path, "alloc", 7272), 300);
		mt_quiet_int_eq(mt_test_trace_count(path, "alloc", 7171), 0);
		o = mt_test_trace_start(path);
		mt_quiet_int_eq(mt_test_json_i64(o, "pid"), pid);
		json_object_put(o);
		free(path);
		children++;
	}
	mt_quiet_int_eq(children, 4);
	mt_quiet(strstr(r.out, "done\n") != NULL, "printed %s", r.out);
	mt_test_run_release(&r);
	free(prog);
	free(trace);
}
END_TEST

/* memtrace summary's rows for path, each without its duration_ns (the
 * one number two runs of a workload need not share), one a line. */
static char *summary_rows(const char *path)
{
	char *mt = mt_test_memtrace();
	char *argv[] = { mt, "summary", (char *)path, NULL };
	char *rows = calloc(1, 1), *line, *save = NULL;
	size_t len = 0;
	mt_test_run_t r;

	mt_test_run(&r, argv, NULL);
	mt_quiet(r.status == 0, "memtrace summary %s: %d: %s", path, r.status, r.err);
	for (line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_object *o = json_tokener_parse(line);
		const char *s;

		mt_quiet(o != NULL, "summary row is not JSON: %s", line);
		json_object_object_del(o, "duration_ns");
		s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
		rows = realloc(rows, len + strlen(s) + 2);
		mt_quiet_ptr_nonnull(rows);
		memcpy(rows + len, s, strlen(s));
		len += strlen(s);
		rows[len++] = '\n';
		rows[len] = '\0';
		json_object_put(o);
	}
	mt_test_run_release(&r);
	free(mt);
	return rows;
}

/*
 * 8. The collector writes zstd when the name ends .zst: the trace of a
 * real workload (wl_demo) reads back with zstdcat as whole JSONL lines,
 * memtrace check calls it complete, and memtrace summary gives the same
 * rows, number for number (but the run's duration), as for the same
 * workload traced to a plain name.
 */
START_TEST(test_zstd_trace_reads_back_and_summarizes_as_plain)
{
	char *dir = mt_test_scratch(), *zst = mt_test_path(dir, "z.jsonl.zst");
	char *plain = mt_test_path(dir, "p.jsonl"), *unpacked = mt_test_path(dir, "u.jsonl");
	char *prog = mt_test_workload("wl_demo");
	char *argv[] = { prog, NULL };
	char *zargv[] = { "/usr/bin/zstdcat", zst, NULL };
	char *a, *b;
	mt_test_run_t r, z, p;

	if (access(zargv[0], X_OK) != 0) {
		MT_TEST_SKIP("needs zstdcat (%s: %s)", zargv[0], strerror(errno));
		goto out;
	}
	mt_test_run_traced(&r, argv, zst, NULL);
	mt_quiet(r.status == 0, "wl_demo ended with %d: %s", r.status, r.err);
	mt_test_run_traced(&p, argv, plain, NULL);
	mt_quiet_int_eq(p.status, 0);
	ck_assert_str_eq(r.out, p.out);
	mt_test_run(&z, zargv, NULL);
	mt_quiet(z.status == 0, "zstdcat: %d: %s", z.status, z.err);
	mt_test_write(unpacked, z.out, z.out_len);
	mt_test_assert_trace_whole(unpacked, "exit");
	assert_status(zst, "complete");
	assert_status(unpacked, "complete");
	assert_status(plain, "complete");
	a = summary_rows(zst);
	b = summary_rows(plain);
	ck_assert_str_eq(a, b);
	free(a);
	free(b);
	mt_test_run_release(&z);
	mt_test_run_release(&p);
	mt_test_run_release(&r);
out:
	free(prog);
	free(unpacked);
	free(plain);
	free(zst);
}
END_TEST

/*
 * A daemon lets go of its stdout and stderr (a pipe to whoever started
 * it) and runs on: the reader must see the pipe's end while the daemon
 * and its collector still run, or a shell's $(...) or an ssh session
 * would wait for the collector.  The daemon ends only once the test has
 * seen the end, so a collector holding the pipe shows as a hang.
 */
START_TEST(test_collector_holds_no_descriptor_of_the_program)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *go = mt_test_path(dir, "go"), *prog = mt_test_workload("wl_detach");
	char *argv[] = { prog, go, NULL };
	char *out = NULL, *err = NULL;
	size_t out_len = 0, err_len = 0;
	run_t r;
	int status;

	start_traced(&r, argv, trace, NULL, 0);
	read_until(r.out, &out, &out_len, NULL);
	read_until(r.err, &err, &err_len, NULL);
	ck_assert_str_eq(out, "detaching\n");
	ck_assert_str_eq(err, "");
	/* The daemon still runs: it waits for go. */
	mt_quiet_int_eq(waitpid(r.pid, &status, WNOHANG), 0);
	mt_test_write(go, "", 0);
	mt_quiet_int_eq(waitpid(r.pid, &status, 0), r.pid);
	mt_quiet(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
	assert_status(trace, "complete");
	close(r.out);
	close(r.err);
	free(out);
	free(err);
	free(prog);
	free(go);
	free(trace);
}
END_TEST

/* allocations in memtrace summary's first row for path (-1: no row). */
static long summary_allocations(const char *path)
{
	char *mt = mt_test_memtrace();
	char *argv[] = { mt, "summary", (char *)path, NULL };
	mt_test_run_t r;
	json_object *o;
	long n = -1;

	mt_test_run(&r, argv, NULL);
	o = json_tokener_parse(r.out);
	if (o) {
		n = (long)mt_test_json_i64(o, "allocations");
		json_object_put(o);
	}
	mt_test_run_release(&r);
	free(mt);
	return n;
}

/*
 * A running program's compressed trace shows what it did a second ago:
 * the collector ends a zstd frame at least every second.  wl_gate makes
 * its 1000 allocations, then waits; the test reads the trace meanwhile
 * until the summary counts them (the program still runs, so the frames
 * can only have come from the flush).
 */
START_TEST(test_a_running_programs_trace_shows_its_recent_events)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl.zst");
	char *prog = mt_test_workload("wl_gate");
	char *argv[] = { prog, NULL };
	char *out = NULL, *err = NULL;
	size_t out_len = 0, err_len = 0;
	/* Well before the hang guard ends the program (and the collector
	 * then writes everything). */
	uint64_t end = mt_test_now_ms() + HANG_GUARD_S * 1000 / 2;
	long n = -1;
	run_t r;

	start_traced(&r, argv, trace, NULL, 1);
	read_until(r.out, &out, &out_len, "ready\n");
	while ((n = summary_allocations(trace)) < 1000 && mt_test_now_ms() < end)
		mt_test_sleep_ms(50);
	mt_quiet(n >= 1000, "the running program's trace counts %ld allocations", n);
	mt_quiet_int_eq(waitpid(r.pid, NULL, WNOHANG), 0);
	close(r.in);
	read_until(r.out, &out, &out_len, NULL);
	read_until(r.err, &err, &err_len, NULL);
	mt_quiet_int_eq(reap(&r), 7);
	assert_status(trace, "complete");
	close(r.out);
	close(r.err);
	free(out);
	free(err);
	free(prog);
	free(trace);
}
END_TEST

/* How often the most used of the first few allocated addresses of text
 * is allocated in it: enough to see addresses reused.  One pass, by hand
 * (strstr from each match would read the rest of the text each time,
 * which the sanitizers' strstr does). */
static long most_reused_ptr(const char *text)
{
	enum { CANDIDATES = 8, PTR_MAX = 24 };
	static const char key[] = "\"kind\":\"alloc\",\"allocator_id\":0,\"ptr\":\"";
	char cand[CANDIDATES][PTR_MAX];
	long count[CANDIDATES] = { 0 }, most = 0;
	int ncand = 0;

	for (const char *p = text; *p;) {
		const char *line = p, *at = NULL;
		size_t k = 0;

		while (*p && *p != '\n')
			p++;
		/* The key sits after {"v":1,"seq":N, in each alloc line. */
		for (const char *q = line; q < p && !at; q++)
			if (*q == '"' && q + sizeof(key) - 1 <= p &&
			    !memcmp(q, key, sizeof(key) - 1))
				at = q + sizeof(key) - 1;
		if (*p)
			p++;
		if (!at)
			continue;
		while (at + k < p && at[k] != '"' && k < PTR_MAX - 1)
			k++;
		for (int c = 0; c <= ncand; c++) {
			if (c == ncand) {
				if (ncand < CANDIDATES) {
					memcpy(cand[c], at, k);
					cand[c][k] = '\0';
					count[ncand++] = 1;
				}
				break;
			}
			if (strlen(cand[c]) == k && !memcmp(cand[c], at, k)) {
				count[c]++;
				break;
			}
		}
	}
	for (int c = 0; c < ncand; c++)
		if (count[c] > most)
			most = count[c];
	return most;
}

/*
 * Causal order across threads: one thread frees what another allocated,
 * and the allocator hands the address back to the first at once, so a
 * free and the allocation that reuses its address are recorded by two
 * threads close in time.  The free is reserved before the real free, the
 * allocation after the real malloc, so the trace has them in that order:
 * no address live twice (overlapping_allocs 0), no free of an address
 * not live (unknown_frees 0), and every one of the 200,000 blocks, with
 * addresses reused thousands of times.
 */
START_TEST(test_a_free_comes_before_the_alloc_that_reuses_its_address)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *prog = mt_test_workload("wl_handoff");
	char *argv[] = { prog, NULL };
	char *mt = mt_test_memtrace(), *sargv[] = { mt, "summary", trace, "--top", "0", NULL };
	mt_test_run_t r, sr;
	json_object *o;
	char *text;

	mt_test_run_traced(&r, argv, trace, NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "handoff 200000\n");
	ck_assert_str_eq(r.err, "");
	mt_test_run(&sr, sargv, NULL);
	o = json_tokener_parse(sr.out);
	mt_quiet(o != NULL, "summary printed %s", sr.out);
	ck_assert_str_eq(mt_test_json_str(o, "status"), "complete");
	mt_quiet_int_eq(mt_test_json_i64(o, "overlapping_allocs"), 0);
	mt_quiet_int_eq(mt_test_json_i64(o, "unknown_frees"), 0);
	json_object_put(o);
	mt_quiet_int_eq(mt_test_trace_count(trace, "alloc", 5555), 200000);
	text = mt_test_trace_text(trace, NULL, 1);
	mt_quiet(most_reused_ptr(text) >= 1000,
		 "no address was reused a thousand times: the test proves nothing here");
	free(text);
	mt_test_run_release(&sr);
	mt_test_run_release(&r);
	free(mt);
	free(prog);
	free(trace);
}
END_TEST

/* ---- the drain alone, driven on a ring in memory ---- */

/* Records of a fixed ring, and the lines they must become. */
typedef struct {
	mt_ring_slot_t *slots;
	size_t n, cap;
	mt_test_bytes_t want;
} fixed_ring_t;

#define RING_T0 5000000000ull
#define DRAIN_SLOTS 4096u

static mt_ring_slot_t *fixed_more(fixed_ring_t *f, size_t n)
{
	if (f->n + n > f->cap) {
		f->cap = f->cap ? f->cap * 2 : 1u << 16;
		f->slots = realloc(f->slots, f->cap * sizeof(*f->slots));
		mt_quiet_ptr_nonnull(f->slots);
	}
	memset(&f->slots[f->n], 0, n * sizeof(*f->slots));
	f->n += n;
	return &f->slots[f->n - n];
}

static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 11;
}

/*
 * Every kind of record the preload publishes, in a fixed pseudo-random
 * mix: block events of each kind and fn (a program's own allocator's
 * among them), alignments, fail_at, runs of three threads, times that
 * repeat, go back (a thread descheduled) and grow past 2^32; text
 * records of one to a dozen slots; a failed exec's stop and its
 * taking back; a block of a kind that has no line; trace.stop last.  The lines are made
 * with mt_jsonl's general appenders, not the block layout the drain
 * uses: a second spelling of the format.
 */
static void fixed_ring(fixed_ring_t *f, size_t events)
{
	static const mt_kind_t kinds[] = { MT_KIND_ALLOC, MT_KIND_ALLOC, MT_KIND_FREE,
					   MT_KIND_FREE, MT_KIND_RESIZE, MT_KIND_REMAP,
					   MT_KIND_ALLOC_FAIL };
	uint64_t x = 42, t = RING_T0, last = 0, seq = 0, tid = 1000;
	char line[4096];
	mt_jsonl_t l;

	for (size_t i = 0; i < events; i++) {
		uint64_t r = lcg(&x);

		if (i == events / 3) {
			/* An exec that failed: its stop is written and flushed,
			 * then taken back, and nothing of it stays. */
			mt_ring_stop_t *st = (mt_ring_stop_t *)fixed_more(f, 1);

			st->t = t + 5000;
			st->word = MT_RING_WORD(MT_REC_STOP, 1, MT_STOP_EXEC, 0, 0);
			fixed_more(f, 1)->word = MT_RING_WORD(MT_REC_UNSTOP, 1, 0, 0, 0);
		}
		if (i == events / 4) {
			/* A block record of a kind with no line (never published
			 * by the preload): no line, no seq, but its t is a floor. */
			mt_ring_block_t *b = (mt_ring_block_t *)fixed_more(f, 1);
			uint64_t lt = (t + 4000 - RING_T0) / 1000 * 1000;

			b->t = t + 4000;
			b->word = MT_RING_WORD(MT_REC_BLOCK, 1, MT_KIND_FRAME, 0, tid);
			last = lt > last ? lt : last;
		}
		if (r % 61 == 0) {
			/* A declaration: its line but seq, over as many slots as it takes. */
			char sym[700];
			size_t sl = 1 + lcg(&x) % (sizeof(sym) - 1), len, ns;
			mt_ring_slot_t *v;

			for (size_t k = 0; k < sl; k++)
				sym[k] = (char)('a' + (k * 7 + i) % 26);
			mt_jsonl_begin(&l, line, sizeof(line), 0, "frame");
			mt_jsonl_u64(&l, "frame_id", i + 1);
			mt_jsonl_hex(&l, "ip", lcg(&x));
			mt_jsonl_str(&l, "symbol", sym, sl, 0);
			len = mt_jsonl_end(&l);
			ns = (len + MT_RING_PAYLOAD - 1) / MT_RING_PAYLOAD;
			v = fixed_more(f, ns);
			for (size_t k = 0; k < ns; k++) {
				size_t off = k * MT_RING_PAYLOAD;

				memcpy(v[k].payload, line + off,
				       len - off < MT_RING_PAYLOAD ? len - off : MT_RING_PAYLOAD);
				v[k].word = k ? MT_RING_WORD(MT_REC_CONT, 0, 0, 0, 0)
					      : MT_RING_WORD(MT_REC_TEXT, ns, 0, 0, len);
			}
			/* The same line with its seq put in. */
			mt_test_bytes_addf(&f->want, "{\"v\":1,\"seq\":%llu",
					   (unsigned long long)++seq);
			mt_test_bytes_add(&f->want, line + 14, len - 14);
			continue;
		}
		{
			mt_ring_block_t *b = (mt_ring_block_t *)fixed_more(f, 1);
			mt_kind_t k = kinds[r % 7];
			uint64_t q = lcg(&x), lt;
			mt_fn_t fn;

			if (k == MT_KIND_FREE)
				fn = q % 5 == 0 ? MT_FN_REALLOC : q % 7 == 0 ? MT_FN_API : MT_FN_COUNT;
			else if (k == MT_KIND_RESIZE || k == MT_KIND_REMAP)
				fn = q % 9 == 0 ? MT_FN_API : MT_FN_REALLOC;
			else
				fn = (mt_fn_t)(lcg(&x) % MT_FN_FREE);
			if (r % 13 == 0)
				tid = 1000 + lcg(&x) % 3;
			if (r % 3 == 0)
				t += lcg(&x) % 5000;
			if (r % 17 == 0)
				t -= t > RING_T0 + 3000 ? 3000 : 0;
			if (i == events / 2)
				t += 5000000000ull; /* t past 2^32 */
			b->t = t;
			b->ptr = lcg(&x) & 0x7ffffffffff0ull;
			b->new_ptr = lcg(&x) & 0x7ffffffffff0ull;
			b->size = r % 11 == 0 ? lcg(&x) : lcg(&x) % 5000;
			if (fn == MT_FN_API)
				b->allocator_id = 1 + lcg(&x) % 3;
			else if (fn == MT_FN_POSIX_MEMALIGN || fn == MT_FN_ALIGNED_ALLOC ||
				 fn == MT_FN_MEMALIGN)
				b->align = 16u << (lcg(&x) % 8);
			b->stack = r % 4 == 0 ? 0 : 1 + lcg(&x) % 100000;
			b->fail_at = k == MT_KIND_ALLOC_FAIL && r % 2 ? 1 + i : 0;
			b->word = MT_RING_WORD(MT_REC_BLOCK, 1, k, fn, tid);
			lt = (t - RING_T0) / 1000 * 1000;
			if (lt < last)
				lt = last;
			last = lt;
			mt_jsonl_begin(&l, line, sizeof(line), ++seq, mt_event_kind_name(k));
			mt_jsonl_u64(&l, "allocator_id", fn == MT_FN_API ? b->allocator_id : 0);
			if (k != MT_KIND_ALLOC_FAIL)
				mt_jsonl_hex(&l, "ptr", b->ptr);
			if (k == MT_KIND_REMAP)
				mt_jsonl_hex(&l, "new_ptr", b->new_ptr);
			if (k != MT_KIND_FREE)
				mt_jsonl_u64(&l, "size", b->size);
			if (fn != MT_FN_COUNT)
				mt_jsonl_str(&l, "fn", mt_event_fn_name(fn),
					     strlen(mt_event_fn_name(fn)), 0);
			if (fn != MT_FN_API && b->align)
				mt_jsonl_u64(&l, "align", b->align);
			if (b->stack)
				mt_jsonl_u64(&l, "stack", b->stack);
			if (b->fail_at)
				mt_jsonl_u64(&l, "fail_at", b->fail_at);
			mt_jsonl_u64(&l, "tid", tid);
			mt_jsonl_u64(&l, "t", lt);
			mt_test_bytes_add(&f->want, line, mt_jsonl_end(&l));
		}
	}
	{
		mt_ring_stop_t *st = (mt_ring_stop_t *)fixed_more(f, 1);

		st->t = t + 999;
		st->dropped = 3;
		st->word = MT_RING_WORD(MT_REC_STOP, 1, MT_STOP_EXIT, 0, 0);
		mt_jsonl_begin(&l, line, sizeof(line), ++seq, "trace.stop");
		mt_jsonl_str(&l, "reason", "exit", 4, 0);
		mt_jsonl_u64(&l, "dropped", 3);
		mt_jsonl_u64(&l, "t", (t + 999 - RING_T0) / 1000 * 1000 > last
					      ? (t + 999 - RING_T0) / 1000 * 1000 : last);
		mt_test_bytes_add(&f->want, line, mt_jsonl_end(&l));
	}
}

/* Drain f's records through a ring of DRAIN_SLOTS into path, as the
 * collector does (mt_collect_open, step, close), a program's side that
 * publishes whole records while there is room. */
static void drain_fixed(const fixed_ring_t *f, const char *path, int level, int workers)
{
	mt_ring_hdr_t *h = calloc(1, MT_RING_HDR_SIZE + (size_t)DRAIN_SLOTS * MT_RING_SLOT);
	mt_collect_t c = { .pidfd = -1, .statfd = -1, .ring_fd = -1, .watched = 1 };
	char used[4096];
	uint64_t head = 0;
	size_t pos = 0;
	int st;

	mt_quiet_ptr_nonnull(h);
	h->magic = MT_RING_MAGIC;
	h->nslots = DRAIN_SLOTS;
	h->t0 = RING_T0;
	c.hdr = h;
	c.slots = (mt_ring_slot_t *)((char *)h + MT_RING_HDR_SIZE);
	c.program = getpid();
	mt_quiet_int_eq(mt_out_open(&c.out, path, 1, used, sizeof(used)), 0);
	if (mt_out_compressed(c.out))
		mt_quiet_int_eq(mt_out_set_zstd(c.out, level, workers), 0);
	c.path = used;
	mt_quiet_int_eq(mt_collect_open(&c), 0);
	for (st = MT_COLLECT_BUSY; st != MT_COLLECT_DONE;) {
		while (pos < f->n) {
			unsigned n = MT_RING_NSLOTS(f->slots[pos].word);

			if (head + n - atomic_load(&h->tail) > DRAIN_SLOTS)
				break;
			for (unsigned i = n; i-- > 0;)
				memcpy(&c.slots[(head + i) % DRAIN_SLOTS], &f->slots[pos + i],
				       MT_RING_SLOT);
			head += n;
			pos += n;
		}
		atomic_store(&h->head, head);
		c.ended = pos == f->n;
		while ((st = mt_collect_step(&c)) == MT_COLLECT_BUSY)
			;
	}
	mt_quiet_int_eq(mt_collect_close(&c), 0);
	free(h);
}

/* The decoded bytes of a zstd file (a plain one as it is). */
static mt_test_bytes_t read_decoded(const char *path)
{
	mt_test_bytes_t b = { 0 }, out = { 0 };
	ZSTD_DCtx *d;
	ZSTD_inBuffer in;
	char buf[1 << 16];

	b.data = mt_test_read(path, &b.len);
	mt_quiet(b.data != NULL, "cannot read %s", path);
	if (b.len < 4 || memcmp(b.data, "\x28\xb5\x2f\xfd", 4))
		return b;
	d = ZSTD_createDCtx();
	mt_quiet_ptr_nonnull(d);
	in = (ZSTD_inBuffer){ b.data, b.len, 0 };
	while (in.pos < in.size) {
		ZSTD_outBuffer ob = { buf, sizeof(buf), 0 };
		size_t r = ZSTD_decompressStream(d, &ob, &in);

		mt_quiet(!ZSTD_isError(r), "%s: %s", path, ZSTD_getErrorName(r));
		mt_test_bytes_add(&out, buf, ob.pos);
	}
	ZSTD_freeDCtx(d);
	free(b.data);
	return out;
}

/* Each frame of a zstd file holds whole lines, at most MT_OUT_CHUNK
 * bytes of them, and says how many (the analyzer cuts a trace by frame);
 * returns the frames. */
static size_t assert_whole_frames(const char *path)
{
	mt_test_bytes_t b = { 0 };
	size_t at = 0, frames = 0;
	char *lines = malloc(MT_OUT_CHUNK);

	mt_quiet_ptr_nonnull(lines);
	b.data = mt_test_read(path, &b.len);
	mt_quiet(b.data != NULL, "cannot read %s", path);
	while (at < b.len) {
		size_t z = ZSTD_findFrameCompressedSize(b.data + at, b.len - at);
		unsigned long long n = ZSTD_getFrameContentSize(b.data + at, b.len - at);
		size_t got;

		mt_quiet(!ZSTD_isError(z), "%s: frame %zu: %s", path, frames, ZSTD_getErrorName(z));
		mt_quiet(n >= 1 && n <= MT_OUT_CHUNK, "%s: frame %zu holds %llu bytes", path,
			 frames, n);
		got = ZSTD_decompress(lines, MT_OUT_CHUNK, b.data + at, z);
		mt_quiet(got == n && lines[n - 1] == '\n',
			 "%s: frame %zu does not end at a line's end", path, frames);
		at += z;
		frames++;
	}
	free(b.data);
	free(lines);
	return frames;
}

static void assert_drains_to(const fixed_ring_t *f, const char *dir, const char *name,
			     int level, int workers)
{
	char *path = mt_test_path(dir, name);
	mt_test_bytes_t got;

	drain_fixed(f, path, level, workers);
	if (level) {
		/* Frames close to a MiB, with workers too (which make the
		 * block lines themselves). */
		size_t frames = assert_whole_frames(path);

		mt_quiet(frames <= f->want.len / (MT_OUT_CHUNK - MT_OUT_CHUNK / 16) + 2,
			 "%s, %d workers: %zu frames for %zu bytes", name, workers, frames,
			 f->want.len);
	}
	got = read_decoded(path);
	mt_quiet(got.len == f->want.len, "%s, level %d, %d workers: %zu bytes, not %zu",
		 name, level, workers, got.len, f->want.len);
	mt_quiet(!memcmp(got.data, f->want.data, got.len),
		 "%s, level %d, %d workers: other lines than the ring's", name, level, workers);
	free(got.data);
	unlink(path);
	free(path);
}

START_TEST(test_the_drain_writes_a_fixed_ring_as_the_same_lines_however_compressed)
{
	char *dir = mt_test_scratch();
	fixed_ring_t f = { 0 };

	/* Some 12 MB of lines: a dozen frames, on the workers too. */
	fixed_ring(&f, 120000);
	mt_quiet_uint_gt(f.want.len, 8 * MT_OUT_CHUNK);
	assert_drains_to(&f, dir, "t.jsonl", 0, 0);
	assert_drains_to(&f, dir, "t.jsonl.zst", MT_OUT_LEVEL, 0);
	assert_drains_to(&f, dir, "t.jsonl.zst", -5, 0);
	assert_drains_to(&f, dir, "t.jsonl.zst", MT_OUT_LEVEL, 1);
	assert_drains_to(&f, dir, "t.jsonl.zst", MT_OUT_LEVEL, 2);
	free(f.slots);
	free(f.want.data);
}
END_TEST

Suite *mt_suite_collector(void)
{
	Suite *s = suite_create("collector");
	TCase *tc = tcase_create("write_path");

	tcase_add_test(tc, test_sigkill_mid_burst_loses_no_finished_event);
	tcase_add_test(tc, test_collector_killed_mid_run_leaves_the_program_running);
	tcase_add_test(tc, test_a_killed_collector_is_noticed_before_the_ring_fills);
	tcase_add_test(tc, test_bash_wait_does_not_wait_for_collectors);
	tcase_add_test(tc, test_sigchld_handler_sees_only_its_own_children);
	tcase_add_test(tc, test_full_ring_makes_writers_wait_and_drops_nothing);
	tcase_add_test(tc, test_zstd_workers_start_when_the_program_waits_for_room);
	tcase_add_test(tc, test_child_subreaper_reaps_its_orphans_and_ends);
	tcase_add_test(tc, test_threads_that_fork_leave_every_trace_complete);
	tcase_add_test(tc, test_zstd_trace_reads_back_and_summarizes_as_plain);
	tcase_add_test(tc, test_collector_holds_no_descriptor_of_the_program);
	tcase_add_test(tc, test_a_running_programs_trace_shows_its_recent_events);
	tcase_add_test(tc, test_a_free_comes_before_the_alloc_that_reuses_its_address);
	suite_add_tcase(s, tc);
	tc = tcase_create("drain");
	tcase_add_test(tc, test_the_drain_writes_a_fixed_ring_as_the_same_lines_however_compressed);
	suite_add_tcase(s, tc);
	return s;
}
