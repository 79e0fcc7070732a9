/*
 * check_record: `memtrace record -- CMD` (docs/record.md): one collector,
 * the command's parent, serves every process of the command's tree, so no
 * collector is ever inside the tree: a subreaper or a pid namespace's init
 * waits for and counts only its own children, and a tree costs one process
 * more, not one per process.  Record is as transparent as a parent can be:
 * the command's status, its standard streams, the signals sent to record.
 * Plain LD_PRELOAD where it cannot be invisible says so and leaves the
 * tree untraced.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../collector/mt_out.h"
#include "mt_test.h"
#include "mt_test_trace.h"

#define SUBREAPER_LINE                                                        \
	"memtrace: this process is a child subreaper: its collectors would be " \
	"its children; trace it with memtrace record\n"

/* The *.jsonl.zst files in dir, sorted (malloc'd names). */
static char **zst_traces(const char *dir, size_t *n)
{
	return mt_test_traces_ending(dir, ".jsonl.zst", n);
}

/* Every trace in dir is complete and ends whole; returns how many. */
static size_t assert_complete(const char *dir)
{
	return mt_test_assert_traces_complete_ending(dir, ".jsonl.zst");
}

/* The allocations of size bytes over every trace in dir. */
static int count_all(const char *dir, long size)
{
	size_t n;
	char **names = zst_traces(dir, &n);
	int sum = 0;

	for (size_t i = 0; i < n; i++) {
		char *path = mt_test_path(dir, names[i]);

		sum += mt_test_trace_count(path, "alloc", size);
		free(path);
		free(names[i]);
	}
	free(names);
	return sum;
}

/* The trace in dir whose trace.start says pid (malloc'd path), or NULL. */
static char *trace_of_pid(const char *dir, long pid)
{
	size_t n;
	char **names = zst_traces(dir, &n), *found = NULL;

	for (size_t i = 0; i < n; i++) {
		char *path = mt_test_path(dir, names[i]);
		json_object *start = mt_test_trace_start(path);

		if (!found && mt_test_json_i64(start, "pid") == pid)
			found = strdup(path);
		json_object_put(start);
		free(path);
		free(names[i]);
	}
	free(names);
	return found;
}

/* Run `memtrace record -o out -- args...` (args NULL-terminated) with
 * extra environment entries env (NULL or NULL-terminated). */
static void record_env(mt_test_run_t *r, const char *out, char *const args[], char *const env[])
{
	char *argv[32];
	size_t n = 0;

	argv[n++] = mt_test_memtrace();
	argv[n++] = "record";
	argv[n++] = "-o";
	argv[n++] = (char *)out;
	argv[n++] = "--";
	for (size_t i = 0; args[i]; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	mt_test_run(r, argv, env);
	free(argv[0]);
}

/* Run `memtrace record -o out -- args...` (args NULL-terminated). */
static void record(mt_test_run_t *r, const char *out, char *const args[])
{
	record_env(r, out, args, NULL);
}

/* 1. Record exits with the command's status, 128 + N for a death by
 * signal N, and the command's streams are record's. */
START_TEST(test_record_exits_with_the_commands_status_and_keeps_its_streams)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "out");
	char *exits[] = { "sh", "-c",
			  "echo out; echo err >&2; readlink /proc/$$/fd/0; exit 3",
			  NULL };
	char *dies[] = { "sh", "-c", "kill -USR1 $$", NULL };
	mt_test_run_t r;

	record(&r, out, exits);
	mt_quiet_int_eq(r.status, 3);
	ck_assert_str_eq(r.out, "out\n/dev/null\n");
	ck_assert_str_eq(r.err, "err\n");
	mt_test_run_release(&r);
	record(&r, out, dies);
	mt_quiet(r.status == 128 + SIGUSR1, "record exited %d: %s", r.status, r.err);
	ck_assert_str_eq(r.err, "");
	mt_test_run_release(&r);
	mt_quiet(assert_complete(out) >= 2, "fewer traces than commands in %s", out);
	free(out);
}
END_TEST

/* 1b. A command line without CMD is a usage error, and a CMD that cannot
 * be run is 127, as a shell says. */
START_TEST(test_record_without_a_runnable_command_says_why)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "out");
	char *none[] = { NULL };
	char *missing[] = { "/nonexistent/program", NULL };
	mt_test_run_t r;

	record(&r, out, none);
	mt_quiet_int_eq(r.status, 64);
	mt_quiet(strstr(r.err, "missing CMD argument") != NULL, "stderr: %s", r.err);
	mt_test_run_release(&r);
	record(&r, out, missing);
	mt_quiet_int_eq(r.status, 127);
	ck_assert_str_eq(r.err, "memtrace: record: cannot run '/nonexistent/program': "
				"No such file or directory\n");
	mt_test_run_release(&r);
	free(out);
}
END_TEST

/* 2. A tree of processes (fork, exec, a shell pipeline): each has its
 * complete trace in DIR, written by the one collector there is. */
START_TEST(test_every_process_of_a_tree_has_its_trace_and_one_collector)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "out");
	char *fork_prog = mt_test_workload("wl_fork");
	char *count = mt_test_workload("wl_collectors");
	char script[8192];
	char *args[] = { "sh", "-c", script, NULL };
	mt_test_run_t r;

	snprintf(script, sizeof(script), "%s && %s %s | cat", fork_prog, count, out);
	record(&r, out, args);
	mt_quiet(r.status == 0, "record exited %d: %s", r.status, r.err);
	ck_assert_str_eq(r.out, "fork done\ncollectors 1\n");
	ck_assert_str_eq(r.err, "");
	/* sh and its children before they exec, wl_fork, its forked child,
	 * its exec'd self, wl_collectors, cat. */
	mt_quiet(assert_complete(out) >= 7, "too few traces in %s", out);
	mt_quiet_int_eq(count_all(out, 3333), 3);
	mt_quiet_int_eq(count_all(out, 4444), 4);
	mt_quiet_int_eq(count_all(out, 6363), 1);
	mt_test_run_release(&r);
	free(fork_prog);
	free(count);
	free(out);
}
END_TEST

/* 3. A child subreaper under record reaps its own 5 children and ends,
 * as it does bare, each of them traced. */
