/*
 * wl_waitterm FILE: allocates 2727 bytes ten times, makes FILE, then
 * waits for a signal (SIGTERM's default action ends it).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int fd;

	for (int i = 0; i < 10; i++)
		free(malloc(2727));
	if (argc < 2 || (fd = open(argv[1], O_WRONLY | O_CREAT | O_EXCL, 0600)) < 0)
		return 64;
	close(fd);
	for (;;)
		pause();
}
