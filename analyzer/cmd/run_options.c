/*
 * run-options: `memtrace run-options -- ARGS...`, memtrace-run's command
 * line read as the script is documented to read it (docs/memtrace-run.md),
 * in the manner of getopt(1): the settings as shell assignments and a
 * `shift` to CMD, for the script to eval.  Its errors are memtrace-run's,
 * in its words and with its status (64).  It must never print anything
 * the shell would run but assignments, `shift`, or the help and `exit 0`:
 * every value it prints is single-quoted.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../cmd/mt_cmd.h"
#include "../base/mt_error.h"
#include "../base/mt_units.h"

static const char usage[] =
	"usage: memtrace run-options -- ARGS...\n"
	"\n"
	"Read memtrace-run's command line, ARGS, as memtrace-run does and print\n"
	"what it says as shell assignments for the script to eval: runs, dir\n"
	"(without a trailing /), depth, sample, strict, quiet, verbose, sweep,\n"
	"sweep_max and sweep_timeout, then `shift K`, K the arguments before\n"
	"CMD.  For -h or --help, shell code that prints memtrace-run's help and\n"
	"exits 0.\n"
	"\n"
	"Exit 0, 4 out of memory, 64 ARGS is not a good memtrace-run command\n"
	"line (said as memtrace-run says it: \"memtrace-run: ...\").\n";

#define RUN_USAGE                                                             \
	"usage: memtrace-run [-n N] [-o DIR] [--stack-depth D] [--sample B] "   \
	"[--strict] [--quiet|--verbose] -- CMD [ARGS...]"

static const char run_help[] =
	RUN_USAGE "\n"
	"       memtrace-run --oom-sweep [--max K] [--timeout S] [-o DIR] [--quiet] -- CMD [ARGS...]\n"
	"\n"
	"Run CMD N times under libmtpreload.so.  Run I writes the zstd trace\n"
	"DIR/allocations.I.jsonl.zst (a child process: DIR/allocations.I.PID.jsonl.zst)\n"
	"and one row of DIR/allocations.repetitions.jsonl; run 1 is also the\n"
	"capture, written to DIR/summary.jsonl with its row appended to\n"
	"DIR/captures.jsonl.  A run's line and the table cover every trace of the\n"
	"run's process tree, summed; the rows are the workload's own trace's.\n"
	"\n"
	"  -n, --runs N         runs of CMD (default 1)\n"
	"  -o, --output DIR     where the traces and rows go (default memtrace-out),\n"
	"                       created when missing\n"
	"  --stack-depth D      frames recorded per stack, 0 to 256 (MEMTRACE_STACK_DEPTH)\n"
	"  --sample B           record one allocation per B bytes on average, B bytes\n"
	"                       or 512K, 2M, 1G (MEMTRACE_SAMPLE): figures are estimates\n"
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

static const struct option options[] = {
	{ "help", no_argument, NULL, MT_CMD_OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

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
	int strict, quiet, verbose, sweep, help;
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

/* name='value' and a newline: the value's len bytes, quoted for the
 * shell (a ' as '\''); just the quoted value when name is NULL. */
static int add_quoted(mt_buf_t *b, const char *name, const char *value,
		      size_t len)
{
	const char *end = value + len, *q;

	if ((name && (mt_buf_add_str(b, name) || mt_buf_add_str(b, "="))) ||
	    mt_buf_add_str(b, "'"))
		return MT_ENOMEM;
	for (; (q = memchr(value, '\'', (size_t)(end - value))); value = q + 1)
		if (mt_buf_add(b, value, (size_t)(q - value)) ||
		    mt_buf_add_str(b, "'\\''"))
			return MT_ENOMEM;
	return mt_buf_add(b, value, (size_t)(end - value)) ||
	       mt_buf_add_str(b, "'\n") ? MT_ENOMEM : MT_OK;
}

static int add_value(mt_buf_t *b, const char *name, const char *value)
{
	return add_quoted(b, name, value, strlen(value));
}

static int add_number(mt_buf_t *b, const char *name, int have, uint64_t v)
{
	char s[24];

	snprintf(s, sizeof(s), "%llu", (unsigned long long)v);
	return add_value(b, name, have ? s : "");
}

