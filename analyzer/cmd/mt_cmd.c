/*
 * mt_cmd: what every command shares: the option parser, the messages and
 * their exit statuses, the output, and the driver of the commands that
 * render one trace.  It must say what went wrong in the same words and
 * with the same status whichever command asks, never exit() or abort(),
 * and never write anything but whole outputs.
 */
#include "../cmd/mt_cmd.h"

#include <errno.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../base/mt_units.h"
#include "../base/mt_error.h"
#include "../base/mt_mem.h"
#include "../base/mt_output.h"

const struct option mt_cmd_row_options[] = {
	{ "top", required_argument, NULL, MT_CMD_OPT_TOP },
	{ "include-zero-live", no_argument, NULL, MT_CMD_OPT_ZERO },
	{ "strict", no_argument, NULL, MT_CMD_OPT_STRICT },
	{ "output", required_argument, NULL, 'o' },
	{ "capture", required_argument, NULL, MT_CMD_OPT_CAPTURE },
	{ "summary", required_argument, NULL, MT_CMD_OPT_SUMMARY },
	{ "exit-code", required_argument, NULL, MT_CMD_OPT_EXIT_CODE },
	{ "append", required_argument, NULL, MT_CMD_OPT_APPEND },
	{ "out", required_argument, NULL, MT_CMD_OPT_OUT },
	{ "index", required_argument, NULL, MT_CMD_OPT_INDEX },
	{ "child", required_argument, NULL, MT_CMD_OPT_CHILD },
	{ "help", no_argument, NULL, MT_CMD_OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* An integer: a count (mt_units_parse_count), or '-' and one, in 64
 * bits. */
static int parse_i64(const char *s, int64_t *out)
{
	int neg = *s == '-';
	uint64_t v;

	if (mt_units_parse_count(s + neg, &v) ||
	    v > (uint64_t)INT64_MAX + (uint64_t)neg)
		return -1;
	*out = neg && v ? -(int64_t)(v - 1) - 1 : (int64_t)v;
	return 0;
}

/* Each row option's code and its bit of takes. */
static const struct {
	int code;
	unsigned bit;
} row_bits[] = {
	{ MT_CMD_OPT_TOP, MT_CMD_ROW_TOP },
	{ MT_CMD_OPT_ZERO, MT_CMD_ROW_ZERO },
	{ MT_CMD_OPT_STRICT, MT_CMD_ROW_STRICT },
	{ 'o', MT_CMD_ROW_OUTPUT },
	{ MT_CMD_OPT_CAPTURE, MT_CMD_ROW_CAPTURE },
	{ MT_CMD_OPT_SUMMARY, MT_CMD_ROW_SUMMARY },
	{ MT_CMD_OPT_EXIT_CODE, MT_CMD_ROW_EXIT_CODE },
	{ MT_CMD_OPT_APPEND, MT_CMD_ROW_APPEND },
	{ MT_CMD_OPT_OUT, MT_CMD_ROW_OUT },
	{ MT_CMD_OPT_INDEX, MT_CMD_ROW_INDEX },
	{ MT_CMD_OPT_CHILD, MT_CMD_ROW_CHILD },
};

int mt_cmd_row_option(void *ctx, int c, const char *arg)
{
	mt_cmd_row_opts_t *o = ctx;
	const char *usage = o->usage;
	unsigned bit = 0;

	for (size_t i = 0; i < sizeof(row_bits) / sizeof(row_bits[0]); i++)
		if (row_bits[i].code == c)
			bit = row_bits[i].bit;
	if (!(o->takes & bit))
		return MT_CMD_NOT_HERE;
	switch (c) {
	case MT_CMD_OPT_TOP:
		if (mt_units_parse_count(arg, &o->top))
			return mt_cmd_usage_error(usage,
						  "--top needs a number, not '%s'",
						  arg);
		break;
	case MT_CMD_OPT_ZERO:
		o->include_zero_live = 1;
		break;
	case MT_CMD_OPT_STRICT:
		o->strict = 1;
		break;
	case 'o':
		o->output = arg;
		break;
	case MT_CMD_OPT_CAPTURE:
		o->capture = arg;
		break;
	case MT_CMD_OPT_SUMMARY:
		o->summary = arg;
		break;
	case MT_CMD_OPT_APPEND:
		o->append = arg;
		break;
	case MT_CMD_OPT_OUT:
		o->out = arg;
		break;
	case MT_CMD_OPT_EXIT_CODE:
		if (parse_i64(arg, &o->exit_code))
			return mt_cmd_usage_error(usage,
						  "--exit-code needs an integer, not '%s'",
						  arg);
		break;
	case MT_CMD_OPT_INDEX:
		if (mt_units_parse_count(arg, &o->index))
			return mt_cmd_usage_error(usage,
						  "--index needs a number, not '%s'",
						  arg);
		o->have_index = 1;
		break;
	case MT_CMD_OPT_CHILD: {
		char **n = mt_mem_realloc(o->children,
					  (o->nchildren + 1) * sizeof(*n));

		if (!n)
			return mt_cmd_nomem();
		o->children = n;
		o->children[o->nchildren++] = (char *)arg;
		break;
	}
	default:
		return MT_CMD_NOT_HERE;
	}
	return -1;
}

void mt_cmd_row_release(mt_cmd_row_opts_t *o)
{
	mt_mem_free(o->children);
	o->children = NULL;
	o->nchildren = 0;
}

int mt_cmd_row_parse(mt_cmd_row_opts_t *o, const char *arg, int more,
		     int argc, char **argv, int *first)
{
	const mt_cmd_spec_t spec = {
		.usage = o->usage,
		.shorts = "o:",
		.options = mt_cmd_row_options,
		.option = mt_cmd_row_option,
		.args = { arg },
		.more = more,
	};

	return mt_cmd_parse(&spec, o, argc, argv, first);
}

int mt_cmd_usage_error(const char *usage, const char *fmt, ...)
{
	va_list ap;

	fputs("memtrace: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n\n", stderr);
	fputs(usage, stderr);
	return MT_EXIT_USAGE;
}

int mt_cmd_unknown_allocator(const char *usage, const mt_heap_t *h,
			     const char *path, const char *name)
{
	uint64_t last = 0, key;
	int first = 1;

	fprintf(stderr, "memtrace: no allocator '%s' in '%s'; its allocators:",
		name, path);
	/* By id, without a list to sort: a trace declares a few. */
	for (;;) {
		const mt_allocator_t *next = NULL;
		size_t pos = 0;
		void *v;

		while (mt_map_iter(&h->allocators, &pos, &key, &v)) {
			const mt_allocator_t *a = *(mt_allocator_t **)v;

			if ((first || a->id > last) && (!next || a->id < next->id))
				next = a;
		}
		if (!next)
			break;
		if (mt_heap_allocator_name(next))
			fprintf(stderr, "%s '%s'", first ? "" : ",",
				mt_heap_allocator_name(next));
		else
			fprintf(stderr, "%s id %llu (no name)", first ? "" : ",",
				(unsigned long long)next->id);
		first = 0;
		last = next->id;
	}
	fprintf(stderr, "%s\n\n%s", first ? " none" : "", usage);
	return MT_EXIT_USAGE;
}

int mt_cmd_nomem(void)
{
	fputs("memtrace: out of memory\n", stderr);
	return MT_EXIT_NOMEM;
}

int mt_cmd_cannot_read(const char *path, int err)
{
	fprintf(stderr, "memtrace: cannot read '%s': %s\n", path, strerror(err));
	return MT_EXIT_MISSING;
}

const char *mt_cmd_trace_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!strcmp(path, "-"))
		return "standard input";
	return slash && slash[1] ? slash + 1 : path;
}

