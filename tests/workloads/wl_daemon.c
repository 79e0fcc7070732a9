/*
 * wl_daemon: a daemon's start.  It closes every descriptor
 * (close_range(0, ~0U, 0)), reopens 0 to 2 on /dev/null, opens its log
 * (DIR/log) and its data file (DIR/data), then works in new threads (new
 * stacks: new frames, and unwinds that reach a thread's first frame):
 * each allocates ROUNDS blocks of 777 bytes from nested calls, reads its
 * record back from the data file and writes what it read to the log.  The
 * files must hold what they hold bare; a read or write that fails is the
 * exit status.  Usage: wl_daemon DIR [THREADS [ROUNDS]].
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int log_fd, data_fd, rounds = 200;
static pthread_mutex_t io = PTHREAD_MUTEX_INITIALIZER;
static int failed;

static __attribute__((noinline)) void *nest(int depth)
{
	void *p = depth ? nest(depth - 1) : malloc(777);

	__asm__ volatile("" ::: "memory");
	return p;
}

static void *worker(void *arg)
{
	long id = (long)arg;
	char rec[32], line[64];

	for (int i = 0; i < rounds; i++) {
		free(nest(i % 13));
		if (i % 50)
			continue;
		pthread_mutex_lock(&io);
		if (pread(data_fd, rec, 16, id * 16) != 16)
			failed = failed ? failed : 10 + (errno & 31);
		rec[16] = '\0';
		snprintf(line, sizeof(line), "thread %ld round %d: %s\n", id, i, rec);
		if (write(log_fd, line, strlen(line)) != (ssize_t)strlen(line))
			failed = failed ? failed : 50 + (errno & 31);
		pthread_mutex_unlock(&io);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	char path[4096];
	int threads = argc > 2 ? atoi(argv[2]) : 4;

	if (argc < 2)
		return 64;
	if (argc > 3)
		rounds = atoi(argv[3]);
	free(nest(2));
	if (syscall(SYS_close_range, 0, ~0U, 0) < 0)
		return 3;
	for (int i = 0; i < 3; i++)
		if (open("/dev/null", O_RDWR) != i)
			return 4;
	snprintf(path, sizeof(path), "%s/log", argv[1]);
	log_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
	snprintf(path, sizeof(path), "%s/data", argv[1]);
	data_fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (log_fd != 3 || data_fd != 4)
		return 5;
	for (long i = 0; i < threads; i++) {
		char rec[32];

		snprintf(rec, sizeof(rec), "record %07ld\n", i % 10000000);
		if (write(data_fd, rec, 16) != 16)
			return 6;
	}
	for (long i = 0; i < threads; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, worker, (void *)i) || pthread_join(t, NULL))
			return 7;
	}
	if (write(log_fd, "done\n", 5) != 5)
		return 8;
	if (close(log_fd) || close(data_fd))
		return 9;
	return failed;
}
