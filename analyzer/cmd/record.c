/*
 * record: `memtrace record [-o DIR] -- CMD [ARGS]`, run a command with
 * every process of its tree traced by one collector, the command's parent
 * (docs/record.md).  It finds the preload and the collector, makes the
 * directory of the traces and execs the collector in record mode
 * (collector/mt_server.h), which keeps this process's pid.  It must never
 * start the command itself, nor leave a descriptor of its own to it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../cmd/mt_cmd.h"
#include "../base/mt_error.h"

#define EXIT_UNAVAILABLE 69 /* sysexits' EX_UNAVAILABLE: a part is missing */

static const char usage[] =
	"usage: memtrace record [-o DIR] -- CMD [ARGS]\n"
	"\n"
	"Run CMD with every process of its tree traced, each into a trace of its\n"
	"own, DIR/memtrace.PID.jsonl.zst, written by one collector process, CMD's\n"
	"parent.  DIR is made when missing; by default memtrace.PROG.PID in the\n"
	"current directory (PROG: CMD's base name, PID: record's), or, when\n"
	"MEMTRACE_OUTPUT is set and -o is not given, the traces are named by it.\n"
	"Exits with CMD's status (128 + N when it dies of signal N), once CMD and\n"
	"every traced process of its tree have ended.\n"
	"\n"
	"  -o, --output DIR   the directory of the traces\n";

static const struct option options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, MT_CMD_OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static int option(void *ctx, int c, const char *arg)
{
	if (c != 'o')
		return MT_CMD_NOT_HERE;
	*(const char **)ctx = arg;
	return -1;
}

/* Where CMD begins: after "--", or at the first argument that is no
 * option (nor an option's value); argc when there is none. */
static int command_start(int argc, char **argv, int *dashdash)
{
	*dashdash = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			*dashdash = 1;
			return i;
		}
		if (a[0] != '-' || !a[1])
			return i;
		if (!strcmp(a, "-o") || !strcmp(a, "--output"))
			i++;
	}
	return argc;
}

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
static int find_part(const char *env, const char *const tails[], size_t ntails,
		     int exec, char *out, size_t cap)
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
	for (size_t i = 0; i < ntails; i++) {
		snprintf(out, cap, "%s%s", dir, tails[i]);
		if (!access(out, exec ? X_OK : R_OK))
			return 0;
	}
	snprintf(out, cap, "%s%s", dir, tails[0]);
	return -1;
}

/* path made absolute against the current directory (not resolved: a
 * pattern's file need not exist), into out. */
static int absolute(const char *path, char *out, size_t cap)
{
	char cwd[PATH_MAX];

	if (path[0] == '/')
		return snprintf(out, cap, "%s", path) < (int)cap ? 0 : -1;
	if (!getcwd(cwd, sizeof(cwd)))
		return -1;
	return snprintf(out, cap, "%s/%s", strcmp(cwd, "/") ? cwd : "", path) < (int)cap ? 0 : -1;
}

static int run(int argc, char **argv)
{
	static const char *const preload_tails[] = { "/libmtpreload.so",
						     "/../lib/libmtpreload.so" };
	static const char *const collector_tails[] = {
		"/memtrace-collector", "/../libexec/memtrace/memtrace-collector"
	};
	const mt_cmd_spec_t spec = {
		.usage = usage,
		.shorts = "o:",
		.options = options,
		.option = option,
		.help_at_once = 1,
	};
	char preload[PATH_MAX], collector[PATH_MAX], pattern[PATH_MAX], dir[PATH_MAX];
	char real[PATH_MAX];
	const char *out = NULL, *env = getenv("MEMTRACE_OUTPUT");
	int status, first, start, dashdash;
	char **cmd, **args;

	start = command_start(argc, argv, &dashdash);
	if ((status = mt_cmd_parse(&spec, &out, start, argv, &first)) >= 0)
		return status;
	cmd = argv + start + dashdash;
	if (!*cmd)
		return mt_cmd_usage_error(usage, "%s", "missing CMD argument");
	if (find_part("MEMTRACE_PRELOAD", preload_tails, 2, 0, preload, sizeof(preload)) < 0) {
		fprintf(stderr, "memtrace: cannot find the preload: no '%s' "
			"(run make, or set MEMTRACE_PRELOAD)\n", preload);
		return EXIT_UNAVAILABLE;
	}
	if (!realpath(preload, real) || strpbrk(real, ": ")) {
		fprintf(stderr, "memtrace: the preload's path '%s' holds a space or a colon, "
			"which LD_PRELOAD cannot carry\n", preload);
		return EXIT_UNAVAILABLE;
	}
	memcpy(preload, real, strlen(real) + 1);
	if (find_part("MEMTRACE_COLLECTOR", collector_tails, 2, 1, collector,
		      sizeof(collector)) < 0) {
		fprintf(stderr, "memtrace: cannot find the collector: no '%s' "
			"(run make, or set MEMTRACE_COLLECTOR)\n", collector);
		return EXIT_UNAVAILABLE;
	}
	if (!out && env && *env) {
		if (absolute(env, pattern, sizeof(pattern)) < 0)
			goto too_long;
	} else {
		if (out) {
			snprintf(dir, sizeof(dir), "%s", out);
		} else {
			const char *base = strrchr(cmd[0], '/');

			snprintf(dir, sizeof(dir), "memtrace.%s.%d", base ? base + 1 : cmd[0],
				 (int)getpid());
		}
		if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
			fprintf(stderr, "memtrace: cannot make directory '%s': %s\n", dir,
				strerror(errno));
			return MT_EXIT_CANTCREAT;
		}
		if (!realpath(dir, real)) {
			fprintf(stderr, "memtrace: cannot use directory '%s': %s\n", dir,
				strerror(errno));
			return MT_EXIT_CANTCREAT;
		}
		if (snprintf(pattern, sizeof(pattern), "%s/memtrace.%%p.jsonl.zst",
			     strcmp(real, "/") ? real : "") >= (int)sizeof(pattern))
			goto too_long;
	}
	args = calloc((size_t)(argc - start) + 6, sizeof(*args));
	if (!args)
		return mt_cmd_nomem();
	args[0] = "memtrace-collector";
	args[1] = "--record";
	args[2] = preload;
	args[3] = pattern;
	args[4] = "--";
	for (int i = 0; cmd[i]; i++)
		args[5 + i] = cmd[i];
	fflush(NULL);
	execv(collector, args);
	fprintf(stderr, "memtrace: cannot run the collector '%s': %s\n", collector,
		strerror(errno));
	free(args);
	return EXIT_UNAVAILABLE;
too_long:
	fprintf(stderr, "memtrace: the trace names are too long\n");
	return MT_EXIT_USAGE;
}

const mt_cmd_t mt_cmd_record = {
	.name = "record",
	.synopsis = "record [-o DIR] -- CMD",
	.summary = "run a command with every process of its tree traced",
	.usage = usage,
	.run = run,
};
