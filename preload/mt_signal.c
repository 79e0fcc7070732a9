/*
 * mt_signal: the trace's ending on a signal (mt_signal.h).  It must never
 * change how the program dies, nor, for the signals it hides, what the
 * program learns of their actions through sigaction() and signal().
 */
#include "mt_signal.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "mt_layout.h"

/* The signals whose default action ends the process; the first CRASHES
 * are shown to the program as they are, the rest are hidden. */
static const int ending[] = {
	SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL,
	SIGHUP, SIGINT, SIGQUIT, SIGTRAP, SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM,
	SIGTERM, SIGSTKFLT, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO,
	SIGPWR, SIGSYS,
};
#define CRASHES 5
#define NSIGS (sizeof(ending) / sizeof(ending[0]))

static int (*end_trace)(void);
/* The handler, and which signals end the process by default. */
static struct sigaction handler;
static unsigned char ends[NSIG];
/* What each ending signal's action was before the handler went in, at
 * its place in ending[] (slot[sig] - 1, 0: not an ending signal): 3.3
 * KiB, where an array by signal number spans 9.6 and put the 22 actions
 * a start writes on four pages. */
static struct sigaction actions[NSIGS] MT_LAYOUT_APART;
static unsigned char slot[NSIG];
#define previous(sig) actions[slot[sig] - 1]
/* 1 while the handler is in place and hidden from the program. */
static atomic_int hidden[NSIG];
static int (*real_action)(int, const struct sigaction *, struct sigaction *);

/* Whether act asks for the default action. */
static int wants_default(const struct sigaction *act)
{
	return !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL;
}

__thread int mt_signal_pending __attribute__((tls_model("initial-exec")));

static int is_crash(int sig)
{
	for (size_t i = 0; i < CRASHES; i++)
		if (ending[i] == sig)
			return 1;
	return 0;
}

/* Whether the calling process is the init of its pid namespace: the
 * kernel drops a default-action signal sent to it from inside (from
 * outside, only SIGKILL acts), so such a signal must not end its trace. */
static int is_init(void)
{
	return getpid() == 1;
}

static void on_signal(int sig, siginfo_t *info, void *uctx)
{
	int saved = errno;

	(void)uctx;
	/* A process that became an init after the handler went in (forked
	 * into a new pid namespace): what the program would not have died
	 * of, a signal other than a crash or a crash signal sent rather than
	 * raised by a fault, leaves it and its trace as they were. */
	if (is_init() && (!is_crash(sig) || info->si_code <= 0)) {
		if (!is_crash(sig)) {
			/* The default again: the kernel drops the next. */
			atomic_store(&hidden[sig], 0);
			real_action(sig, &previous(sig), NULL);
		}
		errno = saved;
		return;
	}
	if (end_trace() && !is_crash(sig)) {
		/* Inside the tracer: the thread ends its event, then
		 * raises the signal again on leaving. */
		mt_signal_pending = sig;
		errno = saved;
		return;
	}
	/* Die as the program would have: the action it had (the default)
	 * gets the same signal once this handler returns. */
	atomic_store(&hidden[sig], 0);
	real_action(sig, &previous(sig), NULL);
	errno = saved;
	raise(sig);
}

void mt_signal_raise_pending(void)
{
	int sig = mt_signal_pending, saved = errno;

	mt_signal_pending = 0;
	raise(sig);
	errno = saved;
}

void mt_signal_install(int (*on_end)(void),
		       int (*real)(int, const struct sigaction *, struct sigaction *))
{
	sigset_t all, was;
	int init;

	real_action = real;
	memset(&handler, 0, sizeof(handler));
	handler.sa_sigaction = on_signal;
	handler.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&handler.sa_mask);
	sigfillset(&all);
	init = is_init();
	/* One system call a signal, not three (a look, a getpid, the
	 * handler): the handler goes in and the action found comes out, and
	 * an action that was not the default goes straight back.  Every
	 * signal is blocked meanwhile, so none is delivered to a handler
	 * that stands for a moment where the program chose an action. */
	sigprocmask(SIG_SETMASK, &all, &was);
	for (size_t i = 0; i < NSIGS; i++) {
		int sig = ending[i];
		struct sigaction old;

		ends[sig] = 1;
		slot[sig] = (unsigned char)(i + 1);
		/* A pid namespace's init (the program exec'd by unshare -pf,
		 * a container's entrypoint) does not die of these: no
		 * handler, hidden or not, where the default does nothing. */
		if (i >= CRASHES && init)
			continue;
		if (real(sig, &handler, &old) < 0)
			continue;
		/* An action the program (or another preload) chose first
		 * is theirs to keep. */
		if (!wants_default(&old)) {
			real(sig, &old, NULL);
			continue;
		}
		previous(sig) = old;
		if (i >= CRASHES)
			atomic_store(&hidden[sig], 1);
	}
	sigprocmask(SIG_SETMASK, &was, NULL);
	end_trace = on_end;
}

int mt_signal_action(int sig, const struct sigaction *act, struct sigaction *old,
		     int (*real)(int, const struct sigaction *, struct sigaction *))
{
	struct sigaction shown;
	int rc;

	if (sig <= 0 || sig >= NSIG || !end_trace)
		return real(sig, act, old);
	if (act && ends[sig] && wants_default(act) && !(is_init() && !is_crash(sig))) {
		/* The default the program asks for is the handler, hidden:
		 * a program that ends itself by a signal after setting its
		 * default (Python after KeyboardInterrupt) ends the trace. */
		if (atomic_load(&hidden[sig]))
			shown = previous(sig);
		else if (real(sig, NULL, &shown) < 0)
			return -1;
		rc = real(sig, &handler, NULL);
		if (rc == 0) {
			/* Left as it is when it holds these bytes already:
			 * a shell puts the same default back after every
			 * child, and a write after a fork copies the page. */
			if (memcmp(&previous(sig), act, sizeof(*act)))
				previous(sig) = *act;
			atomic_store(&hidden[sig], 1);
			if (old)
				*old = shown;
		}
		return rc;
	}
	if (!atomic_load(&hidden[sig]))
		return real(sig, act, old);
	shown = previous(sig);
	rc = act ? real(sig, act, NULL) : 0;
	if (rc == 0 && act)
		atomic_store(&hidden[sig], 0); /* the program's action now */
	if (rc == 0 && old)
		*old = shown;
	return rc;
}

__sighandler_t mt_signal_set(int sig, __sighandler_t handler,
			     int (*real)(int, const struct sigaction *,
					 struct sigaction *),
			     __sighandler_t (*real_signal)(int, __sighandler_t))
{
	struct sigaction sa, old;

	/* Only where the handler is hidden, or goes in hidden: elsewhere the
	 * real signal() keeps what it knows (siginterrupt()'s choice). */
	if (sig <= 0 || sig >= NSIG || !end_trace ||
	    !(atomic_load(&hidden[sig]) || (ends[sig] && handler == SIG_DFL)))
		return real_signal(sig, handler);

	/* glibc's signal(): BSD semantics, the signal blocked in its own
	 * handler, interrupted calls restarted. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	if (sig > 0 && sig < NSIG && sigaddset(&sa.sa_mask, sig) < 0)
		return SIG_ERR;
	sa.sa_flags = SA_RESTART;
	if (mt_signal_action(sig, &sa, &old, real) < 0)
		return SIG_ERR;
	return old.sa_handler;
}
