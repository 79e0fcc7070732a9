/*
 * check_mem: unit tests of mt_mem: mt_mem_calloc_line(), its alignment,
 * accounting and failures, and the huge pages a large table asks for.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mt_test.h"
#include "../analyzer/base/mt_error.h"
#include "../analyzer/base/mt_mem.h"

/* mt_mem_calloc_line(): zeroed, on a cache line, one block for
 * mt_mem_outstanding(), failing like every mt_mem call, refusing a size
 * that overflows; mt_mem_free_line(NULL) does nothing. */
START_TEST(test_mem_calloc_line_is_zeroed_and_on_a_line)
{
	int64_t before = mt_mem_outstanding();
	/* Small ones from malloc's arenas (the last a large one glibc maps
	 * itself), then from MT_MEM_HUGE on mappings of their own: exactly
	 * 2 MiB, one byte more, and not a whole number of pages. */
	static const size_t sizes[][2] = { { 1, 1 }, { 3, 24 }, { 100, 64 },
					   { 1000, 7 }, { 0, 8 },
					   { (1 << 16) - 1, 32 },
					   { 1 << 16, 32 },
					   { (2 << 20) + 1, 1 },
					   { (3 << 18) + 1, 24 } };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned char *p = mt_mem_calloc_line(sizes[i][0], sizes[i][1]);
		size_t n = sizes[i][0] * sizes[i][1], j = 0;

		mt_quiet_ptr_nonnull(p);
		mt_quiet_uint_eq((uintptr_t)p % 64, 0);
		mt_quiet_int_eq(mt_mem_outstanding(), before + 1);
		/* One assertion, not one a byte: Check's cost a call. */
		while (j < n && !p[j])
			j++;
		mt_quiet(j == n, "byte %zu of %zu not zero", j, n);
		memset(p, 0xa5, n); /* all of it is the caller's */
		mt_mem_free_line(p);
		mt_quiet_int_eq(mt_mem_outstanding(), before);
	}
	mt_mem_fail_at(1, 0);
	mt_quiet_ptr_null(mt_mem_calloc_line(10, 10));
	mt_mem_fail_at(1, 0);
	mt_quiet_ptr_null(mt_mem_calloc_line(1 << 17, 32));
	mt_mem_fail_at(0, 0);
	mt_quiet_ptr_null(mt_mem_calloc_line(SIZE_MAX / 8, 16));
	mt_quiet_ptr_null(mt_mem_calloc_line(2, SIZE_MAX - 64));
	mt_mem_free_line(NULL);
	mt_quiet_int_eq(mt_mem_outstanding(), before);
}
END_TEST

/* The mode in /sys/kernel/mm/transparent_hugepage/enabled, the word in
 * brackets ("always", "madvise", "never"), or "" where there is none. */
static void thp_mode(char *mode, size_t size)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	char line[256], *open, *close;

	mode[0] = '\0';
	if (!f)
		return;
	if (fgets(line, sizeof(line), f) && (open = strchr(line, '[')) &&
	    (close = strchr(open, ']')) && (size_t)(close - open) < size) {
		memcpy(mode, open + 1, (size_t)(close - open - 1));
		mode[close - open - 1] = '\0';
	}
	fclose(f);
}

/* Whether the mapping that holds p has the flag (two letters, "hg" for
 * MADV_HUGEPAGE) in its smaps VmFlags line: 1 or 0, or -1 when no mapping
 * holds p or it has no VmFlags line; -2 when smaps is unreadable or has
 * no VmFlags line at all (p NULL asks only that). */
static int vm_flag(const void *p, const char *flag)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[4096];
	int in = 0, got = -1, any = 0;

	if (!f)
		return -2;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (!strncmp(line, "VmFlags:", 8))
			any = 1;
		if (!p && any)
			break;
		if (!p)
			continue;
		if (!in && sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
		} else if (in && !strncmp(line, "VmFlags:", 8)) {
			char *w = strtok(line + 8, " \n");

			got = 0;
			for (; w; w = strtok(NULL, " \n"))
				if (!strcmp(w, flag))
					got = 1;
			break;
		}
	}
	fclose(f);
	return any ? got : -2;
}

/* From MT_MEM_HUGE bytes on, a table starts on a 2 MiB boundary, and
 * its mapping asks for huge pages: where the kernel has
 * THP at all, smaps shows the mapping's "hg" flag (MADV_HUGEPAGE), in
 * every mode. */
START_TEST(test_mem_calloc_line_of_a_large_table_asks_for_huge_pages)
{
	char mode[32];
	unsigned char *big = mt_mem_calloc_line(1 << 17, 32); /* 4 MiB */

	mt_quiet_ptr_nonnull(big);
	mt_quiet_uint_eq((uintptr_t)big % (2u << 20), 0);
	thp_mode(mode, sizeof(mode));
	if (!mode[0]) {
		mt_mem_free_line(big);
		MT_TEST_SKIP("no transparent huge pages to ask for "
			     "(/sys/kernel/mm/transparent_hugepage/enabled: %s)",
			     access("/sys/kernel/mm/transparent_hugepage/enabled",
				    F_OK) ? strerror(errno) : "no [mode]");
		return;
	}
	if (vm_flag(NULL, "hg") == -2) {
		mt_mem_free_line(big);
		MT_TEST_SKIP("cannot see a mapping's flags (/proc/self/smaps: "
			     "no VmFlags lines)");
		return;
	}
	{
		int hg = vm_flag(big, "hg");

		mt_quiet(hg == 1, "the 4 MiB table's mapping: hg flag %d (THP %s)",
			 hg, mode);
	}
	mt_mem_free_line(big);
}
END_TEST

