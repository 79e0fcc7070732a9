/*
 * top: `memtrace top TRACE [--interval SECONDS] [--top N] [--once]
 * [--timeout SECONDS] [--alloc-fn REGEX]`, a live view of a running process from its growing
 * trace (mt_top), refreshed every interval while one pass reads the trace
 * as it is written (mt_growing, mt_analysis_run_followed()).  It must read
 * the trace once, keeping its place, and never take a trace that still
 * grows for a cut or corrupt one.
 *
 * Exit statuses: 0 after trace.stop (or --once); 1 when the process is
 * gone without one (missing_stop_event, as `check` says); 75 (sysexits'
 * EX_TEMPFAIL) when --timeout passed with no new byte; the other
 * commands' 2, 3, 4, 64 and 73.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../cmd/mt_cmd.h"
#include "../base/mt_error.h"
#include "../read/mt_growing.h"
#include "../base/mt_output.h"
#include "../render/mt_top.h"
#include "../base/mt_units.h"

#define DEFAULT_TOP 10
#define DEFAULT_INTERVAL_NS 1000000000ull
/* Seconds beyond this are a typing error, not a wish. */
#define MAX_SECONDS 1000000ull

/* Events applied between two looks at the clock while bytes keep coming. */
#define TICK_EVENTS 1024

static const char usage[] =
	"usage: memtrace top TRACE [--interval SECONDS] [--top N] [--once]\n"
	"                    [--timeout SECONDS] [--alloc-fn REGEX]\n"
	"\n"
	"Watch a running process from its growing trace: live bytes, peak,\n"
	"allocation rate and the top sites by live bytes (each named as the\n"
	"report names it), refreshed every interval, in place on a terminal,\n"
	"else one block of figures a refresh.  A sampled trace's figures come\n"
	"with their standard errors (+-).\n"
	"Ends after trace.stop with the final figures (exit 0); when the process\n"
	"is gone without one, ends with them too (exit 1).\n"
	"\n"
	"  --interval SECONDS   between refreshes (default 1; fractions allowed)\n"
	"  --top N              sites listed (default 10; 0: the totals alone)\n"
	"  --once               print the figures as written so far and exit\n"
	"  --timeout SECONDS    give up (exit 75) when no byte comes for so long\n"
	"                       (default: wait while the traced process lives)\n"
	"  --alloc-fn REGEX     a function to pass over when naming a site, as\n"
	"                       the allocator is (POSIX extended, repeatable)\n"
	MT_CMD_TOP_THREADS_USAGE;

enum {
	OPT_INTERVAL = MT_CMD_OPT_OWN,
	OPT_ONCE,
	OPT_TIMEOUT,
	OPT_ALLOC_FN,
};

static const struct option options[] = {
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "top", required_argument, NULL, MT_CMD_OPT_TOP },
	{ "once", no_argument, NULL, OPT_ONCE },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "alloc-fn", required_argument, NULL, OPT_ALLOC_FN },
	{ "help", no_argument, NULL, MT_CMD_OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

typedef struct {
	uint64_t interval_ns, timeout_ns, top;
	int once;
	mt_label_opts_t labels;
} top_opts_t;

/* Seconds as typed: digits, and a fraction of at most 9 digits ("0.25");
 * more than 0, at most MAX_SECONDS.  0 with *ns set, or -1. */
static int parse_seconds(const char *s, uint64_t *ns)
{
	uint64_t whole = 0, frac = 0, scale = 100000000ull;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		whole = whole * 10 + (uint64_t)(*p - '0');
		if (whole > MAX_SECONDS)
			return -1;
	}
	if (*p == '.') {
		if (p[1] < '0' || p[1] > '9')
			return -1;
		for (p++; *p >= '0' && *p <= '9'; p++) {
			if (!scale)
				return -1;
			frac += (uint64_t)(*p - '0') * scale;
			scale /= 10;
		}
	}
	if (*p || (!whole && !frac) ||
	    (whole == MAX_SECONDS && frac))
		return -1;
	*ns = whole * 1000000000ull + frac;
	return 0;
}

