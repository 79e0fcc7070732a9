/*
 * record: `memtrace record [-o DIR] -- CMD [ARGS]`, run a command with
 * every process of its tree traced by one collector, the command's parent
 * (docs/record.md).  It makes the directory of the traces and execs the
 * collector in record mode (mt_launch.h), which keeps this process's pid.  It must never
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
#include "../cmd/mt_launch.h"
#include "../base/mt_error.h"

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
	const mt_cmd_spec_t spec = {
		.usage = usage,
		.shorts = "o:",
		.options = options,
		.option = option,
		.help_at_once = 1,
	};
	char pattern[PATH_MAX], dir[PATH_MAX], real[PATH_MAX];
	const char *out = NULL, *env = getenv("MEMTRACE_OUTPUT");
	int status, first, start, dashdash;
	mt_launch_t l;
	char **cmd;

	start = command_start(argc, argv, &dashdash);
	if ((status = mt_cmd_parse(&spec, &out, start, argv, &first)) >= 0)
		return status;
	cmd = argv + start + dashdash;
	if (!*cmd)
		return mt_cmd_usage_error(usage, "%s", "missing CMD argument");
	if ((status = mt_launch_find_preload(&l, "memtrace")) >= 0 ||
	    (status = mt_launch_find_collector(&l, "memtrace")) >= 0)
		return status;
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
	return mt_launch_record(&l, pattern, cmd);
too_long:
	fprintf(stderr, "memtrace: the trace names are too long\n");
	return MT_EXIT_USAGE;
}

const mt_cmd_t mt_cmd_record = {
	.name = "record",
	.synopsis = "record -- CMD",
	.summary = "run a command with every process of its tree traced",
	.usage = usage,
	.run = run,
};
