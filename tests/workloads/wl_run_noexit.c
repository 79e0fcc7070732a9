/*
 * wl_run_noexit: succeeds (status 0) yet leaves a caveated trace: two
 * allocations, then the exit_group system call made raw, which no hook
 * sees and which runs no destructor, so nothing writes trace.stop and the
 * trace is missing_stop_event.  memtrace-run --strict must fail on it.
 */
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	((char *)malloc(321))[0] = 1;
	((char *)malloc(321))[0] = 1;
	__asm__ volatile("syscall" : : "a"(SYS_exit_group), "D"(0) : "rcx", "r11", "memory");
	return 1;
}
