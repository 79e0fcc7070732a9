/*
 * check_fds: the tracer holds no descriptor of the program's.  Whatever the program closes, reopens or counts, its descriptor numbers and what it reads and writes through them are what they are bare.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <unistd.h>

#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "../preload/mt_child_stack.h"
#include "../preload/mt_unwind_sys.h"
#include "mt_test.h"
#include "mt_test_trace.h"

/* Bare, then traced: the first open() and /proc/self/fd after the first
 * allocations (libunwind's first unwinds) must be the same. */
START_TEST(test_a_traced_program_gets_the_descriptor_numbers_it_gets_bare)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *prog = mt_test_workload("wl_fds"), *status;
	char *argv[] = { prog, NULL };
	mt_test_run_t bare, traced;

	mt_test_run(&bare, argv, NULL);
	mt_test_run_traced(&traced, argv, trace, NULL);
	ck_assert_int_eq(bare.status, 0);
	ck_assert_int_eq(traced.status, 0);
	ck_assert_str_eq(traced.err, "");
	ck_assert_str_eq(traced.out, bare.out);
	status = mt_test_check_status(trace);
	ck_assert_str_eq(status, "complete");
	free(status);
	mt_test_run_release(&bare);
	mt_test_run_release(&traced);
	free(prog);
	free(trace);
}
END_TEST

/* The daemon of wl_daemon.c, bare and traced into a directory each: the
 * same exit status (0: every read and write of its own worked), the same
 * log and data files, and every allocation in a complete trace. */
START_TEST(test_a_daemon_that_closes_every_descriptor_keeps_its_files)
{
	char *dir = mt_test_scratch(), *trace = mt_test_path(dir, "t.jsonl");
	char *bare_dir = mt_test_path(dir, "bare"), *traced_dir = mt_test_path(dir, "traced");
	char *prog = mt_test_workload("wl_daemon"), *status;
	char *bare_argv[] = { prog, bare_dir, "4", "400", NULL };
	char *traced_argv[] = { prog, traced_dir, "4", "400", NULL };
	const char *files[] = { "log", "data" };
	mt_test_run_t bare, traced;

	ck_assert_int_eq(mkdir(bare_dir, 0700), 0);
	ck_assert_int_eq(mkdir(traced_dir, 0700), 0);
	mt_test_run(&bare, bare_argv, NULL);
	mt_test_run_traced(&traced, traced_argv, trace, NULL);
	ck_assert_int_eq(bare.status, 0);
	ck_assert_int_eq(traced.status, 0);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *b = mt_test_path(bare_dir, files[i]), *t = mt_test_path(traced_dir, files[i]);
		size_t blen, tlen;
		char *bdata = mt_test_read(b, &blen), *tdata = mt_test_read(t, &tlen);

		ck_assert_ptr_nonnull(bdata);
		ck_assert_ptr_nonnull(tdata);
		ck_assert_msg(blen == tlen && !memcmp(bdata, tdata, blen),
			      "%s differs: bare\n%.*s\ntraced\n%.*s", files[i], (int)blen,
			      bdata, (int)tlen, tdata);
		free(bdata);
		free(tdata);
		free(b);
		free(t);
	}
	status = mt_test_check_status(trace);
	ck_assert_str_eq(status, "complete");
	free(status);
	ck_assert_int_eq(mt_test_trace_count(trace, "alloc", 777), 4 * 400 + 1);
	mt_test_run_release(&bare);
	mt_test_run_release(&traced);
	free(prog);
	free(bare_dir);
	free(traced_dir);
	free(trace);
}
END_TEST

/* The check that replaces libunwind's pipe: rt_sigprocmask with an
 * invalid how copies the set first, so on this kernel EFAULT tells an
 * unreadable page and nothing else changes (the mask stays as it was). */
