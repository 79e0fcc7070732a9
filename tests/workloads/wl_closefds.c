/*
 * wl_closefds: a daemon-style program that closes every descriptor it did
 * not open, then opens a file of its own, and allocates on.  memtrace
 * must never write into that file, and its trace, which depends on no
 * descriptor of the program's, must be whole.  Usage: wl_closefds FILE
 * [ROUNDS].
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