int mt_cmd_not_evidence(const char *path, const char *why)
{
	fprintf(stderr, "memtrace: '%s' is not valid memtrace evidence: %s\n",
		path, why);
	return MT_EXIT_INVALID;
}

/* After the options: the arguments spec names, argv[optind..argc). */
static int check_args(const mt_cmd_spec_t *spec, int argc, char **argv)
{
	int want = 0, have = argc - optind;

	while (want < 3 && spec->args[want])
		want++;
	if (!spec->more && have > want)
		return mt_cmd_usage_error(spec->usage, "unexpected argument '%s'",
					  argv[optind + want]);
	if (have >= want)
		return -1;
	if (want - have == 1)
		return mt_cmd_usage_error(spec->usage, "missing %s argument",
					  spec->args[have]);
	/* Two missing: nothing else takes more than two arguments. */
	return mt_cmd_usage_error(spec->usage, "missing %s and %s arguments",
				  spec->args[have], spec->args[have + 1]);
}

int mt_cmd_parse(const mt_cmd_spec_t *spec, void *ctx, int argc, char **argv,
		 int *first)
{
	char shorts[16];
	int c, idx = -1, help = 0, status;

	struct option options[64];
	size_t n = 0;

	/* The command's table and --threads, which every command takes. */
	while (spec->options && spec->options[n].name && n + 2 < 64) {
		options[n] = spec->options[n];
		n++;
	}
	if (!spec->no_threads)
		options[n++] = (struct option){ "threads", required_argument,
						NULL, MT_CMD_OPT_THREADS };
	options[n] = (struct option){ NULL, 0, NULL, 0 };
	snprintf(shorts, sizeof(shorts), ":%s", spec->shorts ? spec->shorts : "");
	optind = 0; /* glibc: start afresh, so the CLI can run again */
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, options, &idx)) != -1) {
		char name[32];

		/* argv[optind - 1] is the option's value when it has one. */
		if (idx >= 0)
			snprintf(name, sizeof(name), "--%s", options[idx].name);
		else
			snprintf(name, sizeof(name), "-%c", c);
		idx = -1;

		if (c == '?')
			return mt_cmd_usage_error(spec->usage,
						  "unknown option '%s'",
						  argv[optind - 1]);
		if (c == ':')
			return mt_cmd_usage_error(spec->usage,
						  "option '%s' needs a value",
						  argv[optind - 1]);
		if (c == MT_CMD_OPT_HELP) {
			if (spec->help_at_once)
				break;
			help = 1;
			continue;
		}
		if (c == MT_CMD_OPT_THREADS) {
			uint64_t t;

			if (mt_units_parse_count(optarg, &t) || t < 1 || t > 256)
				return mt_cmd_usage_error(spec->usage,
							  "--threads needs a number "
							  "from 1 to 256, not '%s'",
							  optarg);
			mt_analysis_set_threads((unsigned)t);
			continue;
		}
		status = spec->option ? spec->option(ctx, c, optarg) :
					MT_CMD_NOT_HERE;
		if (status == MT_CMD_NOT_HERE)
			return mt_cmd_usage_error(spec->usage,
						  "option '%s' does not apply here",
						  name);
		if (status >= 0)
			return status;
	}
	if (help || c == MT_CMD_OPT_HELP) {
		fputs(spec->usage, stdout);
		return MT_EXIT_OK;
	}
	if ((status = check_args(spec, argc, argv)) >= 0)
		return status;
	*first = optind;
	return -1;
}

