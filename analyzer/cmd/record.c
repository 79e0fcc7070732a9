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
	"current directory (PROG: CMD's base name, PID: record's; made new, mode\n"
	"0700, memtrace.PROG.PID.1 ... when that is taken), or, when\n"
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

/* dir into out at *n (cap bytes) with each '%' written "%%", so that a
 * pattern that starts with it names it ("/" is ""). */
static int add_dir(char *out, size_t cap, size_t *n, const char *dir)
{
	if (!strcmp(dir, "/"))
		dir = "";
	for (; *dir; dir++) {
		if (*n + 3 > cap)
			return -1;
		out[(*n)++] = *dir;
		if (*dir == '%')
			out[(*n)++] = '%';
	}
	out[*n] = '\0';
	return 0;
}

/* The pattern dir/name into out (dir's '%' escaped, name as it is). */
static int pattern_in(const char *dir, const char *name, char *out, size_t cap)
{
	size_t n = 0;

	if (add_dir(out, cap, &n, dir) < 0)
		return -1;
	return snprintf(out + n, cap - n, "/%s", name) < (int)(cap - n) ? 0 : -1;
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
	return pattern_in(cwd, path, out, cap);
}

/* -o DIR: made when missing, used as it is when it is there. */
static int make_named(const char *out, char *dir, size_t cap)
{
	snprintf(dir, cap, "%s", out);
	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		fprintf(stderr, "memtrace: cannot make directory '%s': %s\n", dir,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* The default, memtrace.PROG.PID in the current directory, as the preload
 * names a tree's directory (docs/preload-use.md, "Where traces go"): made
 * new, mode 0700; when the name is taken (an earlier run's, a pid come
 * round again), the first free of .1 to .999 after it. */
static int make_default(const char *prog, char *dir, size_t cap)
{
	const char *base = strrchr(prog, '/');
	int rc = -1;

	for (int k = 0; k < 1000; k++) {
		if (k)
			snprintf(dir, cap, "memtrace.%s.%d.%d", base ? base + 1 : prog,
				 (int)getpid(), k);
		else
			snprintf(dir, cap, "memtrace.%s.%d", base ? base + 1 : prog,
				 (int)getpid());
		rc = mkdir(dir, 0700);
		if (rc == 0 || errno != EEXIST)
			break;
	}
	if (rc == 0 && chmod(dir, 0700) == 0)
		return 0;
	fprintf(stderr, "memtrace: cannot make directory '%s': %s\n", dir, strerror(errno));
	return -1;
}

static int run(int argc, char **argv)
{
	const mt_cmd_spec_t spec = {
		.usage = usage,
		.shorts = "o:",
		.options = options,
		.option = option,
		.help_at_once = 1,
		.no_threads = 1,
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
		if (out ? make_named(out, dir, sizeof(dir)) < 0 :
			  make_default(cmd[0], dir, sizeof(dir)) < 0)
			return MT_EXIT_CANTCREAT;
		if (!realpath(dir, real)) {
			fprintf(stderr, "memtrace: cannot use directory '%s': %s\n", dir,
				strerror(errno));
			return MT_EXIT_CANTCREAT;
		}
		if (pattern_in(real, "memtrace.%p.jsonl.zst", pattern, sizeof(pattern)) < 0)
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
