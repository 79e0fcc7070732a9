/*
 * wl_forkargs: a parent that changes what /proc/self/cmdline shows, or
 * what it may read, then forks one child, which allocates 4,321 bytes
 * and exits; the parent waits for it and exits 0.
 *
 *   wl_forkargs same ARG...       changes nothing
 *   wl_forkargs rewritten ARG...  writes 'X' over every byte of its last
 *                                 argument, in place (the NULs stay)
 *   wl_forkargs retitled ARG...   writes 'T' over its whole argument area,
 *                                 the last NUL too (as setproctitle does),
 *                                 then prints /proc/self/cmdline's bytes
 *                                 as it reads them, each NUL as a newline
 *   wl_forkargs moved ARG...      points the kernel's argument area at
 *                                 "moved\0away\0" in a page of its own
 *                                 (prctl(PR_SET_MM, PR_SET_MM_MAP)); exits
 *                                 77 with one line when it may not
 *   wl_forkargs sealed ARG...     installs a seccomp filter under which
 *                                 readlink, readlinkat, open, openat and
 *                                 openat2 fail with EPERM (every other
 *                                 call is allowed); exits 77 with one
 *                                 line when seccomp cannot be installed
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/prctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define DENY(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

static int seal(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		DENY(SYS_readlink),
		DENY(SYS_readlinkat),
		DENY(SYS_open),
		DENY(SYS_openat),
		DENY(SYS_openat2),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(code) / sizeof(code[0]), code };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		return -1;
	return 0;
}

/*
 * The kernel's argument area pointed at "moved\0away\0" in a page of its
 * own (anonymous: /proc reads no file-backed memory for it), the rest of
 * the map as /proc/self/stat gives it: PR_SET_MM_MAP, which needs no
 * capability when the exe stays (CONFIG_CHECKPOINT_RESTORE).
 */
static int move_args(void)
{
	static const char moved[] = "moved\0away";
	unsigned long f[64] = { 0 };
	struct prctl_mm_map m;
	char buf[4096], *p, *save = NULL;
	ssize_t n;
	int fd, i = 3; /* the field after the command's name is the third */
	char *area;

	fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p)
		return -1;
	for (p = strtok_r(p + 2, " ", &save); p && i < 64; p = strtok_r(NULL, " ", &save))
		f[i++] = strtoul(p, NULL, 10);
	if (i <= 51)
		return -1;
	area = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		return -1;
	memcpy(area, moved, sizeof(moved));
	memset(&m, 0, sizeof(m));
	m.start_code = f[26];
	m.end_code = f[27];
	m.start_stack = f[28];
	m.start_data = f[45];
	m.end_data = f[46];
	m.start_brk = f[47];
	m.brk = (unsigned long)sbrk(0);
	m.arg_start = (unsigned long)area;
	m.arg_end = (unsigned long)area + sizeof(moved);
	m.env_start = f[50];
	m.env_end = f[51];
	m.exe_fd = (unsigned)-1;
	return prctl(PR_SET_MM, PR_SET_MM_MAP, &m, sizeof(m), 0);
}

/* /proc/self/cmdline on stdout, each NUL a newline. */
static void print_cmdline(void)
{
	char buf[8192];
	ssize_t n, have = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		perror("wl_forkargs: /proc/self/cmdline");
		exit(1);
	}
	while ((n = read(fd, buf + have, sizeof(buf) - (size_t)have)) > 0)
		have += n;
	close(fd);
	for (ssize_t i = 0; i < have; i++)
		if (!buf[i])
			buf[i] = '\n';
	fwrite(buf, 1, (size_t)have, stdout);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	pid_t pid;
	int status;

	if (argc < 3) {
		fprintf(stderr, "usage: wl_forkargs same|rewritten|retitled|moved|sealed ARG...\n");
		return 2;
	}
	if (!strcmp(mode, "rewritten")) {
		memset(argv[argc - 1], 'X', strlen(argv[argc - 1]));
	} else if (!strcmp(mode, "retitled")) {
		char *end = argv[argc - 1] + strlen(argv[argc - 1]) + 1;

		memset(argv[0], 'T', (size_t)(end - argv[0]));
		print_cmdline();
	} else if (!strcmp(mode, "moved")) {
		if (move_args() < 0) {
			printf("skip: cannot move the argument area here: %s\n", strerror(errno));
			return 77;
		}
	} else if (!strcmp(mode, "sealed")) {
		if (seal() < 0) {
			printf("skip: cannot install a seccomp filter here: %s\n", strerror(errno));
			return 77;
		}
	} else if (strcmp(mode, "same")) {
		fprintf(stderr, "wl_forkargs: unknown mode '%s'\n", mode);
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("wl_forkargs: fork");
		return 1;
	}
	if (pid == 0) {
		void *p = malloc(4321);

		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "wl_forkargs: the child did not exit 0\n");
		return 1;
	}
	return 0;
}
