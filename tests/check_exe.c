/*
 * check_exe: preload/mt_exe.c, driven directly, and through the traces
 * of programs exec'd under memtrace record: the exe's path a trace.start
 * names is /proc/self/exe's, whether found from the image's exec name or
 * read there.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../preload/mt_exe.h"
#include "mt_test.h"
#include "mt_test_trace.h"

static void symlink_at(const char *dir, const char *name, const char *target)
{
	char *path = mt_test_path(dir, name);

	mt_quiet(symlink(target, path) == 0, "symlink %s: %s", path, strerror(errno));
	free(path);
}

static void mkdir_at(const char *dir, const char *name)
{
	char *path = mt_test_path(dir, name);

	mt_quiet(mkdir(path, 0755) == 0, "mkdir %s: %s", path, strerror(errno));
	free(path);
}

/* mt_exe_resolve(path) equals realpath(3)'s answer. */
static void resolves_as_realpath(const char *path)
{
	char got[PATH_MAX], want[PATH_MAX];
	long n = mt_exe_resolve(path, got, sizeof(got));

	mt_quiet(realpath(path, want) != NULL, "realpath %s: %s", path, strerror(errno));
	mt_quiet(n > 0, "%s: %s", path, strerror((int)-n));
	ck_assert_str_eq(got, want);
	mt_quiet_int_eq(n, (long)strlen(want));
}

/* A tree of directories and links: a/b/f, an absolute link to f, links
 * relative to where they lie, a chain, a link to a directory followed by
 * "..", which the kernel takes from the directory it leads to. */
static char *link_tree(void)
{
	char *dir = mt_test_scratch(), *f;
	FILE *fp;

	mkdir_at(dir, "a");
	mkdir_at(dir, "a/b");
	mkdir_at(dir, "c");
	f = mt_test_path(dir, "a/b/f");
	fp = fopen(f, "w");
	ck_assert_ptr_nonnull(fp);
	fclose(fp);
	symlink_at(dir, "abs", f);
	symlink_at(dir, "a/up", "..");
	symlink_at(dir, "c/rel", "../a/b/f");
	symlink_at(dir, "chain", "c/rel");
	symlink_at(dir, "c/dir", "../a/b");
	free(f);
	return dir;
}

START_TEST(test_exe_resolve_follows_links_as_realpath_does)
{
	char *dir = link_tree();
	const char *names[] = { "a/b/f", "abs", "chain", "c/rel", "c/dir/f", "c/dir/../b/f",
				"a/up/a/./b//f", "a/b/../b/f", ".", "c/dir" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *path = mt_test_path(dir, names[i]);

		resolves_as_realpath(path);
		free(path);
	}
	resolves_as_realpath("/");
	resolves_as_realpath("/..//./");
}
END_TEST

