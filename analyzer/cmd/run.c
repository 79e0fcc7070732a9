/*
 * run: `memtrace run [OPTIONS] -- CMD [ARGS...]`, what memtrace-run does
 * (docs/memtrace-run.md; scripts/memtrace-run execs it): CMD run N times,
 * each run under the collector in record mode (mt_launch.h), one
 * repetition row a run and run 1 as the capture, a line a run and the
 * table of min, median and max (mt_run_lines.h); or, with --oom-sweep, CMD
 * run under plain LD_PRELOAD failing its allocation 1, 2, ... each under
 * a watchdog.  Its messages are memtrace-run's ("memtrace-run: ...").
 * Only the workload runs under the preload, never memtrace itself; the
 * workload's stdin, stdout and stderr are memtrace-run's own, and the
 * command's environment gets LD_PRELOAD and the MEMTRACE_ variables in
 * the child alone.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../cmd/mt_cli.h"
#include "../cmd/mt_cmd.h"
#include "../cmd/mt_commands.h"
#include "../cmd/mt_launch.h"
#include "../base/mt_error.h"
#include "../base/mt_units.h"
#include "../gates/mt_run_lines.h"
#include "../rows/mt_tree.h"

#define PROG "memtrace-run"
#define EXIT_SOFTWARE 70   /* sysexits' EX_SOFTWARE: an analysis failed */
#define EXIT_NOEXEC 126    /* the shell's: CMD cannot be executed */
#define EXIT_NOTFOUND 127  /* the shell's: CMD not found */

#define RUN_USAGE                                                             \
	"usage: memtrace-run [-n N] [-o DIR] [--stack-depth D] [--sample B] "   \
	"[--top-only] [--strict] [--quiet|--verbose] -- CMD [ARGS...]"

static const char run_help[] =
	RUN_USAGE "\n"
	"       memtrace-run --oom-sweep [--max K] [--timeout S] [-o DIR] [--quiet] -- CMD [ARGS...]\n"
	"\n"
	"Run CMD N times under libmtpreload.so.  Run I writes the zstd trace\n"
	"DIR/allocations.I.jsonl.zst (a child process: DIR/allocations.I.PID.jsonl.zst)\n"
	"and one row of DIR/allocations.repetitions.jsonl; run 1 is also the\n"
	"capture, written to DIR/summary.jsonl with its row appended to\n"
	"DIR/captures.jsonl.  A run's line, the table and the rows cover every\n"
	"trace of the run's process tree, summed (peaks: the sum of each\n"
	"process's own).\n"
	"\n"
	"  -n, --runs N         runs of CMD (default 1)\n"
	"  -o, --output DIR     where the traces and rows go (default memtrace-out),\n"
	"                       created when missing\n"
	"  --stack-depth D      frames recorded per stack, 0 to 256 (MEMTRACE_STACK_DEPTH)\n"
	"  --sample B           record one allocation per B bytes on average, B bytes\n"
	"                       or 512K, 2M, 1G (MEMTRACE_SAMPLE): figures are estimates\n"
	"  --top-only           the line, table and rows count CMD's own process\n"
	"                       alone, not its children nor the images they exec\n"
	"  --strict             also fail when a run's trace is not complete\n"
	"  -q, --quiet          no progress lines and no table on stderr\n"
	"  -v, --verbose        also a line per process of each run's tree\n"
	"  -h, --help           this text\n"
	"  -V, --version        the version, as the first argument alone\n"
	"\n"
	"  --oom-sweep          instead: run CMD failing its allocation 1, then 2, ...\n"
	"                       until a run makes fewer allocations; one line per run on\n"
	"                       stdout (clean exit, error exit, crash, hang), with the\n"
	"                       failed allocation's stack for each crash or hang\n"
	"  --max K              stop the sweep after allocation K\n"
	"  --timeout S          seconds a sweep run may take before it counts as hung\n"
	"                       (default 10)\n"
	"\n"
	"Exit status: the workload's first non-zero exit status (128 + N for signal\n"
	"N), else 0; with --strict 1, 2 or 3 for a caveated, invalid or missing trace.\n"
	"64 usage, 69 memtrace not found, 70 analyzer failed, 73 DIR not writable,\n"
	"126 CMD not executable, 127 CMD not found.  --oom-sweep: 0 no run crashed\n"
	"or hung, 1 one did.\n";

/* The options that take a value, by every name they go by. */
enum { V_RUNS, V_DIR, V_DEPTH, V_SAMPLE, V_MAX, V_TIMEOUT, V_COUNT };

static const struct {
	const char *name;
	int which;
} valued[] = {
	{ "-n", V_RUNS }, { "--runs", V_RUNS },
	{ "-o", V_DIR }, { "--output", V_DIR },
	{ "--stack-depth", V_DEPTH }, { "--sample", V_SAMPLE }, { "--max", V_MAX },
	{ "--timeout", V_TIMEOUT },
};

typedef struct {
	const char *value[V_COUNT];
	int strict, quiet, verbose, sweep, help, top_only;
	int taken; /* the arguments before CMD */
} run_opts_t;

/* "memtrace-run: <fmt ...> (usage: ...)" on stderr; returns 64. */
static int __attribute__((format(printf, 1, 2))) bad(const char *fmt, ...)
{
	va_list ap;

	fputs("memtrace-run: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (" RUN_USAGE ")\n", stderr);
	return MT_EXIT_USAGE;
}

/* The option a names, as far as the value it may carry: V_*, or -1. */
static int valued_option(const char *a, const char **inline_value)
{
	const char *eq = strchr(a, '=');
	size_t len = eq && a[1] == '-' ? (size_t)(eq - a) : strlen(a);

	*inline_value = NULL;
	/* -nN and -oDIR, as -n N and -o DIR. */
	if (a[0] == '-' && (a[1] == 'n' || a[1] == 'o') && a[2]) {
		*inline_value = a + 2;
		return a[1] == 'n' ? V_RUNS : V_DIR;
	}
	for (size_t i = 0; i < sizeof(valued) / sizeof(valued[0]); i++)
		if (strlen(valued[i].name) == len &&
		    !strncmp(a, valued[i].name, len)) {
			*inline_value = a[len] == '=' ? a + len + 1 : NULL;
			return valued[i].which;
		}
	return -1;
}

