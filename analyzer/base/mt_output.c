/*
 * mt_output: whole-or-nothing file output.  It must never leave a
 * temporary file behind, nor a partial row in a destination.
 */
#include "../base/mt_output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/mt_error.h"
#include "../base/mt_mem.h"

static int write_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t n = write(fd, data, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Write data through path, which exists and is no regular file. */
static int write_through(const char *path, const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY), saved;

	if (fd < 0)
		return MT_EOUTPUT;
	if (write_all(fd, data, len) < 0) {
		saved = errno;
		close(fd);
		errno = saved;
		return MT_EOUTPUT;
	}
	return close(fd) < 0 ? MT_EOUTPUT : MT_OK;
}

int mt_output_replace(const char *path, const char *data, size_t len)
{
	static const char suffix[] = ".tmp.XXXXXX";
	size_t plen = strlen(path);
	struct stat st, lst;
	char resolved[PATH_MAX], *tmp;
	mode_t mask;
	int fd, saved, exists;

	/* A device, a FIFO or a socket (-o /dev/null, a pipe to a reader)
	 * is written through, never replaced: a rename would put a regular
	 * file where it was, and as root that means a new /dev/null.  Such a
	 * file holds no previous output for a partial write to spoil.  A
	 * directory goes the rename's way, which refuses it. */
	exists = stat(path, &st) == 0;
	if (exists && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return write_through(path, data, len);
	/* A symbolic link to a file (latest.json -> runs/42.json) stays a
	 * link: the file it names is the one replaced, as `>` would write
	 * it, through a temporary file in that file's own directory.  A
	 * dangling link, or one whose target's name is too long, is
	 * replaced itself, as any other path is. */
	if (exists && S_ISREG(st.st_mode) && lstat(path, &lst) == 0 &&
	    S_ISLNK(lst.st_mode) &&
	    realpath(path, resolved)) {
		path = resolved;
		plen = strlen(path);
	}
	tmp = mt_mem_malloc(plen + sizeof(suffix));
	if (!tmp)
		return MT_ENOMEM;
	memcpy(tmp, path, plen);
	memcpy(tmp + plen, suffix, sizeof(suffix));
	fd = mkstemp(tmp);
	if (fd < 0)
		goto fail_nofile;
	/* mkstemp makes 0600; give the file the mode open(2) would. */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) < 0 || write_all(fd, data, len) < 0 ||
	    fsync(fd) < 0)
		goto fail;
	if (close(fd) < 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) < 0)
		goto fail;
	mt_mem_free(tmp);
	return MT_OK;
fail:
	saved = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	errno = saved;
fail_nofile:
	saved = errno;
	mt_mem_free(tmp);
	errno = saved;
	return MT_EOUTPUT;
}

int mt_output_append(const char *path, const char *data, size_t len)
{
	struct stat st;
	ssize_t n;
	int fd, saved;

	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		return MT_EOUTPUT;
	if (fstat(fd, &st) < 0)
		goto fail;
	do
		n = write(fd, data, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		goto fail;
	if ((size_t)n != len) {
		/* A short append (disk full) must not leave half a row:
		 * cut the file back to where it was. */
		if (ftruncate(fd, st.st_size) < 0) {
			/* nothing more can be done; report the failure */
		}
		errno = ENOSPC;
		goto fail;
	}
	if (close(fd) < 0)
		return MT_EOUTPUT;
	return MT_OK;
fail:
	saved = errno;
	close(fd);
	errno = saved;
	return MT_EOUTPUT;
}

int mt_output_stdout(const char *data, size_t len)
{
	return write_all(STDOUT_FILENO, data, len) < 0 ? MT_EOUTPUT : MT_OK;
}
