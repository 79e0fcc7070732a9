/*
 * wl_run_counter COUNTER [STATUS...]: a workload that changes from run to
 * run, for memtrace-run's tests.  It counts its runs in the file COUNTER;
 * run k makes k allocations of 100 bytes (so the runs differ) and exits
 * with the k-th STATUS (0 when there are fewer).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char buf[32] = "";
	int fd, k, len;
	ssize_t n;

	if (argc < 2)
		return 100;
	fd = open(argv[1], O_RDWR | O_CREAT, 0600);
	if (fd < 0)
		return 101;
	n = read(fd, buf, sizeof(buf) - 1);
	k = (n > 0 ? atoi(buf) : 0) + 1;
	len = snprintf(buf, sizeof(buf), "%d\n", k);
	if (lseek(fd, 0, SEEK_SET) != 0 || write(fd, buf, (size_t)len) != len ||
	    close(fd) != 0)
		return 102;
	for (int i = 0; i < k; i++)
		((char *)malloc(100))[0] = 1;
	return k + 1 < argc ? atoi(argv[k + 1]) : 0;
}