/* The options, up to "--" or the first argument that is none. */
static int read_options(run_opts_t *o, int argc, char **argv)
{
	int i = 0;

	for (; i < argc; i++) {
		const char *a = argv[i], *v;
		int which = valued_option(a, &v);

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (which >= 0) {
			if (!v && i + 1 >= argc)
				return bad("option '%s' needs a value", a);
			o->value[which] = v ? v : argv[++i];
		} else if (!strcmp(a, "--strict")) {
			o->strict = 1;
		} else if (!strcmp(a, "--top-only")) {
			o->top_only = 1;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			o->quiet = 1;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			o->verbose = 1;
		} else if (!strcmp(a, "--oom-sweep")) {
			o->sweep = 1;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			o->help = 1;
			return -1;
		} else if (a[0] == '-' && a[1]) {
			return bad("unknown option '%s'", a);
		} else {
			break;
		}
	}
	o->taken = i;
	return -1;
}

/* s as a whole number of at most max digits: 0, 1 when it is no number,
 * 2 when it has more digits. */
static int number(const char *s, size_t max, uint64_t *v)
{
	if (strlen(s) > max)
		return s[strspn(s, "0123456789")] ? 1 : 2;
	return mt_units_parse_count(s, v) ? 1 : 0;
}

/* --sample: what MEMTRACE_SAMPLE takes (docs/preload.md), a positive
 * number of bytes with an optional K, M or G, below 2^60 bytes. */
static int sample_ok(const char *s)
{
	size_t len = strlen(s);
	uint64_t v, unit = 1;
	char digits[24];

	if (len && strchr("KkMmGg", s[len - 1])) {
		unit = strchr("Kk", s[len - 1]) ? 1ull << 10 :
		       strchr("Mm", s[len - 1]) ? 1ull << 20 : 1ull << 30;
		len--;
	}
	if (!len || len >= sizeof(digits))
		return 0;
	memcpy(digits, s, len);
	digits[len] = '\0';
	return !mt_units_parse_count(digits, &v) && v && v <= (1ull << 60) / unit;
}

/* The sweep's --max and --timeout: 1 to 999999999. */
static int sweep_number(const char *name, const char *s, uint64_t *v)
{
	int rc = number(s, 9, v);

	if (rc == 1)
		return bad("%s needs a whole number, 1 or more, not '%s'", name, s);
	if (rc || !*v)
		return bad("%s needs a whole number from 1 to 999999999, not '%s'",
			   name, s);
	return -1;
}

/* What the command line says, read and checked. */
typedef struct {
	uint64_t runs, sweep_max, sweep_timeout;
	const char *depth, *sample; /* NULL: not given */
	int strict, quiet, verbose, sweep;
	int top_only; /* the rows, line and table: CMD's own trace alone */
	char *dir;  /* DIR without its trailing slashes ("/" stays) */
	char **cmd; /* CMD [ARGS...], NULL-terminated */
} settings_t;

/* The command line, argv[0..argc) after `run`: -1, or the status after
 * printing the help (0) or the usage error (64). */
static int read_settings(settings_t *s, int argc, char **argv)
{
	run_opts_t o = { .value = { [V_RUNS] = "1", [V_DIR] = "memtrace-out" } };
	const char *max, *timeout, *runs_s;
	int status, rc;
	size_t len;

	if ((status = read_options(&o, argc, argv)) >= 0)
		return status;
	if (o.help) {
		fputs(run_help, stdout);
		return fflush(stdout) ? MT_EXIT_CANTCREAT : MT_EXIT_OK;
	}
	if (o.taken >= argc)
		return bad("no command given");
	runs_s = o.value[V_RUNS];
	if ((rc = number(runs_s, 9, &s->runs)) == 1)
		return bad("-n needs a whole number of runs, 1 or more, not '%s'",
			   runs_s);
	if (rc)
		return bad("-n %s: too many runs", runs_s);
	if (!s->runs)
		return bad("-n needs at least 1 run, not 0");
	s->depth = o.value[V_DEPTH];
	if (s->depth && !*s->depth)
		s->depth = NULL;
	{
		uint64_t dv;

		if (s->depth && (number(s->depth, 3, &dv) || dv > 256))
			return bad("--stack-depth needs a number from 0 to 256, "
				   "not '%s'", s->depth);
	}
	s->sample = o.value[V_SAMPLE];
	if (s->sample && !sample_ok(s->sample))
		return bad("--sample needs a number of bytes, 1 or more (or 512K, 2M, 1G), "
			   "not '%s'", s->sample);
	if (s->sample && !*s->sample)
		s->sample = NULL;
	if (!*o.value[V_DIR])
		return bad("-o needs a directory, not an empty string");
	max = o.value[V_MAX];
	timeout = o.value[V_TIMEOUT];
	if (o.sweep) {
		if (s->runs != 1)
			return bad("-n does not apply to --oom-sweep, which runs "
				   "CMD once per allocation");
		if (o.strict)
			return bad("--strict does not apply to --oom-sweep");
		if (o.top_only)
			return bad("--top-only does not apply to --oom-sweep");
		if (s->sample)
			return bad("--sample does not apply to --oom-sweep, which "
				   "counts every allocation");
		if (max && *max &&
		    (status = sweep_number("--max", max, &s->sweep_max)) >= 0)
			return status;
		if (!timeout || !*timeout)
			timeout = "10";
		if ((status = sweep_number("--timeout", timeout,
					   &s->sweep_timeout)) >= 0)
			return status;
	} else if ((max && *max) || (timeout && *timeout)) {
		return bad("--max and --timeout apply only to --oom-sweep");
	}
	s->strict = o.strict;
	s->top_only = o.top_only;
	s->quiet = o.quiet;
	s->verbose = o.verbose;
	s->sweep = o.sweep;
	len = strlen(o.value[V_DIR]);
	while (len > 1 && o.value[V_DIR][len - 1] == '/')
		len--;
	if (!(s->dir = strndup(o.value[V_DIR], len)))
		return mt_cmd_nomem();
	s->cmd = argv + o.taken;
	return -1;
}

