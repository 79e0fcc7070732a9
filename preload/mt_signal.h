/*
 * mt_signal: the handler that closes the trace when a signal ends the
 * process, and what the program sees of it.
 *
 * At start, every signal whose action is the default and whose default
 * ends the process gets a handler that calls the caller's on_end (which
 * records trace.stop and waits a while for the collector to finish the
 * trace), puts the action the program had
 * back, and raises the signal again, so the program dies of it as it would
 * have.  Two kinds:
 *
 * - crashes (SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL): the program sees
 *   the handler as it is, so that a handler of its own that chains to the
 *   one it found (Python's faulthandler, crash reporters) still lets the
 *   trace end;
 * - every other signal whose default ends the process (SIGTERM, SIGINT,
 *   SIGHUP, SIGPIPE, ...): programs decide by whether their action is the
 *   default (Python makes SIGINT raise KeyboardInterrupt only then), so
 *   the sigaction() and signal() hooks show the program the default while
 *   the handler is in place, and a disposition the program sets replaces
 *   it.  A program that asks the kernel directly (a raw rt_sigaction)
 *   sees the handler.
 *
 * When the program sets the default action of any of them, the handler
 * goes in instead, hidden: a program that ends itself by a signal after
 * putting its default back (Python after an unhandled KeyboardInterrupt)
 * still ends the trace.
 *
 * A signal ignored or handled when the preload starts is left alone.  A
 * handler the program sets later replaces the preload's.  The init of a
 * pid namespace (pid 1) gets no handler for the non-crash signals: the
 * kernel drops them there, so they must not end its trace; the handler
 * itself leaves the trace alone for them, and for a crash signal that was
 * sent rather than raised by a fault, in a process that became pid 1
 * after it went in.  Never allocates;
 * the handler is async-signal-safe as far as on_end is.
 */
#ifndef MT_SIGNAL_H
#define MT_SIGNAL_H

#include <signal.h>

/*
 * Install the handler (once, at start), with real the real sigaction.
 * on_end runs in the handler, on the thread that got the signal, before
 * the program dies of it; it returns 1 when that thread cannot end the
 * trace now (it is inside the tracer, perhaps holding its lock).  A crash
 * then dies without the stop; any other signal is held
 * (mt_signal_pending) and raised again by mt_signal_raise_pending() when
 * the thread leaves the tracer, so the trace ends all the same.
 */
void mt_signal_install(int (*on_end)(void),
		       int (*real)(int, const struct sigaction *, struct sigaction *));

/* The signal the calling thread holds until it leaves the tracer, or 0. */
extern __thread int mt_signal_pending __attribute__((tls_model("initial-exec")));

/* Raise the held signal again (the tracer's guard calls it on leaving). */
void mt_signal_raise_pending(void);

/* sigaction(2) as the program sees it, over real, the real sigaction. */
int mt_signal_action(int sig, const struct sigaction *act, struct sigaction *old,
		     int (*real)(int, const struct sigaction *, struct sigaction *));

/* signal(3) (glibc's, BSD semantics) as the program sees it, over the
 * real sigaction and signal. */
__sighandler_t mt_signal_set(int sig, __sighandler_t handler,
			     int (*real)(int, const struct sigaction *,
					 struct sigaction *),
			     __sighandler_t (*real_signal)(int, __sighandler_t));

#endif
