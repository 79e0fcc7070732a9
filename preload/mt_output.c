/*
 * mt_output: the absolute pattern of a tree's traces, and the directory
 * of an unset MEMTRACE_OUTPUT (mt_output.h).  It must never allocate,
 * keep a descriptor, or reuse a directory it did not make:
 * an existing memtrace.PROG.PID is an earlier run's (a pid come round
 * again) or the user's.
 */
#include "mt_output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>

#include "../common/mt_fmt.h"
#include "mt_real.h"
#include "mt_say.h"

#define CWD_CAP 4096

static const char dir_too_long[] =
	"the current directory's name is too long for the traces; the program runs untraced";

/* "DESC; the program runs untraced" for -rc into why (cap bytes). */
static void untraced_why(int rc, char *why, size_t cap)
{
	const char *desc = strerrordesc_np(-rc);

	why[0] = '\0';
	strncat(why, "': ", cap - 1);
	strncat(why, desc ? desc : "unknown error", cap - strlen(why) - 1);
	strncat(why, "; the program runs untraced", cap - strlen(why) - 1);
}

/* The current directory into cwd, "" for "/" (so that a name joined to
 * it with "/" never starts "//").  Returns 0, or -1 after saying why. */
static int current_dir(char *cwd, size_t cap)
{
	long rc = mt_real_syscall6(SYS_getcwd, (long)cwd, (long)cap, 0, 0, 0, 0);
	const char *desc;

	/* Linux names a directory outside the process's root (a chroot
	 * entered since) "(unreachable)/...": no path to write beside. */
	if (rc >= 0 && cwd[0] != '/')
		rc = -ENOENT;
	if (rc < 0) {
		desc = strerrordesc_np((int)-rc);
		mt_say_line("cannot name the current directory for the traces: ",
			    desc ? desc : "unknown error", "; the program runs untraced");
		return -1;
	}
	if (!strcmp(cwd, "/"))
		cwd[0] = '\0';
	return 0;
}

/* Append s to out at *n (cap bytes), each '%' doubled when escape.
 * Returns 0, or -1 when it does not fit. */
static int add(char *out, size_t cap, size_t *n, const char *s, int escape)
{
	for (; *s; s++) {
		size_t k = escape && *s == '%' ? 2 : 1;

		if (*n + k >= cap)
			return -1;
		out[(*n)++] = *s;
		if (k == 2)
			out[(*n)++] = '%';
	}
	out[*n] = '\0';
	return 0;
}

/* PROG as a directory's name may hold it: the base name of prog, cut at
 * MT_OUTPUT_PROG_MAX bytes, bytes outside [A-Za-z0-9._+-] made '_'. */
static void prog_name(const char *prog, char *out)
{
	const char *b = prog ? strrchr(prog, '/') : NULL;
	size_t n = 0;

	b = b ? b + 1 : prog;
	if (!b || !*b)
		b = "program";
	for (; *b && n < MT_OUTPUT_PROG_MAX; b++) {
		unsigned char c = (unsigned char)*b;
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			 (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '+' || c == '-';

		out[n++] = ok ? (char)c : '_';
	}
	out[n] = '\0';
}

/* Make the first free directory among base, base.1, ... base.999 (mode
 * 0700) into dir.  Returns 0, or -1 after saying why. */
static int make_dir(const char *base, char *dir, size_t dcap)
{
	char why[160];
	long rc = -EEXIST;

	for (unsigned k = 0; k < MT_OUTPUT_DIR_TRIES && rc == -EEXIST; k++) {
		size_t n = 0;

		if (add(dir, dcap, &n, base, 0) < 0)
			goto too_long;
		if (k) {
			char num[MT_FMT_U64_MAX + 2] = ".";

			num[1 + mt_fmt_u64(num + 1, k)] = '\0';
			if (add(dir, dcap, &n, num, 0) < 0)
				goto too_long;
		}
		/* mkdir is atomic and never follows a link at its last
		 * component: a name that anything has is passed over. */
		rc = mt_real_syscall6(SYS_mkdirat, AT_FDCWD, (long)dir, 0700, 0, 0, 0);
	}
	/* 0700 whatever the umask: the traces are the user's alone
	 * (docs/security.md), and a umask that takes the owner's write
	 * bit would leave no room for them. */
	if (rc == 0) {
		rc = mt_real_syscall6(SYS_fchmodat, AT_FDCWD, (long)dir, 0700, 0, 0, 0);
		if (rc == 0)
			return 0;
		mt_output_unmake(dir);
	}
	untraced_why((int)rc, why, sizeof(why));
	mt_say_line("cannot make directory '", dir, why);
	dir[0] = '\0';
	return -1;
too_long:
	dir[0] = '\0';
	mt_say_line(dir_too_long, NULL, NULL);
	return -1;
}

int mt_output_pattern(const char *value, const char *prog, pid_t pid, char *out,
		      size_t cap, char *dir, size_t dcap)
{
	char cwd[CWD_CAP], p[MT_OUTPUT_PROG_MAX + 1], num[MT_FMT_U64_MAX + 1];
	char base[CWD_CAP + MT_OUTPUT_PROG_MAX + 2 * MT_FMT_U64_MAX + 16];
	size_t n = 0;

	dir[0] = '\0';
	if (value && *value == '/') {
		if (add(out, cap, &n, value, 0) < 0)
			goto too_long;
		return 0;
	}
	if (current_dir(cwd, sizeof(cwd)) < 0)
		return -1;
	if (value && *value) {
		if (add(out, cap, &n, cwd, 1) < 0 || add(out, cap, &n, "/", 0) < 0 ||
		    add(out, cap, &n, value, 0) < 0)
			goto too_long;
		return 0;
	}
	prog_name(prog, p);
	num[mt_fmt_u64(num, (uint64_t)pid)] = '\0';
	if (add(base, sizeof(base), &n, cwd, 0) < 0 || add(base, sizeof(base), &n, "/memtrace.", 0) < 0 ||
	    add(base, sizeof(base), &n, p, 0) < 0 || add(base, sizeof(base), &n, ".", 0) < 0 ||
	    add(base, sizeof(base), &n, num, 0) < 0)
		goto too_long;
	if (make_dir(base, dir, dcap) < 0)
		return -1;
	n = 0;
	if (add(out, cap, &n, dir, 1) < 0 || add(out, cap, &n, "/" MT_OUTPUT_DEFAULT_NAME, 0) < 0) {
		mt_output_unmake(dir);
		dir[0] = '\0';
		goto too_long;
	}
	return 0;
too_long:
	if (value && *value)
		mt_say_line("MEMTRACE_OUTPUT is too long; the program runs untraced", NULL, NULL);
	else
		mt_say_line(dir_too_long, NULL, NULL);
	return -1;
}

void mt_output_unmake(const char *dir)
{
	if (dir && *dir)
		mt_real_syscall6(SYS_unlinkat, AT_FDCWD, (long)dir, AT_REMOVEDIR, 0, 0, 0);
}