START_TEST(test_a_subreaper_under_record_reaps_only_its_children)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "out");
	char *prog = mt_test_workload("wl_reaper"), *sub = mt_test_workload("wl_subreaper");
	char *args[] = { prog, "reap", "5", "subreaper", NULL };
	char *grand[] = { sub, "3", "2", NULL };
	char want[64];
	int pid, reaped, forked;
	mt_test_run_t r;

	record(&r, out, args);
	mt_quiet(r.status == 0, "record exited %d (142: it hung): %s", r.status, r.err);
	mt_quiet(sscanf(r.out, "pid %d reaped %d", &pid, &reaped) == 2, "printed %s", r.out);
	mt_quiet_int_eq(reaped, 5);
	ck_assert_str_eq(r.err, "");
	mt_quiet_int_eq(assert_complete(out), 6);
	mt_quiet_int_eq(count_all(out, 5151), 5);
	mt_test_run_release(&r);
	/* With orphaned grandchildren too: its 9 processes, no more. */
	mt_test_rmdir(out);
	record(&r, out, grand);
	mt_quiet(r.status == 0, "record exited %d: %s", r.status, r.err);
	mt_quiet(sscanf(r.out, "forked %d reaped %d", &forked, &reaped) == 2,
		 "printed %s", r.out);
	snprintf(want, sizeof(want), "forked 9 reaped 9\n");
	ck_assert_str_eq(r.out, want);
	mt_quiet_int_eq(assert_complete(out), 10);
	mt_test_run_release(&r);
	free(prog);
	free(sub);
	free(out);
}
END_TEST

/* 4. Under plain LD_PRELOAD a process that starts a child subreaper says
 * in one line that it cannot be traced invisibly, and it and its tree run
 * untraced: it reaps its own 5 children, no collector. */
START_TEST(test_a_subreaper_under_plain_preload_says_so_and_runs_untraced)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.%p.jsonl");
	char *launch = mt_test_workload("wl_shape"), *prog = mt_test_workload("wl_reaper");
	char *argv[] = { launch, "--subreaper", "--", prog, "reap", "5", NULL };
	char *name;
	int pid, reaped;
	mt_test_run_t r;

	mt_test_run_traced(&r, argv, trace, NULL);
	mt_quiet(r.status == 0, "exited %d (142: it hung): %s", r.status, r.err);
	mt_quiet(sscanf(r.out, "pid %d reaped %d", &pid, &reaped) == 2, "printed %s", r.out);
	mt_quiet_int_eq(reaped, 5);
	ck_assert_str_eq(r.err, SUBREAPER_LINE);
	/* The launcher's trace, which ends at its exec, and no other. */
	mt_quiet_uint_eq(mt_test_assert_traces_complete(dir), 1);
	if (asprintf(&name, "%s/t.%d.jsonl", dir, pid) < 0)
		ck_abort();
	mt_test_assert_trace_whole(name, "exec");
	free(name);
	mt_test_run_release(&r);
	free(launch);
	free(prog);
	free(trace);
}
END_TEST

/* 4b. Likewise pid 1 of a pid namespace under plain LD_PRELOAD: one line,
 * and it reaps its own 5 children, no collector. */
START_TEST(test_a_pid_namespace_init_under_plain_preload_says_so_and_runs_untraced)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.%p.jsonl");
	char *launch = mt_test_workload("wl_shape"), *prog = mt_test_workload("wl_reaper");
	char *argv[] = { launch, "--newpid", "--", prog, "reap", "5", NULL };
	mt_test_run_t r;

	mt_test_run_traced(&r, argv, trace, NULL);
	if (r.status == 77) {
		MT_TEST_SKIP("no pid namespace can be made here (%s)", r.err);
		goto done;
	}
	mt_quiet(r.status == 0, "exited %d (142: it hung): %s", r.status, r.err);
	ck_assert_str_eq(r.out, "pid 1 reaped 5\n");
	ck_assert_str_eq(r.err, "memtrace: this process is pid 1 of its namespace: its "
				"collectors would be its children; trace it with memtrace record\n");
	/* The launcher's own trace, and no other. */
	mt_quiet_uint_eq(mt_test_assert_traces_complete(dir), 1);
done:
	mt_test_run_release(&r);
	free(launch);
	free(prog);
	free(trace);
}
END_TEST

/* 5. A pid namespace's init traced under record: its reap-until-ECHILD
 * loop ends, and a SIGKILL of it loses no event it finished. */
START_TEST(test_a_pid_namespace_init_under_record_reaps_and_keeps_its_events)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "out");
	char *launch = mt_test_workload("wl_shape"), *prog = mt_test_workload("wl_reaper");
	char *reap[] = { launch, "--newpid", "--", prog, "reap", "5", NULL };
	char *spin[] = { launch, "--newpid", "--kill-on", "allocated", "--", prog,
			 "spin", "100000", NULL };
	char *init;
	mt_test_run_t r;

	record(&r, out, reap);
	if (r.status == 77) {
		MT_TEST_SKIP("no pid namespace can be made here (%s)", r.err);
		goto done;
	}
	mt_quiet(r.status == 0, "record exited %d (142: it hung): %s", r.status, r.err);
	ck_assert_str_eq(r.out, "pid 1 reaped 5\n");
	ck_assert_str_eq(r.err, "");
	mt_quiet(assert_complete(out) >= 7, "too few traces in %s", out);
	mt_quiet_int_eq(count_all(out, 5151), 5);
	mt_test_run_release(&r);

	mt_test_rmdir(out);
	record(&r, out, spin);
	mt_quiet(r.status == 128 + SIGKILL, "record exited %d: %s", r.status, r.err);
	ck_assert_str_eq(r.out, "allocated 100000\n");
	init = trace_of_pid(out, 1);
	mt_quiet_ptr_nonnull(init);
	mt_test_assert_trace_cut(init);
	mt_quiet_int_eq(mt_test_trace_count(init, "alloc", 4243), 100000);
	free(init);
done:
	mt_test_run_release(&r);
	free(launch);
	free(prog);
	free(out);
}
END_TEST

/* 6. RLIMIT_NPROC: a program that forks one child, under a user with one
 * process to spare, still forks under record, and both its traces are
 * complete: the tree costs one process more, not one per process. */
