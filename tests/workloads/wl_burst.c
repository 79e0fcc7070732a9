/*
 * wl_burst PATH: malloc(4242)+free pairs without end, storing how many
 * pairs it has finished in the first 8 bytes of the file PATH (mapped
 * shared) after each one, so that a test which kills it mid-burst knows
 * how many allocations the program had finished: each one returned, its
 * free returned, before the count says so.
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	_Atomic uint64_t *done;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: wl_burst PATH\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR);
	if (fd < 0 || ftruncate(fd, 4096) < 0) {
		perror(argv[1]);
		return 1;
	}
	done = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (done == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (uint64_t n = 1;; n++) {
		char *p = malloc(4242);

		if (!p)
			return 1;
		p[0] = (char)n;
		free(p);
		atomic_store_explicit(done, n, memory_order_release);
	}
}
