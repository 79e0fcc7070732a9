/*
 * wl_run_steady: the same allocations every run, for memtrace-run's tests:
 * ten blocks of 1000 bytes, seven of them freed (3000 bytes live at exit,
 * peak 10000).  It copies its stdin to its stdout and writes one line on
 * its stderr, all without stdio, so the counts are exact.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	static const char err[] = "wl_run_steady: on stderr\n";
	char *blocks[10], buf[4096];
	ssize_t n;

	for (int i = 0; i < 10; i++) {
		blocks[i] = malloc(1000);
		if (!blocks[i])
			return 1;
		memset(blocks[i], i, 1000);
	}
	for (int i = 0; i < 7; i++)
		free(blocks[i]);
	while ((n = read(0, buf, sizeof(buf))) > 0)
		if (write(1, buf, (size_t)n) != n)
			return 1;
	if (write(2, err, sizeof(err) - 1) != (ssize_t)(sizeof(err) - 1))
		return 1;
	return 0;
}
