/*
 * check_process: whole programs and process trees under the preload, as
 * a user runs them: shells that hand their own copy of the environment
 * to their children, images that exec others and keep their pid, exec
 * that fails, children that end in _exit, signals that end a process,
 * make running recipes through the shell, a thread that forbids RDTSC
 * after it has allocated, a disk too small for the trace, and where a
 * tree's traces go (one place per traced command, whatever directory
 * each process starts in).  Each test holds the run's output and
 * exit status to the bare run's, and every trace file it left to being
 * its own process's, whole and cut to its length.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mt_test.h"
#include "mt_test_trace.h"

/* What most tests here make and drop: a directory, the trace name in it
 * (a pattern, perhaps), and the path of a workload (NULL: none). */
typedef struct {
	char *dir, *trace, *prog;
} scene_t;

static void scene_init(scene_t *sc, const char *wl, const char *trace_name)
{
	sc->dir = mt_test_scratch();
	sc->trace = mt_test_path(sc->dir, trace_name);
	sc->prog = wl ? mt_test_workload(wl) : NULL;
}

static void scene_release(scene_t *sc)
{
	free(sc->prog);
	free(sc->trace);
}

/* The exe and pid that the trace.start of dir/name names. */
static void trace_exe(const char *dir, const char *name, char *exe, size_t cap,
		      long *pid)
{
	char *path = mt_test_path(dir, name);
	json_object *o = mt_test_trace_start(path);
	const char *e = mt_test_json_opt_str(o, "exe");

	snprintf(exe, cap, "%s", e ? e : "");
	*pid = (long)mt_test_json_i64(o, "pid");
	json_object_put(o);
	free(path);
}

/* The last component of path. */
static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The trace of dir whose trace.start names an exe of base name exe and,
 * when pid is not 0, that pid; its name, or NULL. */
static const char *find_trace(char **names, size_t n, const char *dir,
			      const char *exe, long pid)
{
	for (size_t i = 0; i < n; i++) {
		char e[4096];
		long p;

		trace_exe(dir, names[i], e, sizeof(e), &p);
		if (!strcmp(base(e), exe) && (!pid || p == pid))
			return names[i];
	}
	return NULL;
}

/*
 * bash hands its children the environment it copied from main()'s envp
 * at its start: a name without %p reaches ls as it was given, unless the
 * preload changes envp itself before bash copies it.  ls would then empty
 * the file bash is writing through its mapping, and bash would die of
 * SIGBUS.
 */
START_TEST(test_bash_c_keeps_its_trace_under_a_name_without_pid)
{
	scene_t sc;
	char *argv[] = { "/bin/bash", "-c", "ls / >/dev/null; echo done", NULL };
	char **names, exe[4096];
	mt_test_run_t r;
	size_t n;
	long pid;

	scene_init(&sc, NULL, "t.jsonl");
	if (access(argv[0], X_OK) != 0) {
		MT_TEST_SKIP("needs bash (%s: %s)", argv[0], strerror(errno));
		goto out;
	}
	mt_test_run_traced(&r, argv, sc.trace, NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "done\n");
	/* t.jsonl is bash's; ls has a name of its own. */
	trace_exe(sc.dir, "t.jsonl", exe, sizeof(exe), &pid);
	ck_assert_str_eq(base(exe), "bash");
	n = mt_test_assert_traces_complete(sc.dir);
	mt_quiet_uint_ge(n, 2);
	names = mt_test_traces(sc.dir, &n);
	mt_quiet(find_trace(names, n, sc.dir, "ls", 0) != NULL, "no trace of ls");
	mt_test_traces_release(names, n);
	mt_test_run_release(&r);
out:
	scene_release(&sc);
}
END_TEST

/*
 * dash runs ls in a vfork child (untraced until it execs) and replaces
 * itself with cat: three images, three traces.  cat keeps dash's pid, so
 * it must not take dash's name: dash's trace ends with reason "exec", and
 * cat's is t.PID.jsonl.
 */