/* Pages of [p, p + len) the process has in memory, by mincore(). */
static size_t resident_pages(const unsigned char *p, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = 0;
	uintptr_t start = (uintptr_t)p & ~(uintptr_t)(page - 1);
	size_t pages = ((uintptr_t)p + len - start + page - 1) / page;
	unsigned char *vec = malloc(pages);

	mt_quiet_ptr_nonnull(vec);
	mt_quiet_int_eq(mincore((void *)start, pages * page, vec), 0);
	for (size_t i = 0; i < pages; i++)
		n += vec[i] & 1;
	free(vec);
	return n;
}

/* A table copied out in order gives back what is behind the copy: the
 * whole huge pages of a mapped table below done go, the first among
 * them, and read as zeroes; what is above stays as it was; a table from
 * malloc keeps everything.  Freed as any table. */
START_TEST(test_mem_discard_line_gives_back_whole_pages_below_done)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), mib2 = 2u << 20;
	size_t bytes = 4 * mib2, done = 3 * mib2 + 100;
	unsigned char *big = mt_mem_calloc_line(bytes / 32, 32); /* 8 MiB */
	unsigned char *small = mt_mem_calloc_line(1024, 32);

	mt_quiet_ptr_nonnull(big);
	mt_quiet_ptr_nonnull(small);
	memset(big, 0xa5, bytes);
	memset(small, 0x5a, 1024 * 32);
	mt_mem_discard_line(big, 0, done);
	mt_mem_discard_line(small, 0, 1024 * 32);
	/* big starts on a huge page: its first three, bytes [0, 6 MiB) of
	 * the table, go; the fourth, which done is in, stays. */
	mt_quiet_uint_eq(resident_pages(big, 3 * mib2), 0);
	mt_quiet_uint_eq(resident_pages(big + 3 * mib2, mib2), mib2 / page);
	for (size_t i = 0; i < 3 * mib2; i += page)
		mt_quiet_uint_eq(big[i], 0);
	for (size_t i = 3 * mib2; i < bytes; i++)
		mt_quiet_uint_eq(big[i], 0xa5);
	for (size_t i = 0; i < 1024 * 32; i++)
		mt_quiet_uint_eq(small[i], 0x5a);
	/* Again over the same range: nothing more goes, and the table is
	 * freed as any (its words survived its first page). */
	mt_mem_discard_line(big, 0, done);
	mt_quiet_uint_eq(big[bytes - 1], 0xa5);
	mt_mem_free_line(big);
	mt_mem_free_line(small);
}
END_TEST

/* mt_mem_populate_line() says how far the table is ready: to the end of
 * the huge page to falls in, for a mapped table (whatever the kernel
 * makes of the advice), and to itself, for one from malloc; nothing past
 * the table's end.  The table reads as zeroes either way. */
START_TEST(test_mem_populate_line_says_how_far_the_table_is_ready)
{
	size_t mib2 = 2u << 20, bytes = 3 * mib2;
	unsigned char *big = mt_mem_calloc_line(bytes / 16, 16); /* 6 MiB */
	unsigned char *small = mt_mem_calloc_line(1024, 16);

	mt_quiet_ptr_nonnull(big);
	mt_quiet_ptr_nonnull(small);
	mt_quiet_uint_eq(mt_mem_populate_line(big, 0, 100), mib2);
	mt_quiet_uint_eq(mt_mem_populate_line(big, mib2, mib2 + 1), 2 * mib2);
	mt_quiet_uint_eq(mt_mem_populate_line(big, 2 * mib2, bytes), bytes);
	mt_quiet_uint_eq(mt_mem_populate_line(big, 100, 100), 100);
	mt_quiet_uint_eq(mt_mem_populate_line(small, 0, 100), 100);
	for (size_t i = 0; i < bytes; i += 4096)
		mt_quiet_uint_eq(big[i], 0);
	mt_mem_free_line(big);
	mt_mem_free_line(small);
}
END_TEST

Suite *mt_suite_mem(void)
{
	Suite *s = suite_create("mem");
	TCase *tc = tcase_create("mem");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_mem_calloc_line_is_zeroed_and_on_a_line);
	tcase_add_test(
		tc, test_mem_calloc_line_of_a_large_table_asks_for_huge_pages);
	tcase_add_test(tc, test_mem_discard_line_gives_back_whole_pages_below_done);
	tcase_add_test(tc, test_mem_populate_line_says_how_far_the_table_is_ready);
	suite_add_tcase(s, tc);
	return s;
}