/* "memtrace-run: <fmt ...>" on stderr; returns status. */
static int __attribute__((format(printf, 2, 3))) die(int status,
						     const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return status;
}

/* ---- CMD, found and executable before anything runs ---- */

/* Whether path is a program to run: a file, not a directory, that we
 * may execute. */
static int executable(const char *path)
{
	struct stat st;

	return !stat(path, &st) && !S_ISDIR(st.st_mode) && !access(path, X_OK);
}

/* A name without a '/' is a program on PATH, as `type -P` finds it
 * (never a shell's builtin or function). */
static int on_path(const char *name)
{
	const char *path = getenv("PATH");
	int found = 0;

	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (!found) {
		size_t n = strcspn(path, ":");
		char *p;

		if (asprintf(&p, "%.*s%s%s", (int)n, path, n ? "/" : "", name) < 0)
			return 0;
		found = executable(p);
		free(p);
		if (!path[n])
			break;
		path += n + 1;
	}
	return found;
}

static int check_command(const char *cmd)
{
	struct stat st;

	if (strchr(cmd, '/')) {
		if (!stat(cmd, &st) && S_ISDIR(st.st_mode))
			return die(EXIT_NOEXEC, "cannot run '%s': it is a directory", cmd);
		if (stat(cmd, &st))
			return die(EXIT_NOTFOUND, "cannot run '%s': no such file", cmd);
		if (access(cmd, X_OK))
			return die(EXIT_NOEXEC, "cannot run '%s': permission denied "
				   "(not executable)", cmd);
	} else if (!*cmd || !on_path(cmd)) {
		return die(EXIT_NOTFOUND, "cannot run '%s': command not found", cmd);
	}
	return -1;
}

/* ---- DIR, made ready ---- */

/* "memtrace-run: cannot use|create|... the output directory ..."; 73. */
static int cannot(const char *what, const char *dir, const char *why)
{
	return die(MT_EXIT_CANTCREAT, "cannot %s '%s'%s", what, dir, why);
}

static int has_pct_p(const char *dir, const char *path)
{
	if (path && strstr(path, "%p")) {
		cannot("use", dir, " as the output directory: the preload cannot "
		       "name child traces under a path that holds '%p'");
		return 1;
	}
	return 0;
}

/* mkdir -p path: 0, or -1 with errno. */
static int make_dirs(char *path)
{
	struct stat st;

	for (char *p = path + 1; (p = strchr(p, '/')); *p++ = '/') {
		*p = '\0';
		if (mkdir(path, 0777) && errno != EEXIST) {
			*p = '/';
			return -1;
		}
	}
	if (mkdir(path, 0777) && errno != EEXIST)
		return -1;
	if (stat(path, &st))
		return -1;
	return S_ISDIR(st.st_mode) ? 0 : (errno = ENOTDIR, -1);
}

/*
 * DIR created with its parents when missing and a file made and removed
 * in it; *pattern its absolute, physical path with each '%' written "%%"
 * and a '/' after it, the start of the preload's MEMTRACE_OUTPUT.  A path
 * that holds "%p" is refused before anything is made.  -1, or 73 or 4
 * after saying why.
 */
static int prepare_dir(const char *dir, mt_buf_t *pattern)
{
	char *path = NULL, *probe = NULL, *abs = NULL;
	const char *pwd = getenv("PWD");
	struct stat st;
	int status = -1, fd, rc = 0;

	if (has_pct_p(dir, dir) || (dir[0] != '/' && has_pct_p(dir, pwd)))
		return MT_EXIT_CANTCREAT;
	if (!stat(dir, &st) && !S_ISDIR(st.st_mode))
		return cannot("use", dir, " as the output directory: it is not "
			      "a directory");
	if (!(path = strdup(dir)) ||
	    asprintf(&probe, "%s/.memtrace-run.XXXXXX", dir) < 0) {
		probe = NULL;
		status = mt_cmd_nomem();
		goto cleanup;
	}
	if (make_dirs(path)) {
		status = cannot("create the output directory", dir, "");
		goto cleanup;
	}
	if ((fd = mkstemp(probe)) < 0) {
		status = cannot("write to the output directory", dir, "");
		goto cleanup;
	}
	close(fd);
	unlink(probe);
	if (!(abs = realpath(dir, NULL))) {
		status = cannot("enter the output directory", dir, "");
		goto cleanup;
	}
	if (has_pct_p(dir, abs)) {
		status = MT_EXIT_CANTCREAT;
		goto cleanup;
	}
	for (const char *p = abs; *p && !rc; p++)
		rc = (*p == '%' && mt_buf_add_str(pattern, "%")) ||
		     mt_buf_add(pattern, p, 1);
	if (rc || (strcmp(abs, "/") && mt_buf_add_str(pattern, "/")))
		status = mt_cmd_nomem();
cleanup:
	free(abs);
	free(probe);
	free(path);
	return status;
}

/* ---- the files of a run ---- */

/* The entries of DIR named PREFIX, a digit, anything, SUFFIX (the
 * shell's PREFIX[0-9]*SUFFIX), as paths under pfx, sorted; *n of them.
 * NULL with *n 0 when there are none or memory ran out (*nomem). */
static char **matching(const char *dir, const char *pfx, const char *prefix,
		       const char *suffix, size_t *n, int *nomem)
{
	struct dirent **names = NULL;
	char **paths = NULL;
	size_t plen = strlen(prefix), slen = strlen(suffix);
	int count = scandir(dir, &names, NULL, alphasort), k = 0;

	*n = 0;
	*nomem = 0;
	if (count <= 0) {
		free(names);
		return NULL;
	}
	if (!(paths = calloc((size_t)count + 1, sizeof(*paths))))
		*nomem = 1;
	for (int i = 0; i < count; i++) {
		const char *e = names[i]->d_name;
		size_t len = strlen(e);

		if (paths && !*nomem && len > plen + slen &&
		    !strncmp(e, prefix, plen) && e[plen] >= '0' && e[plen] <= '9' &&
		    !strcmp(e + len - slen, suffix) &&
		    asprintf(&paths[k++], "%s%s", pfx, e) < 0) {
			paths[--k] = NULL;
			*nomem = 1;
		}
		free(names[i]);
	}
	free(names);
	*n = (size_t)k;
	return paths;
}