START_TEST(test_sh_c_exec_leaves_three_whole_traces)
{
	scene_t sc;
	char *argv[] = { "/bin/dash", "-c", "ls >/dev/null; exec cat /dev/null", NULL };
	char **names, exe[4096], want[64];
	const char *cat;
	mt_test_run_t r;
	size_t n;
	long pid, cat_pid;

	scene_init(&sc, NULL, "t.jsonl");
	if (access(argv[0], X_OK) != 0) {
		MT_TEST_SKIP("needs dash (%s: %s)", argv[0], strerror(errno));
		goto out;
	}
	mt_test_run_traced(&r, argv, sc.trace, NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet_uint_eq(mt_test_assert_traces_complete(sc.dir), 3);
	trace_exe(sc.dir, "t.jsonl", exe, sizeof(exe), &pid);
	ck_assert_str_eq(base(exe), "dash");
	mt_test_assert_trace_whole(sc.trace, "exec");
	names = mt_test_traces(sc.dir, &n);
	mt_quiet(find_trace(names, n, sc.dir, "ls", 0) != NULL, "no trace of ls");
	cat = find_trace(names, n, sc.dir, "cat", 0);
	mt_quiet(cat != NULL, "no trace of cat");
	trace_exe(sc.dir, cat, exe, sizeof(exe), &cat_pid);
	mt_quiet_int_eq(cat_pid, pid);
	snprintf(want, sizeof(want), "t.%ld.jsonl", pid);
	ck_assert_str_eq(cat, want);
	mt_test_traces_release(names, n);
	mt_test_run_release(&r);
out:
	scene_release(&sc);
}
END_TEST

/*
 * With %p in the name, an image that a process execs keeps the pid, so
 * the name alone is the old image's: the new one takes the next free
 * name, t.PID.1.jsonl, and the old trace stays whole.
 */
START_TEST(test_exec_keeps_the_pid_and_gets_a_name_of_its_own)
{
	scene_t sc;
	char *argv[] = { NULL, "self", NULL };
	char old_name[64], new_name[64], *old_path, *new_path, exe[4096];
	mt_test_run_t r;
	long pid, p;

	scene_init(&sc, "wl_exec", "t.%p.jsonl");
	argv[0] = sc.prog;
	mt_test_run_traced(&r, argv, sc.trace, NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet(sscanf(r.out, "pid %ld execs", &pid) == 1, "printed %s", r.out);
	mt_quiet_uint_eq(mt_test_assert_traces_complete(sc.dir), 2);
	snprintf(old_name, sizeof(old_name), "t.%ld.jsonl", pid);
	snprintf(new_name, sizeof(new_name), "t.%ld.1.jsonl", pid);
	old_path = mt_test_path(sc.dir, old_name);
	new_path = mt_test_path(sc.dir, new_name);
	mt_test_assert_trace_whole(old_path, "exec");
	mt_test_assert_trace_whole(new_path, "exit");
	mt_quiet_int_eq(mt_test_trace_count(old_path, "alloc", 555), 3);
	mt_quiet_int_eq(mt_test_trace_count(old_path, "alloc", 666), 0);
	mt_quiet_int_eq(mt_test_trace_count(new_path, "alloc", 666), 4);
	trace_exe(sc.dir, new_name, exe, sizeof(exe), &p);
	mt_quiet_int_eq(p, pid);
	free(old_path);
	free(new_path);
	mt_test_run_release(&r);
	scene_release(&sc);
}
END_TEST

/* An exec that fails returns to the program, whose trace goes on: one
 * trace, complete, with every allocation and no stop but the last. */
START_TEST(test_failed_exec_leaves_the_trace_going_on)
{
	scene_t sc;
	char *argv[] = { NULL, "fail", NULL };
	mt_test_run_t r;

	scene_init(&sc, "wl_exec", "t.jsonl");
	argv[0] = sc.prog;
	mt_test_run_traced(&r, argv, sc.trace, NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "exec failed: No such file or directory\n");
	mt_quiet_uint_eq(mt_test_assert_traces_complete(sc.dir), 1);
	mt_test_assert_trace_whole(sc.trace, "exit");
	mt_quiet_int_eq(mt_test_trace_count(sc.trace, "trace.stop", 0), 1);
	mt_quiet_int_eq(mt_test_trace_count(sc.trace, "alloc", 777), 3);
	mt_test_run_release(&r);
	scene_release(&sc);
}
END_TEST

/* Failed execs while two threads allocate: each exec's stop is taken
 * back though the other threads' events may have come after it in the
 * ring (the collector holds them until it knows), and their events stay,
 * every one, in one complete trace with a single trace.stop. */
START_TEST(test_failed_execs_amid_threads_lose_and_stop_nothing)
{
	scene_t sc;
	char *argv[] = { NULL, NULL };
	mt_test_run_t r;

	scene_init(&sc, "wl_execfail_threads", "t.jsonl");
	argv[0] = sc.prog;
	mt_test_run_traced(&r, argv, sc.trace, NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "execs failed 200\n");
	ck_assert_str_eq(r.err, "");
	mt_quiet_uint_eq(mt_test_assert_traces_complete(sc.dir), 1);
	mt_test_assert_trace_whole(sc.trace, "exit");
	mt_quiet_int_eq(mt_test_trace_count(sc.trace, "trace.stop", 0), 1);
	mt_quiet_int_eq(mt_test_trace_count(sc.trace, "alloc", 4343), 40000);
	mt_quiet_int_eq(mt_test_trace_count(sc.trace, "alloc", 4444), 200);
	mt_test_run_release(&r);
	scene_release(&sc);
}
END_TEST

/* Children that end in _exit run no destructor: the preload's _exit
 * writes their trace.stop and cuts their file. */
START_TEST(test_forked_children_that_underscore_exit_end_their_traces)
{
	scene_t sc;
	char *argv[] = { NULL, NULL };
	char **names;
	mt_test_run_t r;
	size_t n, children = 0;

	scene_init(&sc, "wl_forkexit", "t.jsonl");
	argv[0] = sc.prog;
	mt_test_run_traced(&r, argv, sc.trace, NULL);
	mt_quiet_int_eq(r.status, 0);
	mt_quiet_uint_eq(mt_test_assert_traces_complete(sc.dir), 5);
	names = mt_test_traces(sc.dir, &n);
	for (size_t i = 0; i < n; i++) {
		char *path = mt_test_path(sc.dir, names[i]);

		if (strcmp(names[i], "t.jsonl")) {
			mt_test_assert_trace_whole(path, "exit");
			mt_quiet_int_eq(mt_test_trace_count(path, "alloc", 4321), 3);
			children++;
		}
		free(path);
	}
	mt_quiet_uint_eq(children, 4);
	mt_test_traces_release(names, n);
	mt_test_run_release(&r);
	scene_release(&sc);
}
END_TEST

/* Whether this machine's kernel really makes RDTSC fault after
 * prctl(PR_SET_TSC, PR_TSC_SIGSEGV) (a hypervisor may let it through). */
static int rdtsc_traps(void)
{
#if defined(__x86_64__)
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		unsigned lo, hi;

		signal(SIGSEGV, SIG_DFL);
		if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV) != 0)
			_exit(2);
		__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
		_exit(0);
	}
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) &&
	       WTERMSIG(status) == SIGSEGV;
