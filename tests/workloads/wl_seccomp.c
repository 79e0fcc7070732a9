/*
 * wl_seccomp: a program that locks itself down.  It allocates (1,000
 * blocks of 111 bytes), prints a line, installs a strict seccomp
 * allowlist (no new privileges; every other system call kills the
 * process), allocates from call sites it has not used yet (1,000 blocks
 * of 555 bytes, from new frames), prints 100 lines into stdout's buffer
 * and exits 5: the buffer is written at exit.  Exits 77 with one line
 * when seccomp cannot be installed here.
 * Usage: wl_seccomp [thread | first | LIB].
 *
 * With "first", nothing is allocated before the lock-down (its line is
 * written with write(2), stdout is given a static buffer, which spares
 * stdio its fstat): the program's first allocation comes after it.
 *
 * With "thread", the calls a thread's start and end need are allowed too
 * (clone, clone3, set_robust_list, rseq: glibc's pthread_create and the
 * new thread's own set-up), and the allocations after the lock-down are
 * made in a new thread.  A first thread, started and joined before the
 * lock-down, lets glibc install its cancellation handler (rt_sigaction)
 * while it may, and malloc keeps one arena (glibc opens
 * /proc/sys/vm/overcommit_memory when it shrinks a thread's arena).
 *
 * With LIB, every other system call fails with EPERM instead, the calls a
 * dlopen needs are allowed too (openat, fstat, newfstatat, pread64,
 * close), and after the lock-down the program loads LIB and allocates
 * 4,444 bytes through its wl_strippable_run().
 *
 * The allowlist is what such a program needs bare (read, write, exit,
 * exit_group, brk, mmap, munmap, mprotect, madvise, rt_sigreturn,
 * rt_sigprocmask, futex, clock_gettime, gettid, getpid, and getrandom,
 * which glibc's malloc asks once at its first call): the tracer must need
 * no more.
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <malloc.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ALLOW(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

static __attribute__((noinline)) void *nest(int depth, size_t size)
{
	void *p = depth ? nest(depth - 1, size) : malloc(size);

	__asm__ volatile("" ::: "memory");
	return p;
}

static __attribute__((noinline)) void *after_a(size_t n) { return nest((int)(n % 7), 555); }
static __attribute__((noinline)) void *after_b(size_t n) { return after_a(n); }

static void *keep[2000];

static void *nothing(void *arg)
{
	return arg;
}

static void *after(void *arg)
{
	for (size_t i = 0; i < 1000; i++)
		keep[1000 + i] = i % 2 ? after_a(i) : after_b(i);
	return arg;
}

int main(int argc, char **argv)
{
	int thread = argc > 1 && !strcmp(argv[1], "thread");
	int first = argc > 1 && !strcmp(argv[1], "first");
	const char *lib = argc > 1 && !thread && !first ? argv[1] : NULL;
	unsigned deny = lib ? SECCOMP_RET_ERRNO | EPERM : SECCOMP_RET_KILL_PROCESS;
	unsigned load = lib ? SECCOMP_RET_ALLOW : deny;
	unsigned start = thread ? SECCOMP_RET_ALLOW : deny;
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		ALLOW(SYS_read), ALLOW(SYS_write), ALLOW(SYS_exit_group), ALLOW(SYS_exit),
		ALLOW(SYS_futex), ALLOW(SYS_brk), ALLOW(SYS_mmap), ALLOW(SYS_munmap),
		ALLOW(SYS_mprotect), ALLOW(SYS_madvise), ALLOW(SYS_rt_sigreturn),
		ALLOW(SYS_rt_sigprocmask), ALLOW(SYS_clock_gettime), ALLOW(SYS_gettid),
		ALLOW(SYS_getpid), ALLOW(SYS_getrandom),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_set_robust_list, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rseq, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, start),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_fstat, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_newfstatat, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pread64, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_close, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, load),
		BPF_STMT(BPF_RET | BPF_K, deny),
	};
	struct sock_fprog prog = { sizeof(filter) / sizeof(filter[0]), filter };
	void *(*run)(size_t);
	void *h;

	for (int i = 0; i < 1000 && !first; i++)
		keep[i] = nest(i % 3, 111);
	if (thread) {
		pthread_t t;

		mallopt(M_ARENA_MAX, 1);
		if (pthread_create(&t, NULL, nothing, NULL) || pthread_join(t, NULL))
			return 7;
	}
	if (first) {
		static char out[1 << 14];

		setvbuf(stdout, out, _IOFBF, sizeof(out));
		if (write(1, "locking down\n", 13) != 13)
			return 8;
	} else {
		printf("locking down\n");
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0)) {
		perror("seccomp");
		return 77;
	}
	if (thread) {
		pthread_t t;

		if (pthread_create(&t, NULL, after, NULL) || pthread_join(t, NULL))
			exit(7);
	} else {
		after(NULL);
	}
	if (lib) {
		h = dlopen(lib, RTLD_NOW);
		*(void **)&run = h ? dlsym(h, "wl_strippable_run") : NULL;
		if (!run) {
			printf("cannot load %s\n", lib);
			exit(6);
		}
		free(run(4444));
		printf("loaded\n");
	}
	for (int i = 0; i < 100; i++)
		printf("line %d\n", i);
	for (int i = 0; i < 2000; i++)
		free(keep[i]);
	exit(5);
}
