/*
 * mt_clock: the preload's clock (mt_clock.h).  It must never execute
 * RDTSC, itself or through the vDSO, in a thread that forbids it.
 */
#include "mt_clock.h"

#include <errno.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>

#include "mt_real.h"

#if defined(__x86_64__)
/* Whether the calling thread may execute RDTSC: 0 not known (not asked
 * yet, or asked before its last prctl(PR_SET_TSC)), 1 yes, -1 no. */
static __thread __attribute__((tls_model("initial-exec"))) int thread_tsc;

/*
 * A thread inherits its creator's setting, so while no thread of the
 * process has changed its own (every prctl(PR_SET_TSC) through libc is
 * seen), every thread has the answer the first thread got, and a new
 * thread takes it without asking: a program that has locked its system
 * calls down, prctl refused and fatal, may start threads.
 */
static _Atomic int process_tsc; /* the first answer, 1 or -1; 0: none yet */
static _Atomic int tsc_changed;

int mt_clock_thread_tsc_ok(void)
{
	if (__builtin_expect(!thread_tsc, 0)) {
		int how = 0, known = atomic_load(&process_tsc);
		long rc;

		if (known && !atomic_load(&tsc_changed)) {
			thread_tsc = known;
		} else {
			rc = mt_real_syscall6(SYS_prctl, PR_GET_TSC, (long)&how, 0, 0, 0, 0);
			thread_tsc = rc == 0 && how == PR_TSC_ENABLE ? 1 : -1;
			if (!known && !atomic_load(&tsc_changed))
				atomic_store(&process_tsc, thread_tsc);
		}
	}
	return thread_tsc > 0;
}

void mt_clock_thread_tsc_changed(void)
{
	atomic_store(&tsc_changed, 1);
	thread_tsc = 0;
}
#else
int mt_clock_thread_tsc_ok(void)
{
	return 0;
}

void mt_clock_thread_tsc_changed(void)
{
}
#endif

int mt_clock_thread_forbids_tsc(void)
{
#if defined(__x86_64__)
	return !mt_clock_thread_tsc_ok();
#else
	return 0;
#endif
}

static uint64_t read_clock(clockid_t id)
{
	struct timespec ts = { 0, 0 };

#if defined(__x86_64__)
	if (__builtin_expect(!mt_clock_thread_tsc_ok(), 0))
		mt_real_syscall6(SYS_clock_gettime, id, (long)&ts, 0, 0, 0, 0);
	else
#endif
	{
		int saved = errno;

		clock_gettime(id, &ts);
		errno = saved;
	}
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t mt_clock_now(void)
{
	return read_clock(CLOCK_MONOTONIC);
}

uint64_t mt_clock_realtime(void)
{
	return read_clock(CLOCK_REALTIME);
}