START_TEST(test_a_tree_under_record_costs_one_process)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "out");
	char *launch = mt_test_workload("wl_shape"), *prog = mt_test_workload("wl_forkone");
	char *mt = mt_test_memtrace(), uid[32];
	char *bare[] = { launch, "--nproc", "3", "--uid", uid, "--", prog, NULL };
	char *rec[] = { launch, "--nproc", "3", "--uid", uid, "--", mt, "record",
			"-o", out, "--", prog, NULL };
	mt_test_run_t r;

	if (geteuid() != 0) {
		MT_TEST_SKIP("switching to a fresh user needs root (euid %d)", (int)geteuid());
		goto done;
	}
	snprintf(uid, sizeof(uid), "%d", 54321 + (int)(getpid() % 1000));
	ck_assert_int_eq(chmod(dir, 0755), 0);
	ck_assert_int_eq(mkdir(out, 0777), 0);
	ck_assert_int_eq(chmod(out, 0777), 0);
	/* Bare, the program forks with a process to spare (2 of 3). */
	mt_test_run(&r, bare, NULL);
	mt_quiet(r.status == 0, "bare: exited %d: %s %s", r.status, r.out, r.err);
	mt_test_run_release(&r);
	mt_test_run(&r, rec, NULL);
	mt_quiet(r.status == 0, "record exited %d: %s %s", r.status, r.out, r.err);
	ck_assert_str_eq(r.out, "forked\n");
	ck_assert_str_eq(r.err, "");
	mt_quiet_int_eq(assert_complete(out), 2);
	mt_quiet_int_eq(count_all(out, 3030), 1);
	mt_quiet_int_eq(count_all(out, 3131), 1);
done:
	mt_test_run_release(&r);
	free(launch);
	free(prog);
	free(mt);
	free(out);
}
END_TEST

/* 7. SIGTERM sent to record reaches the command, which dies of it as it
 * would bare: record exits 143, and the command's trace is complete.
 * SIGINT sent to record alone does not end it. */
START_TEST(test_sigterm_to_record_reaches_the_command)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "out");
	char *ready = mt_test_path(dir, "ready"), *prog = mt_test_workload("wl_waitterm");
	char *mt = mt_test_memtrace();
	char *argv[] = { mt, "record", "-o", out, "--", prog, ready, NULL };
	struct timespec nap = { 0, 10 * 1000 * 1000 };
	int st, tries = 0;
	size_t n;
	char **names;
	char *path;
	pid_t pid;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(null, 1);
		execv(mt, argv);
		_exit(127);
	}
	while (!mt_test_exists(ready) && tries++ < 3000)
		nanosleep(&nap, NULL);
	mt_quiet(mt_test_exists(ready), "the command never started");
	/* A ^C reaches the command from the terminal itself: record, sent
	 * SIGINT alone, waits on. */
	ck_assert_int_eq(kill(pid, SIGINT), 0);
	nanosleep(&(struct timespec){ 0, 100 * 1000 * 1000 }, NULL);
	ck_assert_int_eq(waitpid(pid, &st, WNOHANG), 0);
	ck_assert_int_eq(kill(pid, SIGTERM), 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	mt_quiet(WIFEXITED(st) && WEXITSTATUS(st) == 143, "record ended with %#x", st);
	names = zst_traces(out, &n);
	mt_quiet_uint_eq(n, 1);
	path = mt_test_path(out, names[0]);
	mt_test_assert_trace_whole(path, "signal");
	mt_quiet_int_eq(mt_test_trace_count(path, "alloc", 2727), 10);
	mt_quiet_int_eq(assert_complete(out), 1);
	free(path);
	free(names[0]);
	free(names);
	free(ready);
	free(prog);
	free(mt);
	free(out);
}
END_TEST

/*
 * A ^C as the command starts ends the command, not record: record
 * ignores it from before the fork, since a process registers without
 * waiting for record and the command may be interrupted before record
 * runs again.  record exits 130, as the command does, and the command's
 * trace is complete.  The window is the moments after the fork, which a
 * busy machine widens, so each of 20 rounds tries it: the command's first
 * act interrupts its process group, record's own.
 */
START_TEST(test_a_sigint_to_the_group_as_the_command_starts_leaves_record_and_the_trace)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "out");
	char *mt = mt_test_memtrace();
	char *argv[] = { mt, "record", "-o", out, "--", "sh", "-c", "kill -INT 0; sleep 5", NULL };

	for (int round = 0; round < 20; round++) {
		int st;
		pid_t pid;

		mt_test_rmdir(out);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			int null = open("/dev/null", O_RDWR);

			/* A group of its own: the test is not in it. */
			setpgid(0, 0);
			signal(SIGINT, SIG_DFL);
			dup2(null, 0);
			dup2(null, 1);
			execv(mt, argv);
			_exit(127);
		}
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		mt_quiet(WIFEXITED(st) && WEXITSTATUS(st) == 130,
			 "round %d: record ended with %#x", round, st);
		mt_quiet_uint_eq(assert_complete(out), 1);
	}
	free(mt);
	free(out);
}
END_TEST

/*
 * A process that leaves record's network namespace cannot reach its
 * collector (an abstract socket): it says so in one line and runs
 * untraced, as it runs bare; the process before it keeps its trace.
 */
START_TEST(test_a_process_in_another_network_namespace_says_so_and_runs_untraced)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "out");
	char *fill = mt_test_workload("wl_fill");
	char *probe[] = { "/bin/sh", "-c", "unshare -rn true", NULL };
	char *args[] = { "unshare", "-rn", fill, "10", NULL };
	mt_test_run_t r;

	mt_test_run(&r, probe, NULL);
	if (r.status != 0) {
		r.err[strcspn(r.err, "\n")] = '\0';
		MT_TEST_SKIP("unshare -rn cannot make a network namespace here (%s)", r.err);
		mt_test_run_release(&r);
		goto done;
	}
	mt_test_run_release(&r);
	record(&r, out, args);
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "fill: 10\n");
	ck_assert_msg(strstr(r.err, "memtrace: cannot reach memtrace record's collector '") &&
			      strstr(r.err, "'; the program runs untraced\n") &&
			      strchr(r.err, '\n') == r.err + r.err_len - 1,
		      "stderr: %s", r.err);
	/* unshare's own trace, ended by its exec, and no other. */
	ck_assert_int_eq(assert_complete(out), 1);
	mt_test_run_release(&r);
done:
	free(fill);
	free(out);
}
END_TEST

/* Without -o, record makes memtrace.PROG.PID new, mode 0700: a directory
 * of that name that exists (an earlier run's, a pid come round again) is
 * left as it was, and the run takes memtrace.PROG.PID.1; a '%' in the
 * directory record starts in stays the directory's. */