static void free_paths(char **paths)
{
	for (size_t i = 0; paths && paths[i]; i++)
		free(paths[i]);
	free(paths);
}

/* rm -f each of paths. */
static void remove_paths(char **paths)
{
	for (size_t i = 0; paths && paths[i]; i++)
		unlink(paths[i]);
}

/* Wait until the collector writing path has finished it: it holds its
 * trace locked while it writes (a killed workload's collector goes on
 * writing what the workload recorded). */
static void finished(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return;
	while (flock(fd, LOCK_SH) < 0 && errno == EINTR)
		;
	close(fd);
}

/* ---- signals ---- */

/* SIGINT or SIGTERM met: 128 + its number, as the shell's status. */
static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = 128 + sig;
}

/* INT and TERM are blocked but where the sweep waits (ppoll) and at the
 * points where the runs look at them (take_signals), so that a signal is
 * met between steps, never in the middle of one. */
static sigset_t blocked, unblocked;

static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&blocked);
	sigaddset(&blocked, SIGINT);
	sigaddset(&blocked, SIGTERM);
	sigprocmask(SIG_BLOCK, &blocked, &unblocked);
}

static void take_signals(void)
{
	sigprocmask(SIG_SETMASK, &unblocked, NULL);
	sigprocmask(SIG_BLOCK, &blocked, NULL);
}

/* In a child, before it execs: the signals as they were. */
static void child_signals(void)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	sigprocmask(SIG_SETMASK, &unblocked, NULL);
}

/* The signal's name (KILL) when status is a death by signal, 128 + N,
 * as `kill -l` gives it; NULL otherwise. */
static const char *signal_of(int status, char *buf, size_t cap)
{
	int sig = status - 128;
	const char *name;

	if (status <= 128 || sig >= NSIG)
		return NULL;
	if ((name = sigabbrev_np(sig)))
		return name;
	if (sig < SIGRTMIN || sig > SIGRTMAX)
		return NULL;
	if (sig - SIGRTMIN <= (SIGRTMAX - SIGRTMIN) / 2)
		snprintf(buf, cap, sig == SIGRTMIN ? "RTMIN" : "RTMIN+%d",
			 sig - SIGRTMIN);
	else
		snprintf(buf, cap, sig == SIGRTMAX ? "RTMAX" : "RTMAX-%d",
			 SIGRTMAX - sig);
	return buf;
}

/* The status the shell gives a child that ended with w. */
static int shell_status(int w)
{
	return WIFEXITED(w) ? WEXITSTATUS(w) : 128 + WTERMSIG(w);
}

/* The environment every traced run gets, in the child. */
static void traced_env(const settings_t *s, const char *pattern)
{
	setenv("MEMTRACE_OUTPUT", pattern, 1);
	if (s->depth)
		setenv("MEMTRACE_STACK_DEPTH", s->depth, 1);
	if (s->sample)
		setenv("MEMTRACE_SAMPLE", s->sample, 1);
}

/* ---- the runs ---- */

/*
 * Run CMD under the collector in record mode (docs/record.md): one
 * collector, the workload's parent, traces its whole tree, so that no
 * collector is ever the workload's child and the tree costs one process
 * more, not one per process.  Its stdin, stdout and stderr are ours.
 * Returns its status as the shell gives it.
 */
static int run_recorded(const settings_t *s, const mt_launch_t *l,
			const char *pattern)
{
	pid_t pid;
	int w;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return die(EXIT_SOFTWARE, "cannot fork: %s", strerror(errno));
	if (pid == 0) {
		child_signals();
		traced_env(s, pattern);
		_exit(mt_launch_record(l, pattern, s->cmd));
	}
	while (waitpid(pid, &w, 0) < 0)
		if (errno != EINTR)
			return die(EXIT_SOFTWARE, "cannot wait for the run: %s",
				   strerror(errno));
	return shell_status(w);
}

/* One of the analyzer's commands, in this process (argv NULL-ended):
 * its status. */
static int analyze(char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return mt_commands_find(argv[0])->run(argc, argv);
}

/* A process's line under its run's (--verbose): "  PROGRAM ARGS (pid N,
 * parent M): FIGURES  TRACE", as `memtrace tree` writes it; the trace's
 * name stands for the program when its trace.start does not say. */
static int add_process(mt_buf_t *b, const char *path, const mt_analysis_t *a)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	size_t mark = b->len;
	mt_run_lines_stderr_t se = {
		mt_sampling_stderr(a->heap.var.allocations),
		mt_sampling_stderr(a->heap.var.peak_live_bytes),
	};
	int rc;

	if ((rc = mt_buf_add_str(b, "  ")) ||
	    (rc = mt_identity_describe(&a->identity, name, MT_IDENTITY_PIDS, b)) ||
	    (rc = mt_buf_add_str(b, ": ")) ||
	    (rc = a->integrity.invalid ?
			  mt_buf_add_str(b, "invalid") :
			  mt_run_lines_add_figures(b, a->heap.allocations,
					      a->heap.peak_live_bytes,
					      a->heap.sample_bytes ? &se : NULL,
					      mt_integrity_status(&a->integrity))) ||
	    (mt_identity_known(&a->identity) &&
	     ((rc = mt_buf_add_str(b, "  ")) || (rc = mt_buf_add_str(b, name)))) ||
	    (rc = mt_buf_add_str(b, "\n")))
		mt_buf_truncate(b, mark);
	return rc;
}

/* The tree of traces[0..n): its sum into *t, and a line per process
 * into procs (verbose); *have set when every trace was read and is
 * evidence.  Unless tolerant, a trace that cannot be read stops it:
 * -1, or the status after saying why.  Tolerant (a failed workload's
 * traces, which may be missing or cut short), it leaves *have clear. */