#else
	return 0;
#endif
}

/* wl_notsc run bare with argv, for test: 0, with test's skip line, where
 * the kernel refuses prctl(PR_SET_TSC) (it exits 3); else it exited 0,
 * and a note says so where RDTSC does not fault after PR_TSC_SIGSEGV, as
 * the crash a test guards against cannot show there.  The caller
 * releases bare either way. */
static int notsc_bare(mt_test_run_t *bare, char *argv[], const char *test)
{
	mt_test_run(bare, argv, NULL);
	if (bare->status == 3) {
		mt_test_skip(test, "the kernel refuses prctl(PR_SET_TSC) (wl_notsc exits 3 bare)");
		return 0;
	}
	mt_quiet_int_eq(bare->status, 0);
	if (!rdtsc_traps())
		printf("note: %s: RDTSC does not fault here after PR_TSC_SIGSEGV "
		       "(a hypervisor lets it through): the run is checked, the "
		       "crash it guards against cannot show\n", test);
	return 1;
}

/*
 * Threads that allocate, then forbid RDTSC (one through prctl, one
 * through syscall), then allocate again: traced, the program runs as it
 * does bare.  Where the kernel does not enforce the prctl the crash cannot
 * show, and the test says so; it still holds the run and its trace.
 */
START_TEST(test_thread_that_forbids_rdtsc_after_allocating_runs_traced)
{
	scene_t sc;
	char *argv[] = { NULL, NULL };
	mt_test_run_t bare, r;

	scene_init(&sc, "wl_notsc", "t.jsonl");
	argv[0] = sc.prog;
	if (!notsc_bare(&bare, argv, __func__))
		goto out_bare;
	for (int round = 0; round < 3; round++) {
		mt_test_run_traced(&r, argv, sc.trace, NULL);
		mt_quiet(r.status == 0, "round %d: the traced run ended with %d: %s",
			 round, r.status, r.err);
		ck_assert_str_eq(r.out, bare.out);
		mt_test_assert_trace_whole(sc.trace, "exit");
		mt_quiet_int_eq(mt_test_trace_count(sc.trace, "alloc", 48), 200);
		mt_test_run_release(&r);
	}
out_bare:
	mt_test_run_release(&bare);
	scene_release(&sc);
}
END_TEST

/*
 * Threads that forbid RDTSC, then fork a child each, under
 * MEMTRACE_STATS=1: the child inherits the setting, through its fork
 * and through the exec of its collector.  The start line's clock, read at
 * the fork, must not be the vDSO's RDTSC (the child died of SIGSEGV), nor
 * may the collector die of it (the child ran untraced): each child exits
 * 0 as it does bare, and has its trace and its start line.
 */
START_TEST(test_a_child_forked_by_a_thread_that_forbids_rdtsc_runs_under_stats)
{
	scene_t sc;
	char *argv[] = { NULL, "fork", NULL }, *pattern, **names;
	mt_test_run_t bare, r;
	size_t n = 0;

	scene_init(&sc, "wl_notsc", "t.jsonl");
	pattern = mt_test_path(sc.dir, "t.%p.jsonl");
	argv[0] = sc.prog;
	if (!notsc_bare(&bare, argv, __func__))
		goto out_bare;
	mt_test_run_traced(&r, argv, pattern, "MEMTRACE_STATS=1");
	mt_quiet(r.status == 0, "the traced run ended with %d: %s", r.status, r.err);
	ck_assert_str_eq(r.out, bare.out);
	mt_quiet(!strstr(r.err, "cannot open trace"), "stderr: %s", r.err);
	mt_quiet(strstr(r.err, "memtrace: start: fork ") != NULL, "stderr: %s", r.err);
	mt_test_run_release(&r);
	names = mt_test_traces(sc.dir, &n);
	mt_quiet_uint_eq(n, 3);
	mt_quiet_uint_eq(mt_test_assert_traces_complete(sc.dir), 3);
	mt_test_traces_release(names, n);
out_bare:
	mt_test_run_release(&bare);
	free(pattern);
	scene_release(&sc);
}
END_TEST

/*
 * A signal whose default action ends the process (SIGTERM sent while the
 * thread allocates, often inside the tracer; SIGPIPE from a write): the
 * trace ends with trace.stop (reason "signal"), cut to its length, and
 * the process still dies of the signal.  Three rounds of SIGTERM, each
 * landing somewhere else in the allocation loop.
 */
