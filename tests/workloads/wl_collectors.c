/*
 * wl_collectors DIR: prints "collectors N", N the memtrace-collector
 * processes running whose command line names DIR (the traces they write
 * are in it): a process per traced process with collectors of their own,
 * one under memtrace record.  Allocates 6363 bytes first.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	free(malloc(6363));
	if (argc < 2 || !d)
		return 64;
	while ((e = readdir(d))) {
		char path[300], buf[8192];
		size_t len;
		FILE *f;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = '\0';
		len = strlen(buf);
		if (len < 18 || strcmp(buf + len - 18, "memtrace-collector"))
			continue;
		/* The arguments, NULs made spaces, name DIR. */
		for (char *p = buf; p < buf + sizeof(buf) - 1 && (p[0] || p[1]); p++)
			if (!*p)
				*p = ' ';
		if (strstr(buf, argv[1]))
			n++;
	}
	closedir(d);
	printf("collectors %d\n", n);
	return 0;
}