START_TEST(test_record_makes_a_directory_of_its_own_for_each_run)
{
	char *top = mt_test_scratch(), *dir = mt_test_path(top, "a%pb");
	char *mt = mt_test_memtrace(), cmd[8192], name[64], *old, *tree;
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	mt_test_run_t r;
	struct stat st;
	size_t n;
	char **names;
	long pid;

	mt_quiet_int_eq(mkdir(dir, 0700), 0);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && unset MEMTRACE_OUTPUT && mkdir memtrace.sh.$$ && echo $$ && "
		 "exec '%s' record -- sh -c 'cd / && ls >/dev/null'", dir, mt);
	mt_test_run(&r, argv, NULL);
	mt_quiet(r.status == 0, "record ended with %d: %s", r.status, r.err);
	mt_quiet(sscanf(r.out, "%ld", &pid) == 1, "printed %s", r.out);
	snprintf(name, sizeof(name), "memtrace.sh.%ld", pid);
	old = mt_test_path(dir, name);
	names = zst_traces(old, &n);
	mt_quiet_uint_eq(n, 0);
	free(names);
	snprintf(name, sizeof(name), "memtrace.sh.%ld.1", pid);
	tree = mt_test_path(dir, name);
	mt_quiet_int_eq(stat(tree, &st), 0);
	mt_quiet_int_eq((int)(st.st_mode & 07777), 0700);
	mt_quiet_uint_ge(assert_complete(tree), 2);
	free(tree);
	free(old);
	free(mt);
	mt_test_run_release(&r);
	free(dir);
}
END_TEST

/* 12. A loop of many short processes, as a build or a configure script
 * runs them: each process has one complete trace with every event it
 * made, however soon it ended after its start (the collector takes a
 * ring the program no longer waits for, even after the program is
 * gone). */
START_TEST(test_a_loop_of_short_processes_has_one_whole_trace_each)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "out");
	char *prog = mt_test_workload("wl_exit"), script[8192];
	char *args[] = { "sh", "-c", script, NULL };
	size_t n, progs = 0;
	char **names;
	mt_test_run_t r;

	snprintf(script, sizeof(script),
		 "i=0; while [ $i -lt 40 ]; do '%s'; /bin/true; i=$((i + 1)); done", prog);
	record(&r, out, args);
	mt_quiet(r.status == 0, "record exited %d: %s", r.status, r.err);
	ck_assert_str_eq(r.err, "");
	/* sh, and per round the two images its children exec (dash starts
	 * them with vfork: no trace of their own before the exec). */
	mt_quiet_uint_ge(assert_complete(out), 1 + 2 * 40);
	names = zst_traces(out, &n);
	for (size_t i = 0; i < n; i++) {
		char *path = mt_test_path(out, names[i]);
		json_object *start = mt_test_trace_start(path);
		const char *exe = mt_test_json_str(start, "exe");

		if (exe && strlen(exe) > 8 && !strcmp(exe + strlen(exe) - 8, "/wl_exit")) {
			progs++;
			mt_quiet(mt_test_trace_count(path, "alloc", 555) == 5,
				 "%s: not 5 allocations of 555 bytes", path);
		}
		json_object_put(start);
		free(path);
		free(names[i]);
	}
	free(names);
	mt_quiet_uint_eq(progs, 40);
	mt_test_run_release(&r);
	free(prog);
	free(out);
}
END_TEST

/* 13. A process that ends right after its start (the command itself,
 * /bin/true) has its trace whole: start, stop, complete. */
START_TEST(test_a_process_that_exits_at_once_has_a_whole_trace)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "out");
	char *args[] = { "/bin/true", NULL };
	size_t n;
	char **names;
	char *path;
	mt_test_run_t r;

	for (int round = 0; round < 5; round++) {
		mt_test_rmdir(out);
		record(&r, out, args);
		mt_quiet(r.status == 0, "record exited %d: %s", r.status, r.err);
		ck_assert_str_eq(r.err, "");
		mt_quiet_uint_eq(assert_complete(out), 1);
		names = zst_traces(out, &n);
		path = mt_test_path(out, names[0]);
		mt_quiet_int_eq(mt_test_trace_count(path, "trace.start", 0), 1);
		mt_quiet_int_eq(mt_test_trace_count(path, "trace.stop", 0), 1);
		free(path);
		free(names[0]);
		free(names);
		mt_test_run_release(&r);
	}
	free(out);
}
END_TEST

/* Run wl_stopped_collector MODE under record into out, the collector
 * its PPID's (sh's parent): the child's four blocks of 4242 bytes are all
 * in its trace, and the child did not wait for the stopped collector. */
static void run_stopped_collector(const char *mode, const char *out)
{
	char *prog = mt_test_workload("wl_stopped_collector"), script[8192];
	char *args[] = { "sh", "-c", script, NULL };
	mt_test_run_t r;

	snprintf(script, sizeof(script), "'%s' $PPID %s", prog, mode);
	record(&r, out, args);
	mt_quiet(r.status == 0, "record exited %d: %s %s", r.status, r.out, r.err);
	ck_assert_str_eq(r.out, "child ended\n");
	ck_assert_str_eq(r.err, "");
	mt_quiet_int_eq(count_all(out, 4242), 4);
	mt_test_run_release(&r);
	free(prog);
}

/* The same, every trace complete. */
static void stopped_collector(const char *mode)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "out");

	run_stopped_collector(mode, out);
	mt_quiet_uint_ge(assert_complete(out), 2);
	free(out);
}

/* 14. A traced process ends without waiting for record's collector: the
 * collector holds the ring and drains it after the process is gone, so
 * a process that ends while the collector is stopped ends at once, and
 * its trace is whole once the collector runs again. */
START_TEST(test_a_process_ends_without_waiting_for_records_collector)
{
	stopped_collector("exit");
}
END_TEST

/* 15. A traced process starts without waiting for record's collector to
 * take its ring: it registers and goes on, and the collector, stopped
 * meanwhile, takes the ring and writes the whole trace later. */
START_TEST(test_a_process_starts_without_waiting_for_records_collector)
{
	stopped_collector("start");
}
END_TEST

/* A registration whose trace name ends without its NUL (a message cut
 * short) is refused, and record serves the rest as ever. */
START_TEST(test_records_collector_refuses_a_registration_whose_name_is_cut)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "out");
	char *prog = mt_test_workload("wl_badregister");
	char *args[] = { prog, NULL };
	mt_test_run_t r;

	record(&r, out, args);
	mt_quiet(r.status == 0, "record exited %d: %s %s", r.status, r.out, r.err);
	ck_assert_str_eq(r.out, "refused\n");
	/* wl_badregister's own trace. */
	mt_quiet_uint_eq(assert_complete(out), 1);
	mt_test_run_release(&r);
	free(prog);
	free(out);
}
END_TEST