START_TEST(test_signals_that_end_the_process_end_the_trace)
{
	static const struct {
		const char *mode;
		int sig;
		long size;
		int rounds;
	} cases[] = { { "term", SIGTERM, 999, 3 }, { "pipe", SIGPIPE, 888, 1 } };
	scene_t sc;

	scene_init(&sc, "wl_signals", "t.jsonl");
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		for (int round = 0; round < cases[c].rounds; round++) {
			char *argv[] = { sc.prog, (char *)cases[c].mode, NULL };
			mt_test_run_t r;

			mt_test_run_traced(&r, argv, sc.trace, NULL);
			mt_quiet(r.status == 128 + cases[c].sig, "%s, round %d: status %d",
				 cases[c].mode, round, r.status);
			mt_test_assert_trace_whole(sc.trace, "signal");
			mt_quiet_int_eq(mt_test_trace_count(sc.trace, "alloc", cases[c].size), 1);
			mt_test_run_release(&r);
		}
	}
	scene_release(&sc);
}
END_TEST

/* The handlers that end the trace are the program's business only where
 * it looks: sigaction() and signal() show the default it had, a handler
 * it sets is its own, and it prints what it prints bare. */
START_TEST(test_the_program_sees_the_default_actions_it_did_not_change)
{
	scene_t sc;
	char *argv[] = { NULL, "show", NULL };
	mt_test_run_t bare, r;

	scene_init(&sc, "wl_signals", "t.jsonl");
	argv[0] = sc.prog;
	mt_test_run(&bare, argv, NULL);
	mt_quiet_int_eq(bare.status, 0);
	mt_quiet(strstr(bare.out, "sigaction TERM: default\n") != NULL, "%s", bare.out);
	mt_test_run_traced(&r, argv, sc.trace, NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, bare.out);
	mt_test_assert_trace_whole(sc.trace, "exit");
	mt_test_run_release(&r);
	mt_test_run_release(&bare);
	scene_release(&sc);
}
END_TEST

/* An action ignored at the start (nohup's SIGHUP, a parent's SIGPIPE) is
 * the program's: the handler that went in for a moment, every signal
 * blocked, comes out again, and the program sees and gets what it does
 * bare. */
START_TEST(test_actions_ignored_at_the_start_stay_ignored)
{
	scene_t sc;
	char script[4096];
	char *argv[] = { "/bin/sh", "-c", script, NULL };
	mt_test_run_t bare, r;

	scene_init(&sc, "wl_signals", "t.%p.jsonl");
	snprintf(script, sizeof(script), "trap '' HUP PIPE; exec '%s' show", sc.prog);
	mt_test_run(&bare, argv, NULL);
	mt_quiet_int_eq(bare.status, 0);
	mt_quiet(strstr(bare.out, "sigaction HUP: ignored\n") != NULL, "%s", bare.out);
	mt_test_run_traced(&r, argv, sc.trace, NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, bare.out);
	mt_test_run_release(&r);
	mt_test_run_release(&bare);
	scene_release(&sc);
}
END_TEST

/*
 * Python makes SIGINT raise KeyboardInterrupt only where it finds the
 * default action at its start, and after an unhandled one it puts the
 * default back and kills itself with SIGINT: traced, it keeps both, and
 * its trace ends with the signal.
 */
START_TEST(test_python_keeps_keyboard_interrupt_and_its_trace_ends)
{
	scene_t sc;
	char *argv[] = { "/usr/bin/python3", "-c",
			 "import os, signal\n"
			 "print(signal.getsignal(signal.SIGINT).__name__, flush=True)\n"
			 "os.kill(os.getpid(), signal.SIGINT)\n",
			 NULL };
	mt_test_run_t bare, r;

	scene_init(&sc, NULL, "t.jsonl");
	if (access(argv[0], X_OK) != 0) {
		MT_TEST_SKIP("needs python3 (%s: %s)", argv[0], strerror(errno));
		goto out;
	}
	mt_test_run(&bare, argv, NULL);
	mt_quiet_int_eq(bare.status, 128 + SIGINT);
	ck_assert_str_eq(bare.out, "default_int_handler\n");
	mt_test_run_traced(&r, argv, sc.trace, NULL);
	mt_quiet_int_eq(r.status, 128 + SIGINT);
	ck_assert_str_eq(r.out, bare.out);
	mt_quiet(strstr(r.err, "KeyboardInterrupt") != NULL, "%s", r.err);
	mt_test_assert_trace_whole(sc.trace, "signal");
	mt_test_run_release(&r);
	mt_test_run_release(&bare);
out:
	scene_release(&sc);
}
END_TEST

/* A file system of size bytes mounted on a new directory; NULL (with a
 * skip line) where this process may not mount one.  The mount is made in
 * a mount namespace of the test's own where it can have one, so that it
 * goes with the test's process even when an assertion ends the test
 * before its unmount. */