static int sum_tree(mt_tree_t *t, char **traces, size_t n, int verbose,
		    mt_buf_t *procs, int tolerant, int *have)
{
	*have = 0;
	for (size_t i = 0; i < n; i++) {
		mt_analysis_t a;
		int status, rc = MT_OK;

		if (tolerant) {
			rc = mt_analysis_run(&a, traces[i]);
			if (rc == MT_ENOMEM) {
				mt_analysis_release(&a);
				return mt_cmd_nomem();
			}
			if (rc || a.integrity.invalid) {
				mt_analysis_release(&a);
				mt_buf_truncate(procs, 0);
				return -1;
			}
		} else if ((status = mt_cmd_analyze(&a, traces[i], NULL, NULL)) >= 0) {
			mt_analysis_release(&a);
			return status;
		}
		mt_tree_add(t, traces[i], &a);
		if (verbose)
			rc = add_process(procs, traces[i], &a);
		mt_analysis_release(&a);
		if (rc)
			return mt_cmd_nomem();
	}
	*have = 1;
	return -1;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * Run i's figures onto figures (a line) and its line (and a line per
 * process) onto line, from the last row of reps and the run's traces
 * (traces[0] the workload's, then its children's, n in all): with child
 * traces the whole tree's, summed, as the rows sum it.  A failed
 * workload's row has no summary: its figures are then read from its
 * traces, when they can be.  -1, or the status after saying why.
 */
static int account(const settings_t *s, uint64_t i, int exit, const char *sig,
		   const char *reps, char **traces, size_t n, mt_buf_t *figures,
		   mt_buf_t *line)
{
	mt_run_lines_row_t row;
	mt_tree_t t = MT_TREE_INIT;
	mt_buf_t procs = MT_BUF_INIT;
	char why[MT_RUN_LINES_WHY_MAX];
	int status = -1, err = 0, rc, summed, written, failed, counted, have = 0;
	uint64_t fig[3];
	mt_run_lines_stderr_t se;
	const mt_run_lines_stderr_t *sampled;
	const char *state, *trace_status;

	rc = mt_run_lines_last_row(reps, &row, &err, why, sizeof(why));
	if (rc == MT_ENOMEM)
		return mt_cmd_nomem();
	if (rc == MT_EIO)
		return mt_cmd_cannot_read(reps, err);
	if (rc) {
		fprintf(stderr, "memtrace: '%s' is not a repetitions file: %s\n",
			reps, why);
		return MT_EXIT_INVALID;
	}
	state = row.state[0] ? row.state : NULL;
	written = state && !strcmp(state, "summary_written");
	failed = state && !strcmp(state, "workload_failed");
	fig[0] = row.allocations;
	fig[1] = row.peak_live_bytes;
	fig[2] = row.live_bytes;
	se = row.stderr_of;
	sampled = row.sampled ? &se : NULL;
	trace_status = row.status;
	if ((written && n > 1) || failed) {
		if ((status = sum_tree(&t, traces, n, s->verbose, &procs, failed,
				       &have)) >= 0)
			goto cleanup;
		if (have) {
			fig[0] = t.allocations;
			fig[1] = t.peak_live_bytes;
			fig[2] = t.live_bytes;
			se.allocations = mt_sampling_stderr(t.var_allocations);
			se.peak = mt_sampling_stderr(t.var_peak);
			sampled = t.sampled ? &se : NULL;
			trace_status = t.status ? t.status : "complete";
		}
	}
	counted = written || have;
	summed = have && n > 1;
	rc = mt_buf_add_u64(figures, (uint64_t)exit) ||
	     mt_buf_add_str(figures, " ") ||
	     mt_buf_add_str(figures, state ? state : "-");
	if (counted)
		for (int k = -1; k < 3 && !rc; k++)
			rc = mt_buf_add_str(figures, " ") ||
			     (k < 0 ? mt_buf_add_str(figures, trace_status) :
				      mt_buf_add_u64(figures, fig[k]));
	rc = rc || mt_buf_add_str(figures, "\n") ||
	     mt_buf_add_str(line, "run ") || mt_buf_add_u64(line, i) ||
	     mt_buf_add_str(line, "/") || mt_buf_add_u64(line, s->runs) ||
	     mt_buf_add_str(line, sig ? ": killed by SIG" : ": exit ") ||
	     (sig ? mt_buf_add_str(line, sig) :
		    mt_buf_add_u64(line, (uint64_t)exit));
	if (rc) {
	} else if (!state) {
		rc = mt_buf_add_str(line, ", no row\n");
	} else if (!counted) {
		rc = mt_buf_add_str(line, ", ") || mt_buf_add_str(line, state) ||
		     mt_buf_add_str(line,
				    failed ? " (trace not summarized)\n" :
				    !strcmp(state, "capture_missing") ?
					    " (no trace: a static or set-user-ID program?)\n" :
					    "\n");
	} else if (!summed) {
		rc = mt_buf_add_str(line, ", ") ||
		     mt_run_lines_add_figures(line, fig[0], fig[1], sampled, trace_status);
	} else {
		rc = mt_buf_add_str(line, ", ") ||
		     mt_buf_add_u64(line, t.processes) ||
		     mt_buf_add_str(line, " processes: ") ||
		     mt_run_lines_add_figures(line, fig[0], fig[1], sampled, trace_status) ||
		     (t.status && (mt_buf_add_str(line, " in ") ||
				   mt_buf_add_str(line, base_name(t.trace)))) ||
		     mt_buf_add_str(line, " (") ||
		     mt_buf_add_str(line, base_name(traces[0])) ||
		     mt_buf_add_str(line, " and ") ||
		     mt_units_add_count(line, (uint64_t)n - 1, "child trace",
					"child traces") ||
		     mt_buf_add_str(line, ")");
	}
	if (!rc && counted)
		rc = (failed && mt_buf_add_str(line, ", workload_failed (its row "
					       "has no summary)")) ||
		     mt_buf_add_str(line, "\n") ||
		     mt_buf_add(line, procs.data, summed ? procs.len : 0);
	status = rc ? mt_cmd_nomem() : -1;
cleanup:
	mt_buf_release(&procs);
	return status;
}

/*
 * The closing lines over the runs' figures (mt_run_lines_table(), which reads
 * them from a file: here an anonymous one): *verdict the status to exit
 * with, the table and the warnings onto stderr.  -1, or the status after
 * saying why.
 */