static int option(void *ctx, int c, const char *arg)
{
	top_opts_t *o = ctx;

	switch (c) {
	case OPT_INTERVAL:
		if (parse_seconds(arg, &o->interval_ns))
			return mt_cmd_usage_error(usage,
				"--interval needs seconds above 0, not '%s'", arg);
		return -1;
	case OPT_TIMEOUT:
		if (parse_seconds(arg, &o->timeout_ns))
			return mt_cmd_usage_error(usage,
				"--timeout needs seconds above 0, not '%s'", arg);
		return -1;
	case OPT_ONCE:
		o->once = 1;
		return -1;
	case OPT_ALLOC_FN: {
		int rc = mt_label_opts_add(&o->labels, arg);

		if (rc == MT_ENOMEM)
			return mt_cmd_nomem();
		return rc ? mt_cmd_usage_error(usage, "--alloc-fn needs a "
					       "pattern, not '%s'", arg) : -1;
	}
	case MT_CMD_OPT_TOP:
		if (mt_units_parse_count(arg, &o->top))
			return mt_cmd_usage_error(usage,
				"--top needs a number, not '%s'", arg);
		return -1;
	default:
		return MT_CMD_NOT_HERE;
	}
}

/* What the pass's observer and waits share. */
typedef struct {
	mt_growing_t follow;
	mt_top_t view;
	mt_analysis_t *a;
	int tty;
	uint64_t events;  /* applied since the last look at the clock */
	uint64_t printed; /* views printed */
	mt_buf_t text, frame;
} top_t;

/* Print one view: in place on a terminal, else after a blank line. */
static int print_view(top_t *t, mt_top_state_t state, const mt_integrity_t *ig)
{
	const mt_buf_t *b = &t->text;
	int rc;

	mt_buf_reset(&t->text);
	mt_buf_reset(&t->frame);
	if (t->printed && !t->tty && (rc = mt_buf_add_str(&t->text, "\n")))
		return rc;
	if ((rc = mt_top_render(&t->view, &t->a->heap, state, ig, &t->text)))
		return rc;
	if (t->tty) {
		struct winsize ws = { 0 };

		if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0)
			ws.ws_col = ws.ws_row = 0;
		if ((rc = mt_top_frame(&t->text, ws.ws_col, ws.ws_row, &t->frame)))
			return rc;
		b = &t->frame;
	}
	t->printed++;
	return mt_output_stdout(b->data, b->len);
}

/* mt_growing's refresh.  Off a terminal, nothing is printed until the
 * pass has caught up with the writer: a finished trace prints once. */
static int refresh(void *ctx)
{
	top_t *t = ctx;

	if (!t->tty && !t->follow.waited)
		return MT_OK;
	return print_view(t, MT_TOP_RUNNING, NULL);
}

static void observe(void *ctx, const mt_heap_t *h, const mt_event_t *ev)
{
	top_t *t = ctx;

	(void)h;
	/* Line 1 names the process to watch: known from here on. */
	if (ev->kind == MT_KIND_TRACE_START && (ev->has & MT_HAS_PID) &&
	    ev->pid <= INT64_MAX) {
		t->follow.pid = (int64_t)ev->pid;
		t->view.pid = (int64_t)ev->pid;
		return;
	}
	if (ev->kind == MT_KIND_TRACE_STOP) {
		t->follow.stopped = 1;
		if (ev->has & MT_HAS_REASON)
			mt_top_stop_reason(&t->view, ev->reason, ev->reason_len);
		return;
	}
	if (++t->events < TICK_EVENTS)
		return;
	t->events = 0;
	mt_growing_tick(&t->follow);
}

static mt_top_state_t final_state(const mt_growing_t *f)
{
	switch (f->end) {
	case MT_GROWING_ONCE:
		return f->stopped ? MT_TOP_STOPPED : MT_TOP_WRITTEN;
	case MT_GROWING_TIMEOUT:
		return MT_TOP_TIMEOUT;
	case MT_GROWING_GONE:
		return MT_TOP_GONE;
	default:
		/* Stopped, or a file that was not followed ended. */
		return f->stopped ? MT_TOP_STOPPED : MT_TOP_GONE;
	}
}