static char *mount_small_tmpfs(const char *test, const char *size)
{
	char *dir = mt_test_scratch(), opts[64];

	if (unshare(CLONE_NEWNS) == 0)
		mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
	snprintf(opts, sizeof(opts), "size=%s,mode=0700", size);
	if (mount("memtrace-test", dir, "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0) {
		mt_test_skip(test, "cannot mount a %s tmpfs (mount: %s)", size,
			     strerror(errno));
		return NULL;
	}
	return dir;
}

/*
 * A 2 MiB disk cannot hold a 16 MiB window, nor the trace of 100,000
 * allocations: the trace keeps what fits, whole lines from trace.start
 * on, stderr says so once, and the program runs on to its normal end.
 */
START_TEST(test_small_tmpfs_keeps_what_fits)
{
	char *dir = mount_small_tmpfs(__func__, "2m"), *trace;
	char *prog = mt_test_workload("wl_fill");
	char *argv[] = { prog, "100000", NULL };
	mt_test_run_t r;
	struct stat st;
	char *status;

	if (!dir)
		goto out;
	trace = mt_test_path(dir, "t.jsonl");
	mt_test_run_traced(&r, argv, trace, NULL);
	mt_quiet_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "fill: 100000\n");
	ck_assert_str_eq(r.err, "memtrace: cannot write the trace: No space left "
				"on device; it keeps what was written, tracing "
				"stops, the program runs on\n");
	mt_test_assert_trace_cut(trace);
	mt_quiet_int_eq(stat(trace, &st), 0);
	mt_quiet_uint_le((uintmax_t)st.st_size, 2u << 20);
	/* Most of the disk is the trace: windows shrink to what is left. */
	mt_quiet_uint_ge((uintmax_t)st.st_size, 1u << 20);
	mt_quiet_uint_ge(mt_test_trace_count(trace, "alloc", 100), 1000);
	status = mt_test_check_status(trace);
	ck_assert_str_eq(status, "missing_stop_event");
	free(status);
	mt_test_run_release(&r);
	umount2(dir, MNT_DETACH);
	free(trace);
out:
	free(prog);
}
END_TEST

/*
 * make -j2 of a small C project whose recipes go through the shell: make,
 * the shells, the compiler driver, cc1, as and ld each write a trace of
 * their own, and every one is complete and cut to its length.
 */
START_TEST(test_make_j2_through_the_shell_leaves_every_trace_complete)
{
	char *dir = mt_test_scratch(), *traces = mt_test_path(dir, "traces");
	char *src = mt_test_path(dir, "src"), *trace = mt_test_path(traces, "t.jsonl");
	char *mk = mt_test_path(src, "Makefile");
	char *argv[] = { "/usr/bin/make", "-s", "-j2", "-C", src, NULL };
	static const char *const files[] = { "a.c", "b.c", "main.c" };
	static const char *const bodies[] = {
		"#include <stdlib.h>\nint a(void) { return 1; }\n",
		"#include <string.h>\nint b(void) { return 2; }\n",
		"int a(void); int b(void);\nint main(void) { return a() + b() - 3; }\n",
	};
	mt_test_run_t r;
	size_t n;

	if (access(argv[0], X_OK) != 0 || system("cc --version >/dev/null 2>&1") != 0) {
		MT_TEST_SKIP("needs make and cc (%s)", argv[0]);
		goto out;
	}
	mt_quiet_int_eq(mkdir(traces, 0700), 0);
	mt_quiet_int_eq(mkdir(src, 0700), 0);
	for (size_t i = 0; i < 3; i++) {
		char *p = mt_test_path(src, files[i]);

		mt_test_write(p, bodies[i], strlen(bodies[i]));
		free(p);
	}
	/* Every recipe has a ; or &&, so make runs it with sh -c. */
	mt_test_write(mk, "prog: a.o b.o main.o\n"
			  "\t@echo linking; cc -o $@ a.o b.o main.o && test -x $@\n"
			  "%.o: %.c\n"
			  "\t@test -f $< && cc -O1 -c $< -o $@\n",
		      strlen("prog: a.o b.o main.o\n"
			     "\t@echo linking; cc -o $@ a.o b.o main.o && test -x $@\n"
			     "%.o: %.c\n"
			     "\t@test -f $< && cc -O1 -c $< -o $@\n"));
	mt_test_run_traced(&r, argv, trace, "MEMTRACE_STACK_DEPTH=8");
	mt_quiet(r.status == 0, "make ended with %d: %s", r.status, r.err);
	ck_assert_str_eq(r.out, "linking\n");
	n = mt_test_assert_traces_complete(traces);
	/* make, 4 shells, 4 cc drivers, 3 cc1, 3 as, collect2, ld, tests. */
	mt_quiet_uint_ge(n, 15);
	mt_test_run_release(&r);
out:
	free(mk);
	free(trace);
	free(src);
	free(traces);
}
END_TEST

/* The names in dir but "." and "..", sorted, as mt_test_traces gives
 * them (release with mt_test_traces_release). */
static char **entries(const char *dir, size_t *n)
{
	char **all = mt_test_traces_ending(dir, "", n);
	size_t k = 0;

	for (size_t i = 0; i < *n; i++) {
		if (!strcmp(all[i], ".") || !strcmp(all[i], ".."))
			free(all[i]);
		else
			all[k++] = all[i];
	}
	*n = k;
	return all;
}

/*
 * Run bash -c script from dir under the preload, with MEMTRACE_OUTPUT
 * set to output (NULL: unset), after the shell commands pre (which may
 * use $$, bash's pid to be); bash's pid into *pid.  bash forks and execs
 * in a subdirectory: where each process starts must not decide where its
 * trace goes.
 */