/* A relative name is taken from the working directory. */
START_TEST(test_exe_resolve_takes_a_relative_name_from_the_working_directory)
{
	char *dir = link_tree();
	pid_t pid = fork();
	int status;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char got[PATH_MAX], want[PATH_MAX];

		if (chdir(dir) < 0 || !realpath("chain", want))
			_exit(2);
		if (mt_exe_resolve("chain", got, sizeof(got)) <= 0 || strcmp(got, want))
			_exit(1);
		if (mt_exe_resolve("c/../abs", got, sizeof(got)) <= 0 || strcmp(got, want))
			_exit(1);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	mt_quiet(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's status: %d", status);
}
END_TEST

/* What it cannot walk it refuses: a missing component, a loop of links,
 * a name that does not fit, and any walk into /proc (/dev/fd/N, the name
 * fexecve() gives, leads there). */
START_TEST(test_exe_resolve_refuses_a_loop_a_missing_file_and_a_walk_into_proc)
{
	char *dir = mt_test_scratch(), *path, out[PATH_MAX];

	symlink_at(dir, "x", "y");
	symlink_at(dir, "y", "x");
	path = mt_test_path(dir, "x");
	mt_quiet_int_eq(mt_exe_resolve(path, out, sizeof(out)), -ELOOP);
	free(path);
	path = mt_test_path(dir, "missing/f");
	mt_quiet_int_eq(mt_exe_resolve(path, out, sizeof(out)), -ENOENT);
	free(path);
	mt_quiet_int_eq(mt_exe_resolve("/dev/fd/0", out, sizeof(out)), -EXDEV);
	mt_quiet_int_eq(mt_exe_resolve("/proc/self/exe", out, sizeof(out)), -EXDEV);
	mt_quiet_int_eq(mt_exe_resolve("/usr/bin", out, 4), -ENAMETOOLONG);
}
END_TEST

/* The test program's own exe, found from its exec name (the file read
 * through a child of mt_nofd's: the suite's process is not alone), and
 * by mt_exe_path with and without leave to open a file: /proc/self/exe's
 * each time. */
START_TEST(test_exe_path_is_proc_self_exe_from_the_exec_name_or_from_proc)
{
	char got[PATH_MAX], want[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", want, sizeof(want) - 1);

	ck_assert_int_gt(n, 0);
	want[n] = '\0';
	mt_quiet_int_eq(mt_exe_from_exec_name(got, sizeof(got)), n);
	ck_assert_str_eq(got, want);
	mt_quiet_int_eq(mt_exe_path(got, sizeof(got), 1), n);
	ck_assert_str_eq(got, want);
	mt_quiet_int_eq(mt_exe_path(got, sizeof(got), 0), n);
	ck_assert_str_eq(got, want);
}
END_TEST

/* Programs exec'd under record by names /proc/self/exe does not give:
 * through a relative link, a shell script (the exe is its interpreter),
 * and ld.so run as the program (the exe is ld.so).  Each trace.start
 * names what realpath(3) makes of the file actually run. */
START_TEST(test_a_trace_names_the_exe_proc_would_whatever_name_ran_it)
{
	char *dir = mt_test_scratch(), *out = mt_test_path(dir, "out");
	char *prog = mt_test_workload("wl_exit"), *script = mt_test_path(dir, "run.sh");
	char cmd[8192], want_prog[PATH_MAX], want_sh[PATH_MAX], want_ld[PATH_MAX];
	const char *ld = "/lib64/ld-linux-x86-64.so.2";
	char *args[] = { "/bin/sh", "-c", cmd, NULL };
	char *argv[9];
	size_t n, seen_prog = 0, seen_sh = 0, seen_ld = 0;
	char **names;
	FILE *fp;
	mt_test_run_t r;

	mt_quiet(realpath(prog, want_prog) && realpath("/bin/sh", want_sh) && realpath(ld, want_ld),
		 "realpath: %s", strerror(errno));
	symlink_at(dir, "prog", prog);
	fp = fopen(script, "w");
	ck_assert_ptr_nonnull(fp);
	fprintf(fp, "#!/bin/sh\nexit 0\n");
	fclose(fp);
	ck_assert_int_eq(chmod(script, 0755), 0);
	snprintf(cmd, sizeof(cmd), "cd '%s' && { ./prog; ./run.sh; %s ./prog; exit 0; }", dir, ld);
	argv[0] = mt_test_memtrace();
	argv[1] = "record";
	argv[2] = "-o";
	argv[3] = out;
	argv[4] = "--";
	memcpy(argv + 5, args, sizeof(args));
	mt_test_run(&r, argv, NULL);
	free(argv[0]);
	mt_quiet(r.status == 0, "record exited %d: %s", r.status, r.err);
	names = mt_test_traces_ending(out, ".jsonl.zst", &n);
	for (size_t i = 0; i < n; i++) {
		char *path = mt_test_path(out, names[i]);
		json_object *start = mt_test_trace_start(path);
		json_object *av = mt_test_json_member(start, "argv");
		const char *exe = mt_test_json_str(start, "exe");
		const char *arg0 = json_object_get_string(json_object_array_get_idx(av, 0));

		/* ld.so gives the program it runs its own argv. */
		if (!strcmp(arg0, "./prog") && !strcmp(exe, want_ld)) {
			seen_ld++;
		} else if (!strcmp(arg0, "./prog")) {
			ck_assert_str_eq(exe, want_prog);
			seen_prog++;
		} else if (json_object_array_length(av) == 2 &&
			   strstr(json_object_get_string(json_object_array_get_idx(av, 1)), "run.sh")) {
			ck_assert_str_eq(exe, want_sh);
			seen_sh++;
		}
		json_object_put(start);
		free(path);
		free(names[i]);
	}
	free(names);
	mt_quiet_uint_eq(seen_prog, 1);
	mt_quiet_uint_eq(seen_sh, 1);
	mt_quiet_uint_eq(seen_ld, 1);
	mt_test_run_release(&r);
	free(script);
	free(prog);
	free(out);
}
END_TEST

Suite *mt_suite_exe(void)
{
	Suite *s = suite_create("exe");
	TCase *tc = tcase_create("exe");

	tcase_add_test(tc, test_exe_resolve_follows_links_as_realpath_does);
	tcase_add_test(tc, test_exe_resolve_takes_a_relative_name_from_the_working_directory);
	tcase_add_test(tc, test_exe_resolve_refuses_a_loop_a_missing_file_and_a_walk_into_proc);
	tcase_add_test(tc, test_exe_path_is_proc_self_exe_from_the_exec_name_or_from_proc);
	tcase_add_test(tc, test_a_trace_names_the_exe_proc_would_whatever_name_ran_it);
	suite_add_tcase(s, tc);
	return s;
}
