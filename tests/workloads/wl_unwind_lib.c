/*
 * wl_unwind_lib: when the tracer opens libunwind (preload/mt_unwind_lib.h).
 * Each mode (argv[1]) allocates from ordinary frames (stacks the fast
 * walker takes), then:
 *   plain     nothing more;
 *   signal    allocates 20 blocks of 333 bytes in a SIGUSR1 handler on an
 *             alternate stack (a stack the fast walker leaves to
 *             libunwind: its first need comes inside the handler);
 *   threads   4 threads, one after another, each allocating so in a
 *             SIGUSR1 handler it raises in itself (glibc gives each
 *             thread that calls into libunwind a block of libunwind's
 *             thread-local storage, freed when the thread is done);
 *             with N (argv[2]), N threads, each handler allocating one
 *             block of 333 bytes;
 *   forks     a thread forks 40 children one after another, each of
 *             which allocates in its own SIGUSR1 handler and exits, while
 *             the main thread allocates in its handler: a fork may come
 *             while the tracer opens libunwind for the main thread;
 *   dlopen    loads LIB (argv[2]) with dlopen;
 *   seccomp   installs a seccomp filter that refuses (EPERM) every call
 *             but those the program needs bare, then allocates in the
 *             handler as signal does: a dlopen after the filter would
 *             fail.
 * Then it prints "libunwind mapped" or "libunwind absent", from the
 * loader's own list of objects, and exits 0; 2 on a bad mode, 3 when LIB
 * cannot be loaded, 5 when a thread cannot be made, 6 when a child
 * failed, 77 (one line) when seccomp cannot be installed here.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define ALLOW(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

static void *keep[64];
static volatile int sink;
/* The blocks each SIGUSR1 handler allocates. */
static int per_signal = 20;

static __attribute__((noinline)) void *nest(int depth, size_t size)
{
	void *p = depth ? nest(depth - 1, size) : malloc(size);

	__asm__ volatile("" ::: "memory");
	return p;
}

static __attribute__((noinline)) void on_usr1(int sig)
{
	(void)sig;
	for (int i = 0; i < per_signal; i++) {
		keep[32 + i] = nest(i % 3, 333);
		sink += keep[32 + i] != NULL;
	}
}

static void *raise_in_self(void *arg)
{
	pthread_kill(pthread_self(), SIGUSR1);
	return arg;
}

static void *fork_children(void *arg)
{
	for (int i = 0; i < 40; i++) {
		int status;
		pid_t pid = fork();

		if (pid < 0)
			return (void *)1;
		if (pid == 0) {
			raise(SIGUSR1);
			_exit(0);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			return (void *)1;
	}
	return arg;
}

static int found_libunwind(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *slash = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;

	(void)size;
	if (slash && !strncmp(slash + 1, "libunwind", 9))
		*(int *)arg = 1;
	return 0;
}

static int lock_down(void)
{
	const unsigned deny = SECCOMP_RET_ERRNO | EPERM;
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		ALLOW(SYS_read), ALLOW(SYS_write), ALLOW(SYS_exit_group), ALLOW(SYS_exit),
		ALLOW(SYS_futex), ALLOW(SYS_brk), ALLOW(SYS_mmap), ALLOW(SYS_munmap),
		ALLOW(SYS_mprotect), ALLOW(SYS_madvise), ALLOW(SYS_rt_sigreturn),
		ALLOW(SYS_rt_sigprocmask), ALLOW(SYS_clock_gettime), ALLOW(SYS_gettid),
		ALLOW(SYS_getpid), ALLOW(SYS_getrandom), ALLOW(SYS_tgkill),
		ALLOW(SYS_newfstatat), ALLOW(SYS_fstat),
		BPF_STMT(BPF_RET | BPF_K, deny),
	};
	struct sock_fprog prog = { sizeof(filter) / sizeof(filter[0]), filter };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0)) {
		perror("seccomp");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	static char alt[1 << 16];
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) };
	struct sigaction sa;
	int mapped = 0;

	for (int i = 0; i < 32; i++)
		keep[i] = nest(i % 4, 111);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK;
	if (sigaltstack(&ss, NULL) || sigaction(SIGUSR1, &sa, NULL))
		return 4;
	if (!strcmp(mode, "signal")) {
		raise(SIGUSR1);
	} else if (!strcmp(mode, "threads")) {
		int threads = argc > 2 ? atoi(argv[2]) : 4;

		if (argc > 2)
			per_signal = 1;
		for (int i = 0; i < threads; i++) {
			pthread_t t;

			if (pthread_create(&t, NULL, raise_in_self, NULL) || pthread_join(t, NULL))
				return 5;
		}
	} else if (!strcmp(mode, "forks")) {
		pthread_t t;
		void *failed;

		if (pthread_create(&t, NULL, fork_children, NULL))
			return 5;
		raise(SIGUSR1);
		if (pthread_join(t, &failed) || failed)
			return 6;
	} else if (!strcmp(mode, "dlopen")) {
		if (argc < 3 || !dlopen(argv[2], RTLD_NOW))
			return 3;
	} else if (!strcmp(mode, "seccomp")) {
		/* stdout's buffer is made now: its first use asks fstat. */
		printf("locking down\n");
		if (lock_down() < 0)
			return 77;
		raise(SIGUSR1);
	} else if (strcmp(mode, "plain")) {
		return 2;
	}
	dl_iterate_phdr(found_libunwind, &mapped);
	printf("libunwind %s\n", mapped ? "mapped" : "absent");
	return 0;
}