static int table(const settings_t *s, const char *reps, const mt_buf_t *figures,
		 int *verdict)
{
	mt_buf_t out = MT_BUF_INIT;
	char why[MT_RUN_LINES_WHY_MAX], path[64];
	int fd = memfd_create("memtrace-run figures", MFD_CLOEXEC);
	int status = -1, err = 0, rc;
	const char *nl;

	if (fd < 0 || write(fd, figures->data, figures->len) != (ssize_t)figures->len) {
		status = die(EXIT_SOFTWARE, "cannot keep the runs' figures: %s",
			     strerror(errno));
		goto cleanup;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	rc = mt_run_lines_table(path, base_name(s->cmd[0]), reps,
			   MT_RUN_LINES_VERDICT | (s->strict ? MT_RUN_LINES_STRICT : 0) |
			   (s->quiet ? MT_RUN_LINES_QUIET : 0),
			   &out, &err, why, sizeof(why));
	if (rc == MT_ENOMEM) {
		status = mt_cmd_nomem();
	} else if (rc) {
		status = die(EXIT_SOFTWARE, "cannot read the runs' figures: %s",
			     rc == MT_EIO ? strerror(err) : why);
	} else {
		/* The verdict's line first, then the table (mt_run_lines.h). */
		*verdict = atoi(out.data);
		nl = strchr(out.data, '\n');
		if (nl && nl[1])
			fputs(nl + 1, stderr);
	}
cleanup:
	if (fd >= 0)
		close(fd);
	mt_buf_release(&out);
	return status;
}

/* "memtrace-run: interrupted after run I of N", and the status: the
 * first run's failure, else the signal's. */
static int finish_interrupted(const settings_t *s, uint64_t i, int first_fail)
{
	fprintf(stderr, PROG ": interrupted after run %llu of %llu\n",
		(unsigned long long)i, (unsigned long long)s->runs);
	return first_fail ? first_fail : interrupted;
}

/* A step that failed after run i: memtrace-run stops with 70. */
static int step_failed(const settings_t *s, const char *what, int status,
		       uint64_t i, int first_fail)
{
	take_signals();
	if (interrupted)
		return finish_interrupted(s, i, first_fail);
	return die(EXIT_SOFTWARE, "memtrace %s failed with status %d after run "
		   "%llu; stopping", what, status, (unsigned long long)i);
}

static int runs(const settings_t *s, const mt_launch_t *l, const char *pfx,
		const char *abs_pattern)
{
	char *reps = NULL, *summary = NULL, *captures = NULL, *trace = NULL;
	char *pattern = NULL, *index = NULL, *code_s = NULL;
	char **children = NULL, **traces = NULL;
	mt_buf_t figures = MT_BUF_INIT, line = MT_BUF_INIT;
	int status = -1, first_fail = 0, nomem, verdict = 0;
	uint64_t i = 1;
	size_t nchildren;

	if (asprintf(&reps, "%sallocations.repetitions.jsonl", pfx) < 0 ||
	    asprintf(&summary, "%ssummary.jsonl", pfx) < 0 ||
	    asprintf(&captures, "%scaptures.jsonl", pfx) < 0) {
		reps = summary = captures = NULL;
		goto nomem;
	}
	for (; i <= s->runs; i++) {
		char prefix[48], sigbuf[16];
		const char *sig;
		int rc, code, exit_rc;

		free(trace);
		free(pattern);
		free(index);
		free(code_s);
		free_paths(children);
		free(traces);
		trace = pattern = index = code_s = NULL;
		children = traces = NULL;
		snprintf(prefix, sizeof(prefix), "allocations.%llu.",
			 (unsigned long long)i);
		if (asprintf(&trace, "%s%sjsonl.zst", pfx, prefix) < 0 ||
		    asprintf(&pattern, "%s%sjsonl.zst", abs_pattern, prefix) < 0 ||
		    asprintf(&index, "%llu", (unsigned long long)i) < 0) {
			trace = pattern = index = NULL;
			goto nomem;
		}
		/* A trace or child trace of an earlier invocation is not
		 * this run's.  Child traces are allocations.I.PID[.K]:
		 * the digit after "I." keeps the match off run I's own
		 * trace (and off run I0's). */
		unlink(trace);
		children = matching(s->dir, pfx, prefix, ".jsonl.zst", &nchildren,
				    &nomem);
		remove_paths(children);
		free_paths(children);
		children = NULL;
		if (nomem)
			goto nomem;
		if (i == 1)
			unlink(summary);

		exit_rc = rc = run_recorded(s, l, pattern);
		finished(trace);
		children = matching(s->dir, pfx, prefix, ".jsonl.zst", &nchildren,
				    &nomem);
		if (nomem)
			goto nomem;
		for (size_t k = 0; k < nchildren; k++)
			finished(children[k]);

		/* A run killed by a signal never reported failure: its
		 * trace is what is left of it, and the rows judge it. */
		sig = signal_of(rc, sigbuf, sizeof(sigbuf));
		code = sig ? 0 : rc;
		if (!first_fail)
			first_fail = rc;
		if (asprintf(&code_s, "%d", code) < 0) {
			code_s = NULL;
			goto nomem;
		}
		/* The rows, the line and the table cover the run's whole
		 * tree: each child trace is a --child of the steps (unless
		 * --top-only). */
		if (s->top_only)
			nchildren = 0;
		{
			char *rep[10 + 2 * nchildren], *cap[10 + 2 * nchildren];
			char *rep_args[] = { "repetition", "--capture", trace, "--out",
					     reps, "--index", index, "--exit-code",
					     code_s };
			char *cap_args[] = { "capture", "--capture", trace, "--summary",
					     summary, "--exit-code", code_s, "--append",
					     captures };

			memcpy(rep, rep_args, sizeof(rep_args));
			memcpy(cap, cap_args, sizeof(cap_args));
			for (size_t k = 0; k < nchildren; k++) {
				rep[9 + 2 * k] = cap[9 + 2 * k] = "--child";
				rep[10 + 2 * k] = cap[10 + 2 * k] = children[k];
			}
			rep[9 + 2 * nchildren] = cap[9 + 2 * nchildren] = NULL;
			if ((rc = analyze(rep))) {
				status = step_failed(s, "repetition", rc, i, first_fail);
				goto cleanup;
			}
			if (i == 1 && (rc = analyze(cap))) {
				status = step_failed(s, "capture", rc, i, first_fail);
				goto cleanup;
			}
		}
		if (!(traces = calloc(nchildren + 2, sizeof(*traces))))
			goto nomem;
		traces[0] = trace;
		if (nchildren)
			memcpy(traces + 1, children, nchildren * sizeof(*traces));
		mt_buf_truncate(&line, 0);
		if ((rc = account(s, i, exit_rc, sig, reps,
				  traces, nchildren + 1, &figures, &line)) >= 0) {
			status = step_failed(s, "run's line", rc, i, first_fail);
			goto cleanup;
		}
		if (!s->quiet)
			fwrite(line.data, 1, line.len, stderr);
		if (i == 1 && code && !s->quiet)
			fprintf(stderr, PROG ": run 1 failed: no capture, so no %s "
				"and no row in %s\n", summary, captures);
		take_signals();
		if (interrupted) {
			status = finish_interrupted(s, i, first_fail);
			goto cleanup;
		}
	}
	if ((status = table(s, reps, &figures, &verdict)) < 0)
		status = verdict;
	goto cleanup;
nomem:
	status = die(EXIT_SOFTWARE, "out of memory after run %llu; stopping",
		     (unsigned long long)i);
cleanup:
	mt_buf_release(&figures);
	mt_buf_release(&line);
	free_paths(children);
	free(traces);
	free(trace);
	free(pattern);
	free(index);
	free(code_s);
	free(reps);
	free(summary);
	free(captures);
	return status;
}

/* ---- the out-of-memory sweep (--oom-sweep) ---- */

/* How a sweep run ended. */
typedef struct {
	int status;  /* as the shell gives it */
	int hung;    /* the watchdog killed it */
	int stopped; /* interrupted while it ran: it proves nothing */
} ended_t;

/*
 * Run CMD with MEMTRACE_FAIL_AT=n under plain LD_PRELOAD (a SIGKILL of
 * the watchdog must reach the workload itself), stdin /dev/null, stdout
 * and stderr to log, as a job in the background of a shell is run (SIGINT
 * and SIGQUIT ignored), and wait for it at most timeout seconds.  -1, or
 * the status after saying why.
 */
static int sweep_run(const settings_t *s, const mt_launch_t *l, uint64_t n,
		     const char *pattern, const char *log, ended_t *e)
{
	struct timespec now, end;
	pid_t pid;
	int pidfd, w;

	memset(e, 0, sizeof(*e));
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return die(EXIT_SOFTWARE, "cannot fork: %s", strerror(errno));
	if (pid == 0) {
		const char *old = getenv("LD_PRELOAD");
		char at[24], *pre;
		int in = open("/dev/null", O_RDONLY);
		int out = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0666);

		child_signals();
		if (in < 0 || out < 0) {
			fprintf(stderr, PROG ": cannot open '%s': %s\n",
				in < 0 ? "/dev/null" : log, strerror(errno));
			_exit(1);
		}
		signal(SIGINT, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		dup2(in, 0);
		dup2(out, 1);
		dup2(out, 2);
		if (in > 2)
			close(in);
		if (out > 2)
			close(out);
		if (asprintf(&pre, "%s%s%s", l->preload, old && *old ? ":" : "",
			     old && *old ? old : "") < 0)
			_exit(4);
		setenv("LD_PRELOAD", pre, 1);
		traced_env(s, pattern);
		snprintf(at, sizeof(at), "%llu", (unsigned long long)n);
		setenv("MEMTRACE_FAIL_AT", at, 1);
		execvp(s->cmd[0], s->cmd);
		fprintf(stderr, PROG ": cannot run '%s': %s\n", s->cmd[0],
			strerror(errno));
		_exit(errno == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
	}
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += (time_t)s->sweep_timeout;
	while (pidfd >= 0 && !interrupted) {
		struct pollfd p = { .fd = pidfd, .events = POLLIN };
		struct timespec left;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left.tv_sec = end.tv_sec - now.tv_sec;
		left.tv_nsec = end.tv_nsec - now.tv_nsec;
		if (left.tv_nsec < 0) {
			left.tv_nsec += 1000000000L;
			left.tv_sec--;
		}
		if (left.tv_sec < 0) {
			/* Its time is up. */
			e->hung = 1;
			kill(pid, SIGKILL);
			break;
		}
		if (ppoll(&p, 1, &left, &unblocked) > 0)
			break;
	}
	if (pidfd >= 0)
		close(pidfd);
	if (interrupted && !e->hung && !waitpid(pid, &w, WNOHANG)) {
		/* The wait was cut short by SIGINT or SIGTERM. */
		kill(pid, SIGKILL);
		e->stopped = 1;
	}
	while (waitpid(pid, &w, 0) < 0)
		if (errno != EINTR)
			return die(EXIT_SOFTWARE, "cannot wait for the run: %s",
				   strerror(errno));
	e->status = e->stopped ? interrupted : shell_status(w);
	return -1;
}

static int oom_sweep(const settings_t *s, const mt_launch_t *l, const char *pfx,
		     const char *abs_pattern)
{
	static const char *const results[] = { "clean", "error", "crash", "hang" };
	uint64_t count[4] = { 0 }, n = 0, tried = 0;
	const char *name = base_name(s->cmd[0]);
	char *trace = NULL, *log = NULL, *pattern = NULL, **kids = NULL;
	char end[80] = "", hung[24], sigbuf[16];
	mt_buf_t out = MT_BUF_INIT;
	int status = -1, nomem;
	size_t nkids;

	kids = matching(s->dir, pfx, "oom.", ".jsonl.zst", &nkids, &nomem);
	remove_paths(kids);
	free_paths(kids);
	kids = matching(s->dir, pfx, "oom.", ".log", &nkids, &nomem);
	remove_paths(kids);
	free_paths(kids);
	kids = NULL;
	if (!s->quiet)
		printf(PROG ": out-of-memory sweep of %s, %llu s per run; traces "
		       "in %soom.N.jsonl.zst\n", name,
		       (unsigned long long)s->sweep_timeout, pfx);
	snprintf(hung, sizeof(hung), "%llu", (unsigned long long)s->sweep_timeout);
	for (;;) {
		mt_run_lines_oom_run_t r = { .quiet = s->quiet, .hung = NULL };
		char prefix[40], row[40];
		const char *nl;
		struct stat st;
		ended_t e;
		int err = 0, rc;

		n++;
		if (s->sweep_max && n > s->sweep_max) {
			snprintf(end, sizeof(end), "stopped at --max %llu",
				 (unsigned long long)s->sweep_max);
			break;
		}
		free(trace);
		free(log);
		free(pattern);
		trace = log = pattern = NULL;
		snprintf(prefix, sizeof(prefix), "oom.%llu.", (unsigned long long)n);
		if (asprintf(&trace, "%s%sjsonl.zst", pfx, prefix) < 0 ||
		    asprintf(&log, "%s%slog", pfx, prefix) < 0 ||
		    asprintf(&pattern, "%s%sjsonl.zst", abs_pattern, prefix) < 0) {
			trace = log = pattern = NULL;
			status = mt_cmd_nomem();
			goto cleanup;
		}
		if ((status = sweep_run(s, l, n, pattern, log, &e)) >= 0)
			goto cleanup;
		finished(trace);
		kids = matching(s->dir, pfx, prefix, ".jsonl.zst", &nkids, &nomem);
		for (size_t k = 0; k < nkids; k++)
			finished(kids[k]);
		r.n = n;
		r.exit = (uint64_t)e.status;
		r.stopped = e.stopped;
		r.hung = e.hung && e.status == 128 + SIGKILL ? hung : NULL;
		r.signal = signal_of(e.status, sigbuf, sizeof(sigbuf));
		r.trace = trace;
		r.log = log;
		if (stat(trace, &st) || !S_ISREG(st.st_mode)) {
			unlink(log);
			status = die(EXIT_SOFTWARE, "run %llu of the sweep left no trace "
				     "(a static or set-user-ID program?): it cannot tell "
				     "whether allocation %llu failed",
				     (unsigned long long)n, (unsigned long long)n);
			goto cleanup;
		}
		mt_buf_truncate(&out, 0);
		if ((rc = mt_run_lines_oom_line(&r, &out, &err))) {
			if (rc == MT_EIO)
				mt_cmd_cannot_read(trace, err);
			else
				mt_cmd_nomem();
			status = die(EXIT_SOFTWARE, "the account of run %llu of the "
				     "sweep failed; stopping", (unsigned long long)n);
			goto cleanup;
		}
		/* Its row, "FAILED RESULT", then its lines. */
		nl = strchr(out.data, '\n');
		snprintf(row, sizeof(row), "%.*s",
			 (int)(nl ? nl - out.data : (ptrdiff_t)strlen(out.data)),
			 out.data);
		if (nl && nl[1])
			fputs(nl + 1, stdout);
		{
			const char *result = strchr(row, ' ');
			int failed = !strncmp(row, "fail ", 5);

			result = result ? result + 1 : "";
			if (strcmp(result, "crash") && strcmp(result, "hang")) {
				unlink(trace);
				unlink(log);
				remove_paths(kids);
			}
			/* An exit counts only as the answer to a failed
			 * allocation. */
			if (failed && strcmp(result, "stopped"))
				tried = n;
			for (int k = 0; k < 4; k++)
				if (!strcmp(result, results[k]) && (failed || k >= 2))
					count[k]++;
		}
		free_paths(kids);
		kids = NULL;
		take_signals();
		if (interrupted) {
			snprintf(end, sizeof(end), "interrupted");
			break;
		}
		if (!strncmp(row, "none ", 5)) {
			if (n == 2)
				snprintf(end, sizeof(end), "the program makes 1 allocation");
			else
				snprintf(end, sizeof(end), "the program makes %llu "
					 "allocations", (unsigned long long)(n - 1));
			break;
		}
	}
	printf(PROG ": %llu allocation%s of %s failed one at a time: %llu exited "
	       "cleanly, %llu with an error, %llu crashed, %llu hung; %s\n",
	       (unsigned long long)tried, tried == 1 ? "" : "s", name,
	       (unsigned long long)count[0], (unsigned long long)count[1],
	       (unsigned long long)count[2], (unsigned long long)count[3], end);
	status = interrupted ? interrupted : count[2] + count[3] ? 1 : 0;
cleanup:
	free_paths(kids);
	mt_buf_release(&out);
	free(trace);
	free(log);
	free(pattern);
	return status;
}

/* ---- the command ---- */

static int run(int argc, char **argv)
{
	settings_t s = { 0 };
	mt_buf_t pattern = MT_BUF_INIT;
	mt_launch_t l;
	char *pfx = NULL;
	int status;

	argc--;
	argv++;
	/* --version first, alone: memtrace's version is memtrace-run's. */
	if (argc > 0 && (!strcmp(argv[0], "--version") || !strcmp(argv[0], "-V"))) {
		printf(PROG " %s", mt_cli_version() + strlen("memtrace "));
		return fflush(stdout) ? MT_EXIT_CANTCREAT : MT_EXIT_OK;
	}
	if ((status = read_settings(&s, argc, argv)) >= 0)
		return status;
	if ((status = check_command(s.cmd[0])) >= 0 ||
	    (status = mt_launch_find_preload(&l, PROG)) >= 0 ||
	    (!s.sweep && (status = mt_launch_find_collector(&l, PROG)) >= 0) ||
	    (status = prepare_dir(s.dir, &pattern)) >= 0)
		goto cleanup;
	/* Paths for the analyzer and the lines are DIR as given. */
	if (asprintf(&pfx, "%s%s", s.dir, strcmp(s.dir, "/") ? "/" : "") < 0) {
		pfx = NULL;
		status = mt_cmd_nomem();
		goto cleanup;
	}
	catch_signals();
	status = s.sweep ? oom_sweep(&s, &l, pfx, pattern.data) :
			   runs(&s, &l, pfx, pattern.data);
	fflush(NULL);
	sigprocmask(SIG_SETMASK, &unblocked, NULL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
cleanup:
	mt_buf_release(&pattern);
	free(pfx);
	free(s.dir);
	return status;
}

const mt_cmd_t mt_cmd_run = {
	.name = "run",
	.synopsis = "run [-n N] [-o DIR] -- CMD",
	.summary = "run a command N times, traced, or fail its allocations one at a time",
	.usage = run_help,
	.run = run,
};