int mt_cmd_write(const char *path, const mt_buf_t *b, int append)
{
	int rc;

	if (!path)
		rc = mt_output_stdout(b->data, b->len);
	else if (append)
		rc = mt_output_append(path, b->data, b->len);
	else
		rc = mt_output_replace(path, b->data, b->len);
	if (rc == MT_ENOMEM)
		return mt_cmd_nomem();
	if (rc) {
		fprintf(stderr, "memtrace: cannot write '%s': %s\n",
			path ? path : "standard output", strerror(errno));
		return MT_EXIT_CANTCREAT;
	}
	return MT_EXIT_OK;
}

int mt_cmd_analyze(mt_analysis_t *a, const char *path,
		   mt_analysis_observer_t *observe, void *ctx)
{
	return mt_cmd_analyze_allocator(a, path, NULL, observe, ctx);
}

int mt_cmd_analyze_allocator(mt_analysis_t *a, const char *path,
			     const char *allocator,
			     mt_analysis_observer_t *observe, void *ctx)
{
	int rc = mt_analysis_run_allocator(a, path, allocator, observe, ctx);

	if (rc == MT_ENOMEM)
		return mt_cmd_nomem();
	if (rc == MT_EIO)
		return mt_cmd_cannot_read(path, a->error_errno);
	return -1;
}