static void run_bash_after(mt_test_run_t *r, const char *dir, const char *pre,
			   const char *output, const char *script, long *pid)
{
	char cmd[8192];
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	char out[4200] = "";

	if (output)
		snprintf(out, sizeof(out), "MEMTRACE_OUTPUT='%s' ", output);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && unset MEMTRACE_OUTPUT && %s echo $$ && "
		 "%sLD_PRELOAD='%s/libmtpreload.so' exec /bin/bash -c '%s'",
		 dir, pre, out, mt_test_build_dir(), script);
	mt_test_run(r, argv, NULL);
	mt_quiet(r->status == 0, "bash ended with %d: %s", r->status, r->err);
	mt_quiet(sscanf(r->out, "%ld", pid) == 1, "printed %s", r->out);
}

/* run_bash_after() with nothing before. */
static void run_bash_in(mt_test_run_t *r, const char *dir, const char *output,
			const char *script, long *pid)
{
	run_bash_after(r, dir, "", output, script, pid);
}

/* A relative MEMTRACE_OUTPUT names every trace of the tree beside the
 * first process's, wherever the others start: after `cd sub`, bash's
 * forked child, the ls it execs and the cat bash execs itself write in
 * the directory bash started in, and none in sub. */
START_TEST(test_a_relative_output_puts_every_trace_where_the_first_process_started)
{
	char *dir = mt_test_scratch(), *sub = mt_test_path(dir, "sub");
	char **names, want[64];
	const char *cat;
	mt_test_run_t r;
	size_t n;
	long pid, p;
	char exe[4096];

	if (access("/bin/bash", X_OK) != 0) {
		MT_TEST_SKIP("needs bash (/bin/bash: %s)", strerror(errno));
		goto out;
	}
	mt_quiet_int_eq(mkdir(sub, 0700), 0);
	run_bash_in(&r, dir, "t.jsonl", "cd sub && ls >/dev/null; exec cat /dev/null", &pid);
	names = entries(sub, &n);
	mt_quiet(n == 0, "%zu files in sub, the first %s", n, n ? names[0] : "");
	mt_test_traces_release(names, n);
	/* bash, its forked child, ls, cat. */
	mt_quiet_uint_eq(mt_test_assert_traces_complete(dir), 4);
	trace_exe(dir, "t.jsonl", exe, sizeof(exe), &p);
	ck_assert_str_eq(base(exe), "bash");
	mt_quiet_int_eq(p, pid);
	names = mt_test_traces(dir, &n);
	mt_quiet(find_trace(names, n, dir, "ls", 0) != NULL, "no trace of ls");
	cat = find_trace(names, n, dir, "cat", pid);
	mt_quiet(cat != NULL, "no trace of cat");
	snprintf(want, sizeof(want), "t.%ld.jsonl", pid);
	ck_assert_str_eq(cat, want);
	mt_test_traces_release(names, n);
	mt_test_run_release(&r);
out:
	free(sub);
}
END_TEST

/* The same with %p in the relative name: the first process resolves it
 * once for the tree. */
START_TEST(test_a_relative_pattern_with_pid_is_resolved_once_for_the_tree)
{
	char *dir = mt_test_scratch(), *sub = mt_test_path(dir, "sub");
	char **names;
	mt_test_run_t r;
	size_t n;
	long pid;

	if (access("/bin/bash", X_OK) != 0) {
		MT_TEST_SKIP("needs bash (/bin/bash: %s)", strerror(errno));
		goto out;
	}
	mt_quiet_int_eq(mkdir(sub, 0700), 0);
	run_bash_in(&r, dir, "t.%p.jsonl", "cd sub && ls >/dev/null; exec cat /dev/null", &pid);
	names = entries(sub, &n);
	mt_quiet(n == 0, "%zu files in sub, the first %s", n, n ? names[0] : "");
	mt_test_traces_release(names, n);
	mt_quiet_uint_eq(mt_test_assert_traces_complete(dir), 4);
	names = mt_test_traces(dir, &n);
	mt_quiet(find_trace(names, n, dir, "ls", 0) != NULL, "no trace of ls");
	mt_quiet(find_trace(names, n, dir, "cat", pid) != NULL, "no trace of cat");
	mt_test_traces_release(names, n);
	mt_test_run_release(&r);
out:
	free(sub);
}
END_TEST

/* Without MEMTRACE_OUTPUT the directory the command starts in gets one
 * entry, memtrace.bash.PID, made 0700, which holds the trace of every
 * process of the tree; src, where they went, gets none. */