START_TEST(test_memory_is_validated_without_a_descriptor)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *m = mmap(NULL, (size_t)(3 * page), PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	sigset_t before, after;
	int local = 1;

	ck_assert_ptr_ne(m, MAP_FAILED);
	ck_assert_int_eq(mprotect(m + page, (size_t)page, PROT_NONE), 0);
	ck_assert_int_eq(munmap(m + 2 * page, (size_t)page), 0);
	memset(&before, 0, sizeof(before));
	memset(&after, 0, sizeof(after));
	ck_assert_int_eq(sigprocmask(SIG_SETMASK, NULL, &before), 0);
	ck_assert_int_eq(mt_unwind_sys_readable(&local, sizeof(local)), 1);
	ck_assert_int_eq(mt_unwind_sys_readable(m, 1), 1);
	ck_assert_int_eq(mt_unwind_sys_readable(m + page - 1, 1), 1);
	ck_assert_int_eq(mt_unwind_sys_readable(m + page - 1, 2), 0);
	ck_assert_int_eq(mt_unwind_sys_readable(m + page, 1), 0);
	ck_assert_int_eq(mt_unwind_sys_readable(m + 2 * page, 8), 0);
	ck_assert_int_eq(mt_unwind_sys_readable(NULL, 1), 0);
	ck_assert_int_eq(sigprocmask(SIG_SETMASK, NULL, &after), 0);
	ck_assert(!memcmp(&before, &after, sizeof(before)));
	/* Installed, libunwind's pipe and memory checks are routed. */
	ck_assert_int_eq(mt_unwind_sys_install(), 0);
	ck_assert_int_ge(mt_unwind_sys_routed(), 3);
	munmap(m, (size_t)page);
	munmap(m + page, (size_t)page);
}
END_TEST

/* What libunwind's own get_proc_name says of ip. */
static void libunwind_names(uint64_t ip, char *symbol, size_t cap, uint64_t *off)
{
	unw_accessors_t *acc = unw_get_accessors(unw_local_addr_space);
	unw_word_t o = 0;

	symbol[0] = '\0';
	ck_assert_int_eq(acc->get_proc_name(unw_local_addr_space, (unw_word_t)ip, symbol,
					    cap, &o, NULL), 0);
	*off = o;
}

/* libunwind names a frame itself (the tracer's fallback) by opening the
 * maps and the module's file: routed, it reads them in a child of its
 * own, and names what it named before. */
START_TEST(test_libunwind_names_frames_the_same_when_its_files_are_read_elsewhere)
{
	char before[256], after[256];
	uint64_t ip = (uint64_t)(uintptr_t)&printf + 3, off_before, off_after;
	int fd;

	libunwind_names(ip, before, sizeof(before), &off_before);
	ck_assert_int_eq(mt_unwind_sys_install(), 0);
	libunwind_names(ip, after, sizeof(after), &off_after);
	ck_assert_str_eq(after, before);
	ck_assert_uint_eq(off_after, off_before);
	/* Nothing was left open. */
	fd = open("/dev/null", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	close(fd);
}
END_TEST

/* A frame that never returns: the child ends inside it, as the
 * preload's children end in exit or exec. */
static volatile char *escaped;

static int child_ends_in_a_frame(void *arg)
{
	volatile char frame[40];

	escaped = frame;
	frame[0] = *(char *)arg;
	syscall(SYS_exit, 0);
	return frame[0];
}

/* The preload's clone(CLONE_VM) children leave frames on their stacks
 * that never end; whatever is mapped at that address next must be whole
 * memory, every byte writable (under ASan the frames' redzones would
 * otherwise stay poisoned and the next mapping's first write abort as a
 * stack overflow). */
START_TEST(test_a_child_stack_leaves_nothing_behind_for_the_next_mapping)
{
	const size_t len = 64u << 10;
	long stack = mt_child_stack_map(len);
	char arg = 7;
	volatile long *m;
	long sum = 0;
	pid_t pid;
	int st;

	ck_assert(stack > 0 || stack < -4095);
	pid = clone(child_ends_in_a_frame, (char *)stack + len, CLONE_VM | CLONE_VFORK, &arg);
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(waitpid(pid, &st, __WALL), pid);
	mt_child_stack_unmap(stack, len);
	m = mmap((void *)stack, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (m != (void *)stack) {
		printf("skip: this kernel did not map the old stack's address again\n");
		if (m != MAP_FAILED)
			munmap((void *)m, len);
		return;
	}
	for (size_t i = 0; i < len / sizeof(long); i++)
		m[i] = (long)i;
	for (size_t i = 0; i < len / sizeof(long); i++)
		sum += m[i];
	ck_assert_int_eq(sum, (long)((len / sizeof(long)) * (len / sizeof(long) - 1) / 2));
	munmap((void *)m, len);
}
END_TEST

Suite *mt_suite_fds(void)
{
	Suite *s = suite_create("fds");
	TCase *tc = tcase_create("descriptors");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_memory_is_validated_without_a_descriptor);
	tcase_add_test(tc, test_libunwind_names_frames_the_same_when_its_files_are_read_elsewhere);
	tcase_add_test(tc, test_a_traced_program_gets_the_descriptor_numbers_it_gets_bare);
	tcase_add_test(tc, test_a_daemon_that_closes_every_descriptor_keeps_its_files);
	tcase_add_test(tc, test_a_child_stack_leaves_nothing_behind_for_the_next_mapping);
	suite_add_tcase(s, tc);
	return s;
}