/* 15b. A traced process that registered itself and died of SIGKILL, and
 * was reaped, before record's collector took its ring: the collector
 * still knows it has ended (by the pidfd of the connection, or by the
 * kernel's having none to give) and writes the trace it left, cut where
 * it was killed, rather than waiting for a process that is gone. */
START_TEST(test_a_process_killed_before_records_collector_takes_its_ring_has_its_trace)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "out");
	char **names;
	size_t n, cut = 0;

	run_stopped_collector("kill", out);
	names = zst_traces(out, &n);
	for (size_t i = 0; i < n; i++) {
		char *path = mt_test_path(out, names[i]);
		char *status = mt_test_check_status(path);

		if (!strcmp(status, "missing_stop_event")) {
			cut++;
			mt_quiet_int_eq(mt_test_trace_count(path, "alloc", 4242), 4);
		} else {
			mt_quiet(!strcmp(status, "complete"), "%s: %s", names[i], status);
		}
		free(status);
		free(path);
		free(names[i]);
	}
	free(names);
	mt_quiet_uint_eq(cut, 1);
	free(out);
}
END_TEST

/*
 * wl_forkwait under record in a sandbox that refuses every clone() with
 * CLONE_VM (wl_launch novmclone): the tracer can make no child that
 * shares the program's memory.  Returns the trace of the process whose
 * exe ends in wl_forkwait and whose ppid is (child) or is not (parent)
 * another wl_forkwait's; NULL when the shape cannot be made.
 */
static char *forkwait_without_vm_clones(const char *test, const char *out, int child)
{
	char *launch = mt_test_workload("wl_launch"), *prog = mt_test_workload("wl_forkwait");
	char *args[] = { launch, "novmclone", prog, NULL };
	char *found = NULL, **names;
	long parent = -1;
	mt_test_run_t r;
	size_t n;

	record(&r, out, args);
	if (r.status == 77 && strstr(r.err, "wl_launch: ")) {
		mt_test_skip(test, "a seccomp filter cannot be installed here (%s)", r.err);
		goto done;
	}
	mt_quiet(r.status == 0, "record exited %d: %s", r.status, r.err);
	ck_assert_str_eq(r.err, "");
	ck_assert_str_eq(r.out, "done\n");
	/* wl_launch up to its exec, wl_forkwait and its child. */
	mt_quiet_uint_eq(assert_complete(out), 3);
	names = zst_traces(out, &n);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++) {
			char *path = mt_test_path(out, names[i]);
			json_object *start = mt_test_trace_start(path);
			const char *exe = mt_test_json_str(start, "exe");
			long pid = mt_test_json_i64(start, "pid"), ppid = mt_test_json_i64(start, "ppid");

			if (exe && strstr(exe, "/wl_forkwait")) {
				if (pass == 0 && mt_test_trace_count(path, "alloc", 4040) == 1)
					parent = pid;
				if (pass == 1 && !found && (child ? ppid == parent : pid == parent))
					found = strdup(path);
			}
			json_object_put(start);
			free(path);
		}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	mt_quiet(found != NULL, "no trace of the %s", child ? "child" : "parent");
done:
	mt_test_run_release(&r);
	free(launch);
	free(prog);
	return found;
}

/* 16. An image that starts with one thread reads its files and hands
 * its ring over in place, with no child of the tracer's: where no such
 * child can be made it is traced whole, its events after the clock's
 * first calibration (a millisecond in) included. */
START_TEST(test_a_process_starts_traced_without_a_child_sharing_its_memory)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "out");
	char *trace = forkwait_without_vm_clones(__func__, out, 0);

	if (trace) {
		mt_quiet_int_eq(mt_test_trace_count(trace, "alloc", 4040), 1);
		mt_quiet_int_eq(mt_test_trace_count(trace, "alloc", 4141), 1);
		mt_quiet_int_eq(mt_test_trace_count(trace, "free", 0), 2);
		free(trace);
	}
	free(out);
}
END_TEST

/* 17. A forked child keeps its parent's verdict on the TSC and reads its
 * command line in place: no child of the tracer's either, its argv in
 * its trace.start, its event after a millisecond recorded. */
START_TEST(test_a_forked_child_keeps_its_parents_clock_verdict_and_needs_no_child)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "out");
	char *trace = forkwait_without_vm_clones(__func__, out, 1);

	if (trace) {
		json_object *start = mt_test_trace_start(trace), *argv;

		argv = mt_test_json_member(start, "argv");
		mt_quiet(json_object_array_length(argv) == 1, "argv: %s",
			 json_object_to_json_string(argv));
		mt_quiet(strstr(json_object_get_string(json_object_array_get_idx(argv, 0)),
				"wl_forkwait") != NULL, "argv: %s", json_object_to_json_string(argv));
		json_object_put(start);
		mt_quiet_int_eq(mt_test_trace_count(trace, "alloc", 4242), 1);
		free(trace);
	}
	free(out);
}
END_TEST

/* 18. Record's collector sleeps while no ring has records: it is woken
 * by a registration, a program's end, a ring's doorbell, a trace's
 * second, not every millisecond.  The command reads its parent's (the
 * collector's) voluntary context switches over a second in which a
 * traced sleep(1) is its only other process. */
START_TEST(test_records_collector_sleeps_while_no_ring_has_records)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "out");
	char *args[] = { "sh", "-c",
			 "s() { sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' /proc/$PPID/status; }; "
			 "a=$(s); sleep 1; b=$(s); echo $((b - a))",
			 NULL };
	mt_test_run_t r;
	long woke;

	record(&r, out, args);
	mt_quiet(r.status == 0, "record exited %d: %s", r.status, r.err);
	ck_assert_str_eq(r.err, "");
	woke = atol(r.out);
	/* A millisecond's nap woke it a thousand times. */
	mt_quiet(r.out[0] >= '0' && r.out[0] <= '9' && woke < 100,
		 "the collector woke %s times in a second", r.out);
	assert_complete(out);
	mt_test_run_release(&r);
	free(out);
}
END_TEST

/* While it serves rings, record's collector naps in a sleep, not in a
 * poll() that every registration and every end of a short process would
 * end from that process's CPU (mt_server.c, look_after_nap()).  The
 * command reads the system call its parent, the collector, is in, five
 * times between short processes: never poll(), and a sleep at least once
 * (it may be draining at a look). */