int mt_cmd_load(mt_analysis_t *a, const char *path,
		mt_analysis_observer_t *observe, void *ctx)
{
	return mt_cmd_load_allocator(a, path, NULL, observe, ctx);
}

int mt_cmd_load_allocator(mt_analysis_t *a, const char *path,
			  const char *allocator,
			  mt_analysis_observer_t *observe, void *ctx)
{
	int status = mt_cmd_analyze_allocator(a, path, allocator, observe, ctx);

	if (status >= 0)
		return status;
	if (a->integrity.invalid)
		return mt_cmd_not_evidence(path, a->integrity.invalid_message);
	return -1;
}

int mt_cmd_load_profile(mt_profile_t *p, const char *path)
{
	return mt_cmd_load_profile_allocator(p, path, NULL);
}

int mt_cmd_load_profile_allocator(mt_profile_t *p, const char *path,
				  const char *allocator)
{
	int rc = mt_profile_load_allocator(p, path, allocator);

	if (rc == MT_ENOMEM)
		return mt_cmd_nomem();
	if (rc == MT_EIO)
		return mt_cmd_cannot_read(path, p->error_errno);
	if (p->invalid)
		return mt_cmd_not_evidence(path, p->why);
	return -1;
}

int mt_cmd_verdict(const mt_analysis_t *a)
{
	if (a->integrity.invalid)
		return MT_EXIT_INVALID;
	return mt_integrity_complete(&a->integrity) ? MT_EXIT_OK :
						      MT_EXIT_CAVEATED;
}

int mt_cmd_done(const mt_analysis_t *a, int strict)
{
	if (strict && !mt_integrity_complete(&a->integrity))
		return MT_EXIT_CAVEATED;
	return MT_EXIT_OK;
}

int mt_cmd_row_status(const mt_row_judgement_t *j)
{
	switch (j->outcome) {
	case MT_ROW_CAPTURE_MISSING:
		return MT_EXIT_MISSING;
	case MT_ROW_SUMMARY_INVALID:
		return MT_EXIT_INVALID;
	default:
		return mt_cmd_verdict(&j->analysis);
	}
}

void mt_cmd_row_note(const mt_row_judgement_t *j, const char *path)
{
	if (j->outcome != MT_ROW_SUMMARY_INVALID)
		return;
	if (j->read_errno)
		mt_cmd_cannot_read(path, j->read_errno);
	else if (j->why)
		mt_cmd_not_evidence(path, j->why);
}

/* The render driver's options: the shared ones here, the rest the
 * command's. */
typedef struct {
	const mt_cmd_render_t *cmd;
	void *ctx;
	int strict;
	const char *output, *allocator;
} render_opts_t;

static int render_option(void *ctx, int c, const char *arg)
{
	render_opts_t *o = ctx;

	switch (c) {
	case MT_CMD_OPT_STRICT:
		o->strict = 1;
		return -1;
	case 'o':
		o->output = arg;
		return -1;
	case MT_CMD_OPT_ALLOCATOR:
		o->allocator = arg;
		return -1;
	default:
		return o->cmd->own ? o->cmd->own(o->ctx, c, arg) :
				     MT_CMD_NOT_HERE;
	}
}

int mt_cmd_render_run(const mt_cmd_render_t *cmd, void *ctx, int argc,
		      char **argv)
{
	const mt_cmd_spec_t spec = {
		.usage = cmd->usage,
		.shorts = "o:",
		.options = cmd->options,
		.option = render_option,
		.args = { "TRACE" },
		.help_at_once = 1,
	};
	render_opts_t o = { .cmd = cmd, .ctx = ctx };
	const char *path;
	int status, first;
	mt_analysis_t a;
	mt_buf_t out = MT_BUF_INIT;

	if ((status = mt_cmd_parse(&spec, &o, argc, argv, &first)) >= 0)
		return status;
	path = argv[first];
	if (cmd->binary && !o.output && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "memtrace: not writing %s to a terminal: "
			"give -o FILE or redirect standard output\n",
			cmd->binary);
		return MT_EXIT_CANTCREAT;
	}
	if (cmd->prepare && (status = cmd->prepare(ctx)) >= 0)
		return status;
	if ((status = mt_cmd_load_allocator(&a, path, o.allocator, cmd->observe,
					    ctx)) >= 0)
		goto cleanup;
	if (o.allocator && !mt_heap_has_allocator(&a.heap, o.allocator)) {
		status = mt_cmd_unknown_allocator(cmd->usage, &a.heap, path,
						  o.allocator);
		goto cleanup;
	}
	if (cmd->render(ctx, &a, path, &out)) {
		status = mt_cmd_nomem();
		goto cleanup;
	}
	status = mt_cmd_write(o.output, &out, 0);
	if (!status)
		status = mt_cmd_done(&a, o.strict);