static int add_flag(mt_buf_t *b, const char *name, int on)
{
	return add_value(b, name, on ? "1" : "0");
}

static int run(int argc, char **argv)
{
	static const mt_cmd_spec_t spec = {
		.usage = usage,
		.options = options,
		.more = 1,
	};
	run_opts_t o = { .value = { [V_RUNS] = "1", [V_DIR] = "memtrace-out" } };
	const char *depth, *sample, *max, *timeout, *runs_s;
	uint64_t runs, dv = 0, mv = 0, tv = 0;
	mt_buf_t out = MT_BUF_INIT;
	int status, first, rc;
	size_t len;

	if ((status = mt_cmd_parse(&spec, NULL, argc, argv, &first)) >= 0)
		return status;
	argc -= first;
	argv += first;
	if ((status = read_options(&o, argc, argv)) >= 0)
		return status;
	if (o.help) {
		rc = mt_buf_add_str(&out, "printf '%s' ") ||
		     add_value(&out, NULL, run_help) ||
		     mt_buf_add_str(&out, "exit 0\n");
		goto write;
	}
	if (o.taken >= argc)
		return bad("no command given");
	runs_s = o.value[V_RUNS];
	if ((rc = number(runs_s, 9, &runs)) == 1)
		return bad("-n needs a whole number of runs, 1 or more, not '%s'",
			   runs_s);
	if (rc)
		return bad("-n %s: too many runs", runs_s);
	if (!runs)
		return bad("-n needs at least 1 run, not 0");
	depth = o.value[V_DEPTH];
	if (depth && *depth && (number(depth, 3, &dv) || dv > 256))
		return bad("--stack-depth needs a number from 0 to 256, not '%s'",
			   depth);
	sample = o.value[V_SAMPLE];
	if (sample && !sample_ok(sample))
		return bad("--sample needs a number of bytes, 1 or more (or 512K, 2M, 1G), "
			   "not '%s'", sample);
	if (!*o.value[V_DIR])
		return bad("-o needs a directory, not an empty string");
	max = o.value[V_MAX];
	timeout = o.value[V_TIMEOUT];
	if (o.sweep) {
		if (runs != 1)
			return bad("-n does not apply to --oom-sweep, which runs "
				   "CMD once per allocation");
		if (o.strict)
			return bad("--strict does not apply to --oom-sweep");
		if (sample)
			return bad("--sample does not apply to --oom-sweep, which "
				   "counts every allocation");
		if (max && *max &&
		    (status = sweep_number("--max", max, &mv)) >= 0)
			return status;
		if (!timeout || !*timeout)
			timeout = "10";
		if ((status = sweep_number("--timeout", timeout, &tv)) >= 0)
			return status;
	} else if ((max && *max) || (timeout && *timeout)) {
		return bad("--max and --timeout apply only to --oom-sweep");
	}
	/* DIR without its trailing slashes, but / stays /. */
	len = strlen(o.value[V_DIR]);
	while (len > 1 && o.value[V_DIR][len - 1] == '/')
		len--;
	rc = add_number(&out, "runs", 1, runs) ||
	     add_quoted(&out, "dir", o.value[V_DIR], len) ||
	     add_number(&out, "depth", depth && *depth, dv) ||
	     add_value(&out, "sample", sample ? sample : "") ||
	     add_flag(&out, "strict", o.strict) ||
	     add_flag(&out, "quiet", o.quiet) ||
	     add_flag(&out, "verbose", o.verbose) ||
	     add_flag(&out, "sweep", o.sweep) ||
	     add_number(&out, "sweep_max", max && *max, mv) ||
	     add_number(&out, "sweep_timeout", o.sweep, tv) ||
	     mt_buf_add_str(&out, "shift ") ||
	     mt_buf_add_u64(&out, (uint64_t)o.taken) ||
	     mt_buf_add_str(&out, "\n");
write:
	status = rc ? mt_cmd_nomem() : mt_cmd_write(NULL, &out, 0);
	mt_buf_release(&out);
	return status;
}

const mt_cmd_t mt_cmd_run_options = {
	.name = "run-options",
	.synopsis = "run-options -- ARGS",
	.summary = "memtrace-run's command line, for its script",
	.usage = usage,
	.run = run,
};