START_TEST(test_records_collector_naps_in_a_sleep_while_it_serves_rings)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "out");
	char *args[] = { "sh", "-c",
			 "sleep 0.2; for i in 1 2 3 4 5; do "
			 "read s rest < /proc/$PPID/syscall || exit 3; echo $s; sleep 0.05; done",
			 NULL };
	mt_test_run_t r;
	int sleeps = 0, n = 0;

	record(&r, out, args);
	if (r.status == 3) {
		mt_test_skip(__func__, "needs to read the collector's /proc/PID/syscall "
			     "(ptrace access to a parent: %s)", r.err);
		goto cleanup;
	}
	mt_quiet(r.status == 0, "record exited %d: %s", r.status, r.err);
	for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n"), n++) {
		/* poll 7, ppoll 271; nanosleep 35, clock_nanosleep 230 */
		mt_quiet(strcmp(line, "7") && strcmp(line, "271"),
			 "the collector waited in poll() (system call %s)", line);
		sleeps += !strcmp(line, "35") || !strcmp(line, "230");
	}
	ck_assert_int_eq(n, 5);
	ck_assert_int_ge(sleeps, 1);
	assert_complete(out);
cleanup:
	mt_test_run_release(&r);
	free(out);
}
END_TEST

/* Run record, under `chrt -i 0` when idle (else with this process's own
 * policy), with a command that prints its parent's (the collector's)
 * scheduling policy and its own, field 41 of /proc/PID/stat: the
 * command's is the one record was given, and the collector's SCHED_BATCH
 * where that was SCHED_OTHER, the given one otherwise. */
static void assert_policies(const char *test, int idle)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "out");
	char *memtrace = mt_test_memtrace();
	char *argv[] = { "/usr/bin/chrt", "-i", "0", memtrace, "record", "-o", out, "--",
			 "sh", "-c",
			 "p() { sed 's/.*) //' /proc/$1/stat | cut -d' ' -f39; }; "
			 "echo $(p $PPID) $(p $$)",
			 NULL };
	char *const *run = idle ? argv : argv + 3;
	int given = idle ? SCHED_IDLE : sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
	char want[64];
	mt_test_run_t r;

	if (idle && access(argv[0], X_OK) != 0) {
		mt_test_skip(test, "needs chrt to start record under SCHED_IDLE (%s: %s)",
			     argv[0], strerror(errno));
		goto cleanup;
	}
	snprintf(want, sizeof(want), "%d %d\n", given == SCHED_OTHER ? SCHED_BATCH : given,
		 given);
	mt_test_run(&r, run, NULL);
	mt_quiet(r.status == 0, "record exited %d: %s", r.status, r.err);
	ck_assert_str_eq(r.err, "");
	ck_assert_str_eq(r.out, want);
	assert_complete(out);
	mt_test_run_release(&r);
cleanup:
	free(memtrace);
	free(out);
}

/* 18b. Record's collector runs as a batch task, which a wakeup never
 * lets preempt the traced process starting on its CPU; the command keeps
 * the policy record was given (SCHED_OTHER, 0, where the tests run as
 * most processes do: then the collector says 3). */
START_TEST(test_records_collector_is_a_batch_task_and_the_command_is_not)
{
	assert_policies(__func__, 0);
}
END_TEST

/* 18c. A policy the user gave record (here SCHED_IDLE, 5, which needs no
 * privilege) is kept by the collector and the command alike. */
START_TEST(test_records_collector_keeps_a_policy_it_was_given)
{
	assert_policies(__func__, 1);
}
END_TEST

/* Run `memtrace record -o out -- wl_fill n` with env (wl_fill: n
 * allocations of 100 bytes, each freed). */
static void record_fill(mt_test_run_t *r, const char *out, const char *n, char *const env[])
{
	char *prog = mt_test_workload("wl_fill");
	char *args[] = { prog, (char *)n, NULL };

	record_env(r, out, args, env);
	free(prog);
}

/* 18d. MEMTRACE_STATS under record: the collector's account gives the
 * CPU time it spent on the program's ring (timed only for a program
 * that asks), and its lines. */
START_TEST(test_records_collector_accounts_for_a_program_that_asks)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "out");
	char *env[] = { "MEMTRACE_STATS=1", NULL };
	unsigned long long cpu = 0, lines = 0;
	const char *at;
	mt_test_run_t r;

	record_fill(&r, out, "20000", env);
	mt_quiet(r.status == 0, "record exited %d: %s", r.status, r.err);
	at = strstr(r.err, "memtrace: collector: cpu_ns ");
	mt_quiet(at && sscanf(at, "memtrace: collector: cpu_ns %llu lines %llu", &cpu, &lines) == 2,
		 "no account on stderr: %s", r.err);
	ck_assert_uint_gt(cpu, 0);
	ck_assert_uint_gt(lines, 40000);
	assert_complete(out);
	mt_test_run_release(&r);
	free(out);
}
END_TEST

/* 19. A program that fills its ring while record's collector sleeps
 * rings the doorbell and waits no longer than the collector takes: 64
 * slots, 100,000 allocations and frees, every event in the trace, well
 * within the time a collector that slept its second each time would
 * take. */
START_TEST(test_a_full_ring_wakes_records_sleeping_collector)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "out");
	char *env[] = { "MEMTRACE_RING_SLOTS=64", NULL };
	struct timespec a, b;
	mt_test_run_t r;
	double secs;

	clock_gettime(CLOCK_MONOTONIC, &a);
	record_fill(&r, out, "100000", env);
	clock_gettime(CLOCK_MONOTONIC, &b);
	secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	mt_quiet(r.status == 0, "record exited %d: %s", r.status, r.err);
	ck_assert_str_eq(r.out, "fill: 100000\n");
	mt_quiet_uint_eq(assert_complete(out), 1);
	mt_quiet_int_eq(count_all(out, 100), 100000);
	mt_quiet(secs < 60, "took %.1f s", secs);
	mt_test_run_release(&r);
	free(out);
}
END_TEST

/*
 * Run record with MEMTRACE_STATS on `sh -c` that runs wl_fullring on a
 * 64-slot ring (a program that waits for room), then prints its parent's
 * (the collector's) session and its own; lead: record started as a
 * process group's leader (under setsid(1), as an interactive shell's job
 * would be).  Returns the most workers a trace's collector line gives,
 * and in *apart whether the collector left the command's session.
 */
