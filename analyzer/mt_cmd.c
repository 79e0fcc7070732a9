/*
 * mt_cmd: the plumbing the commands for people share.  It must say what
 * went wrong in the words and with the statuses the other commands use
 * (mt_cli.c), and never write anything but whole outputs.
 */
#include "mt_cmd.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "mt_error.h"
#include "mt_mem.h"
#include "mt_output.h"

typedef unsigned __int128 u128;

int mt_cmd_usage_error(const char *usage, const char *fmt, const char *arg)
{
	fputs("memtrace: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\n\n", stderr);
	fputs(usage, stderr);
	return MT_EXIT_USAGE;
}

int mt_cmd_nomem(void)
{
	fputs("memtrace: out of memory\n", stderr);
	return MT_EXIT_NOMEM;
}

int mt_cmd_bad_option(const char *usage, int c, char **argv)
{
	if (c == ':')
		return mt_cmd_usage_error(usage, "option '%s' needs a value",
					  argv[optind - 1]);
	return mt_cmd_usage_error(usage, "unknown option '%s'",
				  argv[optind - 1]);
}

int mt_cmd_one_trace(const char *usage, int argc, char **argv,
		     const char **path)
{
	if (argc - optind > 1)
		return mt_cmd_usage_error(usage, "unexpected argument '%s'",
					  argv[optind + 1]);
	if (argc - optind < 1)
		return mt_cmd_usage_error(usage, "%s", "missing TRACE argument");
	*path = argv[optind];
	return -1;
}

int mt_cmd_load(mt_analysis_t *a, const char *path,
		mt_analysis_observer_t *observe, void *ctx)
{
	int rc = mt_analysis_run_observed(a, path, observe, ctx);

	if (rc == MT_ENOMEM)
		return mt_cmd_nomem();
	if (rc == MT_EIO) {
		fprintf(stderr, "memtrace: cannot read '%s': %s\n", path,
			strerror(a->error_errno));
		return MT_EXIT_MISSING;
	}
	if (a->integrity.invalid) {
		fprintf(stderr,
			"memtrace: '%s' is not valid memtrace evidence: %s\n",
			path, a->integrity.invalid_message);
		return MT_EXIT_INVALID;
	}
	return -1;
}

int mt_cmd_write(const char *path, const mt_buf_t *b)
{
	int rc = path ? mt_output_replace(path, b->data, b->len) :
			mt_output_stdout(b->data, b->len);

	if (rc == MT_ENOMEM)
		return mt_cmd_nomem();
	if (rc) {
		fprintf(stderr, "memtrace: cannot write '%s': %s\n",
			path ? path : "standard output", strerror(errno));
		return MT_EXIT_CANTCREAT;
	}
	return MT_EXIT_OK;
}

int mt_cmd_done(const mt_analysis_t *a, int strict)
{
	if (strict && !mt_integrity_complete(&a->integrity))
		return MT_EXIT_CAVEATED;
	return MT_EXIT_OK;
}

int mt_cmd_render_run(const mt_cmd_render_t *cmd, void *ctx, int argc,
		      char **argv)
{
	const char *path, *output = NULL;
	int strict = 0, c, status;
	mt_analysis_t a;
	mt_buf_t out = MT_BUF_INIT;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:", cmd->options, NULL)) != -1) {
		switch (c) {
		case MT_CMD_OPT_STRICT:
			strict = 1;
			break;
		case 'o':
			output = optarg;
			break;
		case MT_CMD_OPT_HELP:
			fputs(cmd->usage, stdout);
			return MT_EXIT_OK;
		default:
			if (c < MT_CMD_OPT_OWN || !cmd->own)
				return mt_cmd_bad_option(cmd->usage, c, argv);
			if ((status = cmd->own(ctx, c, optarg)) >= 0)
				return status;
		}
	}
	if ((status = mt_cmd_one_trace(cmd->usage, argc, argv, &path)) >= 0)
		return status;
	if (cmd->prepare && (status = cmd->prepare(ctx)) >= 0)
		return status;
	if ((status = mt_cmd_load(&a, path, cmd->observe, ctx)) >= 0)
		goto cleanup;
	if (cmd->render(ctx, &a, path, &out)) {
		status = mt_cmd_nomem();
		goto cleanup;
	}
	status = mt_cmd_write(output, &out);
	if (!status)
		status = mt_cmd_done(&a, strict);
cleanup:
	mt_buf_release(&out);
	mt_analysis_release(&a);
	return status;
}

/* A site any list may name: it made a call (a resize to 0 bytes is one,
 * and adds no bytes) or holds bytes. */
static int site_made_anything(const mt_site_t *s, uint64_t calls)
{
	return calls || s->bytes_allocated || s->live_bytes;
}

int mt_cmd_sites(const mt_heap_t *h, mt_cmd_site_t **out, size_t *n)
{
	size_t pos = 0, count = 0;
	uint64_t key, calls = mt_heap_site_calls(h, NULL);
	void *v;
	mt_cmd_site_t *list;

	*out = NULL;
	*n = 0;
	list = mt_mem_malloc((mt_map_count(&h->stacks) + 1) * sizeof(*list));
	if (!list)
		return MT_ENOMEM;
	if (site_made_anything(&h->no_stack, calls))
		list[count++] = (mt_cmd_site_t){ 0, &h->no_stack, NULL, calls };
	while (mt_map_iter(&h->stacks, &pos, &key, &v)) {
		const mt_stack_t *s = *(mt_stack_t **)v;
		const mt_site_t *site = mt_heap_stack_site(h, s);

		calls = mt_heap_site_calls(h, s);
		if (site_made_anything(site, calls))
			list[count++] = (mt_cmd_site_t){ s->id, site, s, calls };
	}
	*out = list;
	*n = count;
	return MT_OK;
}

/* v / d with one decimal, rounded to nearest, then the unit. */
static int add_tenths(mt_buf_t *b, u128 tenths, const char *unit)
{
	size_t mark = b->len;
	int rc;

	if ((rc = mt_buf_add_u64(b, (uint64_t)(tenths / 10))) ||
	    (rc = mt_buf_add_str(b, ".")) ||
	    (rc = mt_buf_add_u64(b, (uint64_t)(tenths % 10))) ||
	    (rc = mt_buf_add_str(b, unit)))
		mt_buf_truncate(b, mark);
	return rc;
}

int mt_cmd_add_duration(mt_buf_t *b, uint64_t ns)
{
	static const char *const unit[] = { " us", " ms", " s" };
	size_t mark = b->len;
	u128 d = 1;
	int rc;

	if (ns < 1000) {
		if ((rc = mt_buf_add_u64(b, ns)) || (rc = mt_buf_add_str(b, " ns")))
			mt_buf_truncate(b, mark);
		return rc;
	}
	/* The first unit whose rounded value stays below 1000 of it. */
	for (int i = 0;; i++) {
		u128 tenths;

		d *= 1000;
		tenths = ((u128)ns * 10 + d / 2) / d;
		if (tenths < 10000 || i == 2)
			return add_tenths(b, tenths, unit[i]);
	}
}

int mt_cmd_add_count(mt_buf_t *b, uint64_t n, const char *one,
		     const char *many)
{
	size_t mark = b->len;
	int rc;

	if ((rc = mt_buf_add_u64(b, n)) || (rc = mt_buf_add_str(b, " ")) ||
	    (rc = mt_buf_add_str(b, n == 1 ? one : many)))
		mt_buf_truncate(b, mark);
	return rc;
}
