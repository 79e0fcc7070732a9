/*
 * mt_launch: the collector and the preload found, and the collector
 * exec'd in record mode (mt_launch.h).  It must never leave a descriptor
 * of its own to the collector, nor start the command.
 */
#include "../cmd/mt_launch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../cmd/mt_cmd.h"

/* This binary's directory, into dir (cap bytes): 0, or -1. */
static int self_dir(char *dir, size_t cap)
{
	ssize_t n = readlink("/proc/self/exe", dir, cap - 1);
	char *slash;

	if (n <= 0)
		return -1;
	dir[n] = '\0';
	slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return 0;
}

/*
 * A part beside this binary: env's value when set, else the first of
 * DIR/tails[i] that is there (DIR this binary's directory), into out.
 * 0, or -1 with out holding the first place looked at.
 */
static int find_part(const char *env, const char *const tails[2], int exec,
		     char *out, size_t cap)
{
	const char *given = getenv(env);
	char dir[PATH_MAX];

	if (given && *given) {
		snprintf(out, cap, "%s", given);
		return access(out, exec ? X_OK : R_OK) ? -1 : 0;
	}
	if (self_dir(dir, sizeof(dir)) < 0) {
		snprintf(out, cap, "%s", tails[0] + 1);
		return -1;
	}
	for (size_t i = 0; i < 2; i++) {
		snprintf(out, cap, "%s%s", dir, tails[i]);
		if (!access(out, exec ? X_OK : R_OK))
			return 0;
	}
	snprintf(out, cap, "%s%s", dir, tails[0]);
	return -1;
}

int mt_launch_find_preload(mt_launch_t *l, const char *prog)
{
	static const char *const tails[2] = { "/libmtpreload.so",
					      "/../lib/libmtpreload.so" };
	char real[PATH_MAX];

	if (find_part("MEMTRACE_PRELOAD", tails, 0, l->preload,
		      sizeof(l->preload)) < 0) {
		fprintf(stderr, "%s: cannot find the preload: no '%s' "
			"(run make, or set MEMTRACE_PRELOAD)\n", prog, l->preload);
		return MT_LAUNCH_UNAVAILABLE;
	}
	/* The command may change directory: the preload goes by its
	 * absolute path. */
	if (!realpath(l->preload, real) || strpbrk(real, ": ")) {
		fprintf(stderr, "%s: the preload's path '%s' holds a space or a "
			"colon, which LD_PRELOAD cannot carry\n", prog, l->preload);
		return MT_LAUNCH_UNAVAILABLE;
	}
	memcpy(l->preload, real, strlen(real) + 1);
	return -1;
}

int mt_launch_find_collector(mt_launch_t *l, const char *prog)
{
	static const char *const tails[2] = {
		"/memtrace-collector", "/../libexec/memtrace/memtrace-collector"
	};

	if (find_part("MEMTRACE_COLLECTOR", tails, 1, l->collector,
		      sizeof(l->collector)) < 0) {
		fprintf(stderr, "%s: cannot find the collector: no '%s' "
			"(run make, or set MEMTRACE_COLLECTOR)\n", prog, l->collector);
		return MT_LAUNCH_UNAVAILABLE;
	}
	return -1;
}

int mt_launch_record(const mt_launch_t *l, const char *pattern,
		     char *const cmd[])
{
	size_t n = 0;
	char **args;

	while (cmd[n])
		n++;
	args = calloc(n + 6, sizeof(*args));
	if (!args)
		return mt_cmd_nomem();
	args[0] = "memtrace-collector";
	args[1] = "--record";
	args[2] = (char *)l->preload;
	args[3] = (char *)pattern;
	args[4] = "--";
	memcpy(args + 5, cmd, n * sizeof(*cmd));
	fflush(NULL);
	execv(l->collector, args);
	fprintf(stderr, "memtrace: cannot run the collector '%s': %s\n",
		l->collector, strerror(errno));
	free(args);
	return MT_LAUNCH_UNAVAILABLE;
}
