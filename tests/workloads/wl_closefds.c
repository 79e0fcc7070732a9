/*
 * wl_closefds: a daemon-style program that closes every descriptor it did
 * not open, then opens a file of its own, which gets the trace's old
 * descriptor number, and allocates on.  memtrace must never resize or
 * write into that file.  Usage: wl_closefds FILE [ROUNDS]: 10000 rounds
 * fit in the trace's first window; 100000 need more, which memtrace can
 * no longer reserve, so it warns once and stops tracing.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int fd;

	if (argc < 2)
		return 64;
	free(malloc(100));
	for (int i = 3; i < 1024; i++)
		close(i);
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "mine\n", 5) != 5)
		return 1;
	for (int i = 0, n = argc > 2 ? atoi(argv[2]) : 10000; i < n; i++)
		free(malloc(32));
	if (close(fd) < 0)
		return 2;
	return 0;
}