cleanup:
	mt_buf_release(&out);
	mt_analysis_release(&a);
	return status;
}

/* ---- suppressions (report, gate, diff) ---- */

int mt_cmd_suppress_option(mt_cmd_suppress_opts_t *o, int c, const char *arg)
{
	switch (c) {
	case MT_CMD_OPT_SUPPRESSIONS:
		o->file = arg;
		return -1;
	case MT_CMD_OPT_NO_DEFAULT_SUPP:
		o->no_defaults = 1;
		return -1;
	default:
		return MT_CMD_NOT_HERE;
	}
}

int mt_cmd_suppress_load(mt_suppress_t *s, const mt_cmd_suppress_opts_t *o,
			 const char *usage)
{
	mt_buf_t text = MT_BUF_INIT;
	char chunk[4096], why[160];
	FILE *f = NULL;
	size_t n;
	int status = -1, rc;

	if (!o->no_defaults && mt_suppress_add_defaults(s)) {
		status = mt_cmd_nomem();
		goto cleanup;
	}
	if (!o->file)
		goto cleanup;
	if (!(f = fopen(o->file, "r"))) {
		status = mt_cmd_cannot_read(o->file, errno);
		goto cleanup;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (mt_buf_add(&text, chunk, n)) {
			status = mt_cmd_nomem();
			goto cleanup;
		}
	if (ferror(f)) {
		status = mt_cmd_cannot_read(o->file, EIO);
		goto cleanup;
	}
	rc = mt_suppress_parse(s, text.data ? text.data : "", text.len, why,
			       sizeof(why));
	if (rc == MT_ENOMEM)
		status = mt_cmd_nomem();
	else if (rc)
		status = mt_cmd_usage_error(usage, "--suppressions '%s': %s",
					    o->file, why);
cleanup:
	if (f)
		fclose(f);
	mt_buf_release(&text);
	return status;
}


/* ---- CI outputs (gate, diff) ---- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void mt_cmd_ci_start(mt_cmd_ci_opts_t *o)
{
	o->start_ns = now_ns();
}

int mt_cmd_ci_option(mt_cmd_ci_opts_t *o, const char *usage, int c,
		     const char *arg)
{
	switch (c) {
	case MT_CMD_OPT_JUNIT:
		o->junit = arg;
		return -1;
	case MT_CMD_OPT_FORMAT:
		if (!strcmp(arg, "text"))
			o->format = MT_CMD_FORMAT_TEXT;
		else if (!strcmp(arg, "github"))
			o->format = MT_CMD_FORMAT_GITHUB;
		else
			return mt_cmd_usage_error(usage, "--format needs text or "
						  "github, not '%s'", arg);
		return -1;
	default:
		return MT_CMD_NOT_HERE;
	}
}

int mt_cmd_ci_wanted(const mt_cmd_ci_opts_t *o)
{
	return o->junit || o->format == MT_CMD_FORMAT_GITHUB;
}

int mt_cmd_ci_write(const mt_cmd_ci_opts_t *o, mt_ci_t *c)
{
	mt_buf_t xml = MT_BUF_INIT;
	int status;

	if (!o->junit)
		return MT_EXIT_OK;
	c->duration_ns = now_ns() - o->start_ns;
	if (mt_ci_junit(&xml, c))
		status = mt_cmd_nomem();
	else
		status = mt_cmd_write(o->junit, &xml, 0);
	mt_buf_release(&xml);
	return status;
}
