/*
 * run-dir: `memtrace run-dir DIR`, memtrace-run's output directory made
 * ready (created when missing, proven writable) and its absolute path as
 * the preload's MEMTRACE_OUTPUT pattern wants it: '%' written "%%", and a
 * trailing '/'.  Its errors are memtrace-run's, with its status (73).  It
 * must refuse a path holding "%p" before it makes anything: the escaped
 * form of "%p" is a pid pattern to the preload, and every process of a
 * run would then write the same trace.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../cmd/mt_cmd.h"
#include "../base/mt_error.h"

static const char usage[] =
	"usage: memtrace run-dir DIR\n"
	"\n"
	"Make memtrace-run's output directory DIR ready: created with its\n"
	"parents when missing, and a file made and removed in it.  Print its\n"
	"absolute, physical path with each '%' written \"%%\" and a '/' after it,\n"
	"the start of the preload's MEMTRACE_OUTPUT.  A path that holds \"%p\" is\n"
	"refused before anything is made.\n"
	"\n"
	"Exit 0, 4 out of memory, 64 usage, 73 DIR cannot be used (said as\n"
	"memtrace-run says it: \"memtrace-run: cannot ...\").\n";

static const struct option options[] = {
	{ "help", no_argument, NULL, MT_CMD_OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* "memtrace-run: cannot use|create|... the output directory ..."; 73. */
static int cannot(const char *what, const char *dir, const char *why)
{
	fprintf(stderr, "memtrace-run: cannot %s '%s'%s\n", what, dir, why);
	return MT_EXIT_CANTCREAT;
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

static int run(int argc, char **argv)
{
	static const mt_cmd_spec_t spec = {
		.usage = usage,
		.options = options,
		.args = { "DIR" },
	};
	mt_buf_t out = MT_BUF_INIT;
	char *dir, *path = NULL, *probe = NULL, *abs = NULL;
	const char *pwd = getenv("PWD");
	struct stat st;
	int status, first, fd, rc = 0;

	if ((status = mt_cmd_parse(&spec, NULL, argc, argv, &first)) >= 0)
		return status;
	dir = argv[first];
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
	/* The physical path, as `cd DIR && pwd -P` gives it. */
	if (chdir(dir) || !(abs = getcwd(NULL, 0))) {
		status = cannot("enter the output directory", dir, "");
		goto cleanup;
	}
	if (has_pct_p(dir, abs)) {
		status = MT_EXIT_CANTCREAT;
		goto cleanup;
	}
	for (const char *p = abs; *p && !rc; p++)
		rc = (*p == '%' && mt_buf_add_str(&out, "%")) ||
		     mt_buf_add(&out, p, 1);
	if (rc || (strcmp(abs, "/") && mt_buf_add_str(&out, "/")) ||
	    mt_buf_add_str(&out, "\n"))
		status = mt_cmd_nomem();
	else
		status = mt_cmd_write(NULL, &out, 0);
cleanup:
	mt_buf_release(&out);
	free(abs);
	free(probe);
	free(path);
	return status;
}

const mt_cmd_t mt_cmd_run_dir = {
	.name = "run-dir",
	.synopsis = "run-dir DIR",
	.summary = "memtrace-run's output directory, made ready",
	.usage = usage,
	.run = run,
};