START_TEST(test_the_default_output_keeps_a_whole_tree_in_one_directory)
{
	char *dir = mt_test_scratch(), *sub = mt_test_path(dir, "src"), *tree;
	char **names, want[64], name[64], exe[4096];
	const char *child;
	mt_test_run_t r;
	struct stat st;
	size_t n;
	long pid, child_pid, ppid;

	if (access("/bin/bash", X_OK) != 0) {
		MT_TEST_SKIP("needs bash (/bin/bash: %s)", strerror(errno));
		goto out;
	}
	mt_quiet_int_eq(mkdir(sub, 0700), 0);
	run_bash_in(&r, dir, NULL, "cd src && ls >/dev/null; exec cat /dev/null", &pid);
	names = entries(sub, &n);
	mt_quiet(n == 0, "%zu files in sub, the first %s", n, n ? names[0] : "");
	mt_test_traces_release(names, n);
	snprintf(want, sizeof(want), "memtrace.bash.%ld", pid);
	names = entries(dir, &n);
	mt_quiet_uint_eq(n, 2);
	ck_assert_str_eq(names[0], want);
	ck_assert_str_eq(names[1], "src");
	mt_test_traces_release(names, n);
	tree = mt_test_path(dir, want);
	mt_quiet_int_eq(stat(tree, &st), 0);
	mt_quiet(S_ISDIR(st.st_mode), "%s is no directory", tree);
	mt_quiet_int_eq((int)(st.st_mode & 07777), 0700);
	mt_quiet_uint_eq(mt_test_assert_traces_complete_ending(tree, ".jsonl.zst"), 4);
	/* docs/preload-use.md, "Where traces go", shows this listing. */
	names = mt_test_traces_ending(tree, ".jsonl.zst", &n);
	snprintf(name, sizeof(name), "memtrace.%ld.jsonl.zst", pid);
	ck_assert_str_eq(find_trace(names, n, tree, "bash", pid), name);
	snprintf(name, sizeof(name), "memtrace.%ld.1.jsonl.zst", pid);
	ck_assert_str_eq(find_trace(names, n, tree, "cat", pid), name);
	child = find_trace(names, n, tree, "ls", 0);
	mt_quiet(child != NULL, "no trace of ls");
	trace_exe(tree, child, exe, sizeof(exe), &child_pid);
	snprintf(name, sizeof(name), "memtrace.%ld.1.jsonl.zst", child_pid);
	ck_assert_str_eq(child, name);
	snprintf(name, sizeof(name), "memtrace.%ld.jsonl.zst", child_pid);
	trace_exe(tree, name, exe, sizeof(exe), &child_pid);
	ck_assert_str_eq(base(exe), "bash");
	{
		char *path = mt_test_path(tree, name);
		json_object *start = mt_test_trace_start(path);

		ppid = (long)mt_test_json_i64(start, "ppid");
		json_object_put(start);
		free(path);
	}
	mt_quiet_int_eq(ppid, pid);
	mt_test_traces_release(names, n);
	free(tree);
	mt_test_run_release(&r);
out:
	free(sub);
}
END_TEST

/* An image a process execs keeps its pid but never its parent's name,
 * wherever it starts: bash's trace is memtrace.PID.jsonl.zst, and cat,
 * exec'd after `cd sub`, takes memtrace.PID.1.jsonl.zst beside it. */
START_TEST(test_an_exec_image_never_takes_the_name_of_its_parents_trace)
{
	char *dir = mt_test_scratch(), *sub = mt_test_path(dir, "sub"), *tree;
	char **names, want[64], old_name[64], new_name[64];
	mt_test_run_t r;
	size_t n;
	long pid;

	if (access("/bin/bash", X_OK) != 0) {
		MT_TEST_SKIP("needs bash (/bin/bash: %s)", strerror(errno));
		goto out;
	}
	mt_quiet_int_eq(mkdir(sub, 0700), 0);
	run_bash_in(&r, dir, NULL, "cd sub && exec cat /dev/null", &pid);
	names = entries(sub, &n);
	mt_quiet(n == 0, "%zu files in sub, the first %s", n, n ? names[0] : "");
	mt_test_traces_release(names, n);
	snprintf(want, sizeof(want), "memtrace.bash.%ld", pid);
	tree = mt_test_path(dir, want);
	mt_quiet_uint_eq(mt_test_assert_traces_complete_ending(tree, ".jsonl.zst"), 2);
	snprintf(old_name, sizeof(old_name), "memtrace.%ld.jsonl.zst", pid);
	snprintf(new_name, sizeof(new_name), "memtrace.%ld.1.jsonl.zst", pid);
	names = mt_test_traces_ending(tree, ".jsonl.zst", &n);
	ck_assert_str_eq(find_trace(names, n, tree, "bash", pid), old_name);
	ck_assert_str_eq(find_trace(names, n, tree, "cat", pid), new_name);
	mt_test_traces_release(names, n);
	free(tree);
	mt_test_run_release(&r);
out:
	free(sub);
}
END_TEST

/* A directory of the default name that exists (an earlier run whose
 * first process had the same pid, or the user's) is never written into:
 * the run takes memtrace.bash.PID.1, and the other stays as it was. */
START_TEST(test_the_default_directory_of_an_earlier_run_is_never_reused)
{
	char *dir = mt_test_scratch(), *old, *tree;
	char **names, want[64];
	mt_test_run_t r;
	size_t n;
	long pid;

	if (access("/bin/bash", X_OK) != 0) {
		MT_TEST_SKIP("needs bash (/bin/bash: %s)", strerror(errno));
		goto out;
	}
	run_bash_after(&r, dir, "mkdir memtrace.bash.$$ &&", NULL, "ls >/dev/null", &pid);
	snprintf(want, sizeof(want), "memtrace.bash.%ld", pid);
	old = mt_test_path(dir, want);
	names = entries(old, &n);
	mt_quiet(n == 0, "%zu files in %s, the first %s", n, want, n ? names[0] : "");
	mt_test_traces_release(names, n);
	snprintf(want, sizeof(want), "memtrace.bash.%ld.1", pid);
	tree = mt_test_path(dir, want);
	mt_quiet_uint_ge(mt_test_assert_traces_complete_ending(tree, ".jsonl.zst"), 1);
	names = mt_test_traces_ending(tree, ".jsonl.zst", &n);
	mt_quiet(find_trace(names, n, tree, "bash", pid) != NULL ||
		 find_trace(names, n, tree, "ls", pid) != NULL, "no trace of bash's pid");
	mt_test_traces_release(names, n);
	free(tree);
	free(old);
	mt_test_run_release(&r);
out:;
}
END_TEST

