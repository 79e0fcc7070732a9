/*
 * mt_growing: the waits of `memtrace top`.  It must never read the trace
 * (the pass is its one reader, and keeps its place), and never take a
 * trace that is still growing for ended.
 */
#include "../read/mt_growing.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../read/mt_decomp.h"
#include "../base/mt_error.h"

void mt_growing_init(mt_growing_t *f, uint64_t interval_ns, uint64_t timeout_ns,
		     int once)
{
	memset(f, 0, sizeof(*f));
	f->interval_ns = interval_ns;
	f->timeout_ns = timeout_ns;
	f->once = once;
	f->last_growth_ns = mt_growing_now();
	f->next_refresh_ns = f->last_growth_ns + interval_ns;
}

uint64_t mt_growing_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int mt_growing_process_alive(int64_t pid)
{
	char path[64], stat[512];
	const char *paren;
	ssize_t n;
	int fd;

	if (pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%lld/stat", (long long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		/* No /proc to ask: whether a signal could be sent. */
		return kill((pid_t)pid, 0) == 0 || errno == EPERM;
	}
	do
		n = read(fd, stat, sizeof(stat) - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return 0;
	stat[n] = '\0';
	/* "pid (comm) S ...": the state follows the last ')', as comm may
	 * hold one. */
	paren = strrchr(stat, ')');
	if (!paren || paren[1] != ' ')
		return 1;
	return paren[2] != 'Z' && paren[2] != 'X';
}

static void refresh_if_due(mt_growing_t *f, uint64_t now)
{
	int rc;

	if (!f->refresh || f->error || now < f->next_refresh_ns)
		return;
	rc = f->refresh(f->refresh_ctx);
	if (rc)
		f->error = rc;
	/* The next one an interval from now: a refresh that took long
	 * (a first lookup of source lines) is not followed by a burst. */
	f->next_refresh_ns = mt_growing_now() + f->interval_ns;
}

void mt_growing_tick(mt_growing_t *f)
{
	if (f->end || f->error)
		return;
	refresh_if_due(f, mt_growing_now());
}

/* Whether following has ended, now: f->end says why. */
static int ended(mt_growing_t *f, uint64_t now)
{
	uint64_t still = now - f->last_growth_ns, grace = 2 * f->interval_ns;

	if (!f->pid && grace < MT_GROWING_NO_PID_NS)
		grace = MT_GROWING_NO_PID_NS;
	if (f->end)
		return 1;
	if (f->once)
		f->end = MT_GROWING_ONCE;
	else if (f->stopped)
		f->end = MT_GROWING_STOPPED;
	else if (still >= grace && !mt_growing_process_alive(f->pid))
		f->end = MT_GROWING_GONE;
	else if (f->timeout_ns && still >= f->timeout_ns)
		f->end = MT_GROWING_TIMEOUT;
	return f->end != MT_GROWING_ON;
}

int mt_growing_wait(void *ctx, uint64_t bytes_read)
{
	mt_growing_t *f = ctx;
	uint64_t now = mt_growing_now(), sleep_ns;
	struct timespec ts;

	f->waited = 1;
	if (bytes_read != f->bytes_seen) {
		f->bytes_seen = bytes_read;
		f->last_growth_ns = now;
	}
	if (f->error || ended(f, now))
		return 0;
	refresh_if_due(f, now);
	if (f->error)
		return 0;
	now = mt_growing_now();
	sleep_ns = MT_GROWING_POLL_NS < f->interval_ns ? MT_GROWING_POLL_NS : f->interval_ns;
	if (f->next_refresh_ns > now && f->next_refresh_ns - now < sleep_ns)
		sleep_ns = f->next_refresh_ns - now;
	ts.tv_sec = (time_t)(sleep_ns / 1000000000ull);
	ts.tv_nsec = (long)(sleep_ns % 1000000000ull);
	nanosleep(&ts, NULL);
	return 1;
}

int mt_growing_wait_start(mt_growing_t *f, const char *path)
{
	struct stat st;

	for (;;) {
		if (stat(path, &st) < 0)
			return MT_EIO;
		if (!S_ISREG(st.st_mode) || st.st_size >= MT_DECOMP_MAGIC_MAX ||
		    !mt_growing_wait(f, (uint64_t)st.st_size))
			return MT_OK;
	}
}