static int record_fullring(const char *dir, int lead, int *apart)
{
	char *out = mt_test_path(dir, lead ? "lead" : "member");
	char *prog = mt_test_workload("wl_fullring"), *mt = mt_test_memtrace();
	char *script = NULL;
	char *argv[] = { "/usr/bin/setsid", "-w", mt, "record", "-o", out, "--",
			 "sh", "-c", NULL, NULL };
	char *env[] = { "MEMTRACE_STATS=1", "MEMTRACE_RING_SLOTS=64", NULL };
	long collector = -1, command = -1;
	int most = -1;
	mt_test_run_t r;

	mt_quiet(asprintf(&script, "%s >/dev/null || exit 9; s() { sed 's/.*) //' /proc/$1/stat | "
			  "cut -d' ' -f4; }; echo $(s $PPID) $(s $$)", prog) > 0,
		 "no memory");
	argv[9] = script;
	mt_test_run(&r, lead ? argv : argv + 2, env);
	mt_quiet(r.status == 0, "record exited %d: %s", r.status, r.err);
	mt_quiet(sscanf(r.out, "%ld %ld", &collector, &command) == 2, "printed %s", r.out);
	*apart = collector != command;
	for (const char *at = r.err; (at = strstr(at, " workers ")); at += 9)
		if (atoi(at + 9) > most)
			most = atoi(at + 9);
	/* sh, wl_fullring, and the processes of the sessions' look. */
	mt_quiet(assert_complete(out) >= 2, "fewer traces than sh's and wl_fullring's");
	mt_test_run_release(&r);
	free(script);
	free(prog);
	free(mt);
	free(out);
	return most;
}

/* 19b. Record's collector gives a program that waits for room in its
 * ring the lone collector's zstd workers, in a session of its own (where
 * autogroups share the CPUs between sessions, in the command's they
 * would starve); started as a group's leader it cannot leave the
 * session, and gives none.  The traces are whole either way. */
START_TEST(test_records_collector_gives_a_program_that_waits_workers_out_of_its_session)
{
	char *dir = mt_test_scratch();
	int want = mt_out_workers_here(), apart = -1;
	struct rlimit rl;

	if (!want) {
		getrlimit(RLIMIT_NPROC, &rl);
		MT_TEST_SKIP("the collector may start no worker here (%d CPUs, RLIMIT_NPROC %llu)",
			     mt_test_cpus(), (unsigned long long)rl.rlim_cur);
		return;
	}
	mt_quiet_int_eq(record_fullring(dir, 0, &apart), want);
	mt_quiet_int_eq(apart, 1);
	if (access("/usr/bin/setsid", X_OK) != 0) {
		MT_TEST_SKIP("needs /usr/bin/setsid to start record as a group's leader: %s",
			     strerror(errno));
		return;
	}
	mt_quiet_int_eq(record_fullring(dir, 1, &apart), 0);
	mt_quiet_int_eq(apart, 0);
}
END_TEST

/* wl_forkargs MODE "alpha" "beta gamma" under record, into a scratch
 * directory: the trace.start of the parent and of its child (whose ppid
 * is the parent's pid). */
typedef struct {
	char *out;
	mt_test_run_t r;
	json_object *parent, *child;
} forkargs_t;

/* wl_forkargs with args (args[0] the workload) under record, as
 * forkargs(). */
static int forkargs_run(forkargs_t *f, char **args)
{
	size_t n;
	char **names;

	f->out = mt_test_path(mt_test_scratch(), "out");
	f->parent = f->child = NULL;
	record(&f->r, f->out, args);
	if (f->r.status == 77) {
		printf("%s", f->r.out);
		return 1;
	}
	mt_quiet(f->r.status == 0, "wl_forkargs exited %d: %s", f->r.status, f->r.err);
	mt_quiet_uint_eq(assert_complete(f->out), 2);
	names = zst_traces(f->out, &n);
	for (size_t i = 0; i < n; i++) {
		char *path = mt_test_path(f->out, names[i]);
		json_object *start = mt_test_trace_start(path);

		if (mt_test_trace_count(path, "alloc", 4321) == 1)
			f->child = start;
		else
			f->parent = start;
		free(path);
		free(names[i]);
	}
	free(names);
	mt_quiet(f->parent && f->child, "no parent's and child's traces in %s", f->out);
	mt_quiet_int_eq(mt_test_json_i64(f->child, "ppid"), mt_test_json_i64(f->parent, "pid"));
	return 0;
}

/* 0, or 1 after printing the line of a workload that cannot run its
 * MODE here (it exited 77). */
static int forkargs(forkargs_t *f, const char *mode)
{
	char *prog = mt_test_workload("wl_forkargs");
	char *args[] = { prog, (char *)mode, "alpha", "beta gamma", NULL };
	int rc = forkargs_run(f, args);

	free(prog);
	return rc;
}

static void forkargs_release(forkargs_t *f)
{
	json_object_put(f->parent);
	json_object_put(f->child);
	mt_test_run_release(&f->r);
	free(f->out);
}

/* The strings of a trace.start's argv, each ended by a newline
 * (malloc'd). */
static char *argv_lines(json_object *start)
{
	json_object *argv = mt_test_json_member(start, "argv");
	size_t n = json_object_array_length(argv), len = 1;
	char *s;

	for (size_t i = 0; i < n; i++)
		len += strlen(json_object_get_string(json_object_array_get_idx(argv, i))) + 1;
	s = calloc(1, len);
	ck_assert_ptr_nonnull(s);
	for (size_t i = 0; i < n; i++) {
		strcat(s, json_object_get_string(json_object_array_get_idx(argv, i)));
		strcat(s, "\n");
	}
	return s;
}

/* 20. A forked child names the exe and arguments its parent's trace
 * named without reading /proc/self: the parent sealed readlink and
 * every open before the fork, and the child's trace.start has both. */
START_TEST(test_a_forked_child_names_its_exe_and_argv_without_reading_proc)
{
	forkargs_t f;

	if (!forkargs(&f, "sealed")) {
		char *want = argv_lines(f.parent), *got = argv_lines(f.child);

		ck_assert_str_eq(mt_test_json_str(f.child, "exe"), mt_test_json_str(f.parent, "exe"));
		ck_assert_str_eq(got, want);
		mt_quiet(strstr(got, "\nsealed\nalpha\nbeta gamma\n") != NULL, "argv: %s", got);
		free(want);
		free(got);
	}
	forkargs_release(&f);
}
END_TEST

/* A forked child's trace.start names arguments longer than its start's
 * own frame holds (512 bytes) whole, as its parent's does. */