/* A '%' in the name of the directory the first process starts in is
 * the directory's, not a pattern's: the traces go into it. */
START_TEST(test_a_percent_sign_in_the_starting_directory_stays_in_the_name)
{
	char *top = mt_test_scratch(), *dir = mt_test_path(top, "a%pb%%c");
	mt_test_run_t r;
	long pid;

	if (access("/bin/bash", X_OK) != 0) {
		MT_TEST_SKIP("needs bash (/bin/bash: %s)", strerror(errno));
		goto out;
	}
	mt_quiet_int_eq(mkdir(dir, 0700), 0);
	run_bash_in(&r, dir, "t.jsonl", "ls >/dev/null; true", &pid);
	mt_quiet_uint_ge(mt_test_assert_traces_complete(dir), 2);
	mt_test_run_release(&r);
out:
	free(dir);
}
END_TEST

/* A tree that starts in a directory removed since cannot write beside
 * it: one line says so, and the tree runs untraced, its output, stderr
 * and status those of the bare run but for that line. */
START_TEST(test_a_removed_starting_directory_is_said_once_and_runs_untraced)
{
	static const char line[] = "memtrace: cannot name the current directory for the traces: "
				   "No such file or directory; the program runs untraced\n";
	char *dir = mt_test_scratch(), cmd[8192];
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	mt_test_run_t bare, r;

	for (int traced = 0; traced < 2; traced++) {
		snprintf(cmd, sizeof(cmd),
			 "cd '%s' && mkdir gone%d && cd gone%d && rmdir ../gone%d && "
			 "unset MEMTRACE_OUTPUT && %s%s%s exec /bin/bash -c "
			 "'ls / >/dev/null; (echo done); exit 3' 2>&1",
			 dir, traced, traced, traced, traced ? "LD_PRELOAD='" : "",
			 traced ? mt_test_build_dir() : "", traced ? "/libmtpreload.so'" : "");
		mt_test_run(traced ? &r : &bare, argv, NULL);
	}
	mt_quiet_int_eq(bare.status, 3);
	mt_quiet_int_eq(r.status, 3);
	mt_quiet(strlen(r.out) == strlen(line) + strlen(bare.out) &&
		 !strncmp(r.out, line, strlen(line)) && !strcmp(r.out + strlen(line), bare.out),
		 "bare:\n%straced:\n%s", bare.out, r.out);
	mt_quiet(strstr(bare.out, "done\n") != NULL, "bare: %s", bare.out);
	mt_test_run_release(&bare);
	mt_test_run_release(&r);
}
END_TEST

Suite *mt_suite_process(void)
{
	Suite *s = suite_create("process");
	TCase *tc = tcase_create("trees");

	tcase_add_test(tc, test_bash_c_keeps_its_trace_under_a_name_without_pid);
	tcase_add_test(tc, test_sh_c_exec_leaves_three_whole_traces);
	tcase_add_test(tc, test_exec_keeps_the_pid_and_gets_a_name_of_its_own);
	tcase_add_test(tc, test_failed_exec_leaves_the_trace_going_on);
	tcase_add_test(tc, test_failed_execs_amid_threads_lose_and_stop_nothing);
	tcase_add_test(tc, test_forked_children_that_underscore_exit_end_their_traces);
	tcase_add_test(tc, test_thread_that_forbids_rdtsc_after_allocating_runs_traced);
	tcase_add_test(tc, test_a_child_forked_by_a_thread_that_forbids_rdtsc_runs_under_stats);
	tcase_add_test(tc, test_signals_that_end_the_process_end_the_trace);
	tcase_add_test(tc, test_the_program_sees_the_default_actions_it_did_not_change);
	tcase_add_test(tc, test_actions_ignored_at_the_start_stay_ignored);
	tcase_add_test(tc, test_python_keeps_keyboard_interrupt_and_its_trace_ends);
	tcase_add_test(tc, test_small_tmpfs_keeps_what_fits);
	tcase_add_test(tc, test_make_j2_through_the_shell_leaves_every_trace_complete);
	tcase_add_test(tc, test_a_relative_output_puts_every_trace_where_the_first_process_started);
	tcase_add_test(tc, test_a_relative_pattern_with_pid_is_resolved_once_for_the_tree);
	tcase_add_test(tc, test_the_default_output_keeps_a_whole_tree_in_one_directory);
	tcase_add_test(tc, test_an_exec_image_never_takes_the_name_of_its_parents_trace);
	tcase_add_test(tc, test_the_default_directory_of_an_earlier_run_is_never_reused);
	tcase_add_test(tc, test_a_percent_sign_in_the_starting_directory_stays_in_the_name);
	tcase_add_test(tc, test_a_removed_starting_directory_is_said_once_and_runs_untraced);
	suite_add_tcase(s, tc);
	return s;
}
