/*
 * wl_demo: the bundled demo workload (make demo, the README).  A small
 * "config and records" program that leaks on purpose: parse_config keeps
 * an 8 KiB table and two strings it never frees (calloc, xstrdup),
 * load_records grows a buffer with
 * realloc and frees it, and format_line makes short-lived buffers.  With
 * an argument N it loads N records (default 1000).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);

	if (!p)
		abort();
	return memcpy(p, s, n);
}

__attribute__((noinline)) static void parse_config(char **name, char **path)
{
	/* The leak: the table and both strings outlive main, and nobody
	 * frees them. */
	static char **table;

	table = calloc(1024, sizeof(*table));
	if (!table)
		abort();
	*name = table[0] = xstrdup("demo-service-with-a-rather-long-name");
	*path = table[1] = xstrdup("/var/lib/demo/records.db");
}

__attribute__((noinline)) static char *format_line(long i)
{
	char *line = malloc(64);

	if (!line)
		abort();
	snprintf(line, 64, "record %ld", i);
	return line;
}

__attribute__((noinline)) static long load_records(long n)
{
	long *records = NULL, cap = 0, sum = 0;

	for (long i = 0; i < n; i++) {
		char *line;

		if (i == cap) {
			long *grown;

			cap = cap ? cap * 2 : 16;
			grown = realloc(records, (size_t)cap * sizeof(*records));
			if (!grown)
				abort();
			records = grown;
		}
		line = format_line(i);
		records[i] = (long)strlen(line);
		free(line);
	}
	for (long i = 0; i < n; i++)
		sum += records[i];
	free(records);
	return sum;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	char *name, *path;

	parse_config(&name, &path);
	printf("%s: %ld bytes of records from %s\n", name, load_records(n), path);
	return 0;
}