START_TEST(test_a_forked_child_names_arguments_longer_than_its_frame_holds)
{
	char *prog = mt_test_workload("wl_forkargs"), *args[12], *want, *got;
	static char long_args[8][201];
	forkargs_t f;

	args[0] = prog;
	args[1] = "same";
	for (int i = 0; i < 8; i++) {
		memset(long_args[i], 'a' + i, 200);
		args[2 + i] = long_args[i];
	}
	args[10] = NULL;
	if (!forkargs_run(&f, args)) {
		want = argv_lines(f.parent);
		got = argv_lines(f.child);
		ck_assert_uint_eq(json_object_array_length(mt_test_json_member(f.child, "argv")), 10);
		ck_assert_str_eq(got, want);
		mt_quiet(strstr(got, long_args[7]) != NULL, "argv: %s", got);
		free(want);
		free(got);
	}
	forkargs_release(&f);
	free(prog);
}
END_TEST

/* 21. A forked child names its arguments as they are when it starts:
 * the parent wrote over its last argument in place. */
START_TEST(test_a_forked_child_names_the_arguments_as_rewritten_in_place)
{
	forkargs_t f;
	char *got;

	forkargs(&f, "rewritten");
	got = argv_lines(f.child);
	mt_quiet(strstr(got, "\nrewritten\nalpha\nXXXXXXXXXX\n") != NULL, "argv: %s", got);
	free(got);
	got = argv_lines(f.parent);
	mt_quiet(strstr(got, "\nalpha\nbeta gamma\n") != NULL, "argv: %s", got);
	free(got);
	forkargs_release(&f);
}
END_TEST

/* 22. A forked child of a program that wrote over its whole argument
 * area, the last NUL too (setproctitle), names what /proc/self/cmdline
 * shows, by the kernel's own rules for that case: the program printed
 * what it read there just before the fork. */
START_TEST(test_a_forked_child_of_a_retitled_program_names_what_proc_shows)
{
	forkargs_t f;
	size_t lines = 0;
	char *got;

	forkargs(&f, "retitled");
	mt_quiet(!strncmp(f.r.out, "TTTTTTTTTTTTTTTTTTTT", 20), "printed: %s", f.r.out);
	for (const char *c = f.r.out; *c; c++)
		lines += *c == '\n';
	mt_quiet_uint_eq(json_object_array_length(mt_test_json_member(f.child, "argv")), lines);
	got = argv_lines(f.child);
	/* Each string is cut at 256 bytes in a trace.start. */
	mt_quiet(!strncmp(got, f.r.out, 200), "argv: %s\nprinted: %s", got, f.r.out);
	free(got);
	forkargs_release(&f);
}
END_TEST

/* 23. A forked child of a program that moved its argument area
 * (prctl(PR_SET_MM), as checkpoint-restore tools do) names the strings
 * now there, as /proc/self/cmdline does. */
START_TEST(test_a_forked_child_of_a_program_that_moved_its_arguments_names_them)
{
	forkargs_t f;

	if (!forkargs(&f, "moved")) {
		char *got = argv_lines(f.child);

		ck_assert_str_eq(got, "moved\naway\n");
		free(got);
	}
	forkargs_release(&f);
}
END_TEST

Suite *mt_suite_record(void)
{
	Suite *s = suite_create("record");
	TCase *tc = tcase_create("record");

	tcase_add_test(tc, test_record_exits_with_the_commands_status_and_keeps_its_streams);
	tcase_add_test(tc, test_record_without_a_runnable_command_says_why);
	tcase_add_test(tc, test_every_process_of_a_tree_has_its_trace_and_one_collector);
	tcase_add_test(tc, test_a_subreaper_under_record_reaps_only_its_children);
	tcase_add_test(tc, test_a_subreaper_under_plain_preload_says_so_and_runs_untraced);
	tcase_add_test(tc, test_a_pid_namespace_init_under_plain_preload_says_so_and_runs_untraced);
	tcase_add_test(tc, test_a_pid_namespace_init_under_record_reaps_and_keeps_its_events);
	tcase_add_test(tc, test_a_tree_under_record_costs_one_process);
	tcase_add_test(tc, test_sigterm_to_record_reaches_the_command);
	tcase_add_test(tc, test_a_sigint_to_the_group_as_the_command_starts_leaves_record_and_the_trace);
	tcase_add_test(tc, test_a_process_in_another_network_namespace_says_so_and_runs_untraced);
	tcase_add_test(tc, test_record_makes_a_directory_of_its_own_for_each_run);
	tcase_add_test(tc, test_a_loop_of_short_processes_has_one_whole_trace_each);
	tcase_add_test(tc, test_a_process_that_exits_at_once_has_a_whole_trace);
	tcase_add_test(tc, test_a_process_ends_without_waiting_for_records_collector);
	tcase_add_test(tc, test_a_process_starts_without_waiting_for_records_collector);
	tcase_add_test(tc, test_a_process_killed_before_records_collector_takes_its_ring_has_its_trace);
	tcase_add_test(tc, test_records_collector_refuses_a_registration_whose_name_is_cut);
	tcase_add_test(tc, test_a_process_starts_traced_without_a_child_sharing_its_memory);
	tcase_add_test(tc, test_a_forked_child_keeps_its_parents_clock_verdict_and_needs_no_child);
	tcase_add_test(tc, test_records_collector_sleeps_while_no_ring_has_records);
	tcase_add_test(tc, test_records_collector_naps_in_a_sleep_while_it_serves_rings);
	tcase_add_test(tc, test_records_collector_is_a_batch_task_and_the_command_is_not);
	tcase_add_test(tc, test_records_collector_keeps_a_policy_it_was_given);
	tcase_add_test(tc, test_records_collector_accounts_for_a_program_that_asks);
	tcase_add_test(tc, test_a_full_ring_wakes_records_sleeping_collector);
	tcase_add_test(tc, test_records_collector_gives_a_program_that_waits_workers_out_of_its_session);
	tcase_add_test(tc, test_a_forked_child_names_its_exe_and_argv_without_reading_proc);
	tcase_add_test(tc, test_a_forked_child_names_arguments_longer_than_its_frame_holds);
	tcase_add_test(tc, test_a_forked_child_names_the_arguments_as_rewritten_in_place);
	tcase_add_test(tc, test_a_forked_child_of_a_retitled_program_names_what_proc_shows);
	tcase_add_test(tc, test_a_forked_child_of_a_program_that_moved_its_arguments_names_them);
	suite_add_tcase(s, tc);
	return s;
}