static int write_failed(void)
{
	fprintf(stderr, "memtrace: cannot write 'standard output': %s\n",
		strerror(errno));
	return MT_EXIT_CANTCREAT;
}

/* The command, with o's defaults set; the caller releases its labels
 * whatever happens. */
static int watch(top_opts_t *o, int argc, char **argv)
{
	static const mt_cmd_spec_t spec = {
		.usage = usage,
		.options = options,
		.option = option,
		.args = { "TRACE" },
	};
	top_t t;
	mt_analysis_t a;
	mt_top_state_t state;
	const char *path;
	int status, first, rc, fd, have_a = 0;
	struct stat st;

	if ((status = mt_cmd_parse(&spec, o, argc, argv, &first)) >= 0)
		return status;
	path = argv[first];
	if (!strcmp(path, "-"))
		return mt_cmd_usage_error(usage, "top follows a file, not standard input");
	/* A missing or unreadable trace is said now, not waited for.  Only
	 * a regular file is opened to ask: a FIFO opened and closed here
	 * would take its writer's reader away before the pass opens it. */
	if (stat(path, &st) < 0)
		return mt_cmd_cannot_read(path, errno);
	if (S_ISREG(st.st_mode)) {
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			return mt_cmd_cannot_read(path, errno);
		close(fd);
	}

	memset(&t, 0, sizeof(t));
	mt_buf_init(&t.text, 0);
	mt_buf_init(&t.frame, 0);
	t.a = &a;
	t.tty = isatty(STDOUT_FILENO);
	mt_growing_init(&t.follow, o->interval_ns, o->timeout_ns, o->once);
	mt_top_init(&t.view, path, 0, o->top);
	t.view.labels = &o->labels;
	if (mt_growing_wait_start(&t.follow, path)) {
		status = mt_cmd_cannot_read(path, errno);
		goto cleanup;
	}
	t.follow.waited = 0;
	t.follow.refresh = refresh;
	t.follow.refresh_ctx = &t;
	have_a = 1;
	rc = mt_analysis_run_followed(&a, path, observe, &t, mt_growing_wait,
				      &t.follow);
	if (rc == MT_ENOMEM || t.follow.error == MT_ENOMEM) {
		status = mt_cmd_nomem();
		goto cleanup;
	}
	if (rc == MT_EIO) {
		status = mt_cmd_cannot_read(path, a.error_errno);
		goto cleanup;
	}
	if (t.follow.error) {
		status = write_failed();
		goto cleanup;
	}
	if (a.integrity.invalid) {
		status = mt_cmd_not_evidence(path, a.integrity.invalid_message);
		goto cleanup;
	}
	state = final_state(&t.follow);
	if ((rc = print_view(&t, state, &a.integrity))) {
		status = rc == MT_ENOMEM ? mt_cmd_nomem() : write_failed();
		goto cleanup;
	}
	switch (state) {
	case MT_TOP_GONE:
		status = MT_EXIT_CAVEATED;
		break;
	case MT_TOP_TIMEOUT:
		fprintf(stderr,
			"memtrace: '%s' did not grow for the --timeout; giving up\n",
			path);
		status = MT_EXIT_TEMPFAIL;
		break;
	default:
		status = MT_EXIT_OK;
		break;
	}
cleanup:
	if (have_a)
		mt_analysis_release(&a);
	mt_top_release(&t.view);
	mt_buf_release(&t.frame);
	mt_buf_release(&t.text);
	return status;
}

static int run(int argc, char **argv)
{
	top_opts_t o = { .interval_ns = DEFAULT_INTERVAL_NS, .top = DEFAULT_TOP };
	int status = watch(&o, argc, argv);

	mt_label_opts_release(&o.labels);
	return status;
}

const mt_cmd_t mt_cmd_top = {
	.name = "top",
	.synopsis = "top TRACE",
	.summary = "watch a running process from its growing trace",
	.usage = usage,
	.run = run,
};
