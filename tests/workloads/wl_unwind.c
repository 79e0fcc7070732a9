/*
 * wl_unwind: stacks an unwinder must walk exactly, each a mode (argv[1]),
 * every allocation made at several depths so that consecutive stacks
 * share an outer part of changing length:
 *   longjmp      allocating frames left by longjmp, 2000 times;
 *   swapcontext  two coroutines on their own stacks allocating in turn;
 *   sigaltstack  allocations in a SIGUSR1 handler on an alternate stack
 *                (raised outside malloc), 500 times;
 *   threads      8 threads allocating at once;
 *   recurse      allocations at every depth of a recursion 200 deep;
 *   reframe      two callers, one with a deeper frame, called from one
 *                place, each calling the same function, which allocas
 *                so that the frame that allocates is at the same
 *                address both times: its return-address slot holds the
 *                same value there, and so do the slots the other
 *                caller's walk read further out (left on the stack);
 *                only its saved rbp differs; 2000 times, in turn.
 * Prints nothing; exits 0, 2 on a bad mode, 4 when reframe cannot put
 * the frame at the same address.
 */
#include <alloca.h>
#include <pthread.h>
#include <stdint.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

static volatile int sink;

/* Allocate at each of depth frames, then call at the deepest. */
static __attribute__((noinline)) void alloc_down(int depth, void (*at_bottom)(void))
{
	char *p = malloc(16 + (size_t)depth);

	p[0] = (char)depth;
	sink += p[0];
	if (depth > 0)
		alloc_down(depth - 1, at_bottom);
	else if (at_bottom)
		at_bottom();
	free(p);
}

static jmp_buf jump;

static __attribute__((noinline)) void jump_out(void)
{
	void *p = malloc(40);

	sink += p != NULL;
	free(p);
	longjmp(jump, 1);
}

static void mode_longjmp(void)
{
	for (volatile int i = 0; i < 2000; i++)
		if (!setjmp(jump))
			alloc_down(i % 17, jump_out);
}

static ucontext_t main_ctx, co_ctx[2];

static void coroutine(int which)
{
	for (int i = 0; i < 500; i++) {
		alloc_down((i + which) % 9, NULL);
		swapcontext(&co_ctx[which], &main_ctx);
	}
}

static void mode_swapcontext(void)
{
	static char stacks[2][256 * 1024];

	for (int c = 0; c < 2; c++) {
		getcontext(&co_ctx[c]);
		co_ctx[c].uc_stack.ss_sp = stacks[c];
		co_ctx[c].uc_stack.ss_size = sizeof(stacks[c]);
		co_ctx[c].uc_link = &main_ctx;
		makecontext(&co_ctx[c], (void (*)(void))coroutine, 1, c);
	}
	for (int i = 0; i < 501; i++)
		for (int c = 0; c < 2; c++) {
			alloc_down(i % 5, NULL);
			swapcontext(&main_ctx, &co_ctx[c]);
		}
}

static void on_usr1(int sig)
{
	(void)sig;
	alloc_down(6, NULL);
}

static void mode_sigaltstack(void)
{
	static char alt[256 * 1024];
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt), .ss_flags = 0 };
	struct sigaction sa;

	if (sigaltstack(&ss, NULL))
		exit(3);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		exit(3);
	for (int i = 0; i < 500; i++) {
		alloc_down(i % 7, NULL);
		raise(SIGUSR1);
	}
}

static void *thread_main(void *arg)
{
	for (int i = 0; i < 3000; i++)
		alloc_down((i + (int)(long)arg) % 13, NULL);
	return NULL;
}

static void mode_threads(void)
{
	pthread_t t[8];

	for (long i = 0; i < 8; i++)
		if (pthread_create(&t[i], NULL, thread_main, (void *)i))
			exit(3);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
}

static void mode_recurse(void)
{
	for (int i = 0; i < 20; i++)
		alloc_down(200, NULL);
}

static uintptr_t leaf_frame;

/* The frame that allocates: its address (it keeps a frame pointer, and
 * saves the caller's rbp) is where the caller's alloca put it. */
static __attribute__((noinline)) void leaf(void)
{
	void *p = malloc(24);

	leaf_frame = (uintptr_t)__builtin_frame_address(0);
	sink += p != NULL;
	free(p);
}

/* alloca keeps rbp as this frame's base: the rbp leaf saves is where
 * this frame began, and leaf's own frame is pad further down. */
static __attribute__((noinline)) void mid(size_t pad)
{
	volatile char *a = alloca(pad);

	a[0] = 1;
	leaf();
	sink += a[0];
}

static __attribute__((noinline)) void outer_shallow(size_t pad)
{
	mid(pad);
	sink++;
}

static __attribute__((noinline)) void outer_deep(size_t pad)
{
	volatile char big[512];

	big[0] = 1;
	mid(pad);
	sink += big[0];
}

/* Both callers called from one place, so that their own return
 * addresses are the same value in the same slot. */
static void call_outer(void (*outer)(size_t), size_t pad)
{
	void (*volatile call)(size_t) = outer;

	call(pad);
}

static void mode_reframe(void)
{
	uintptr_t want, deep;
	size_t pad;

	call_outer(outer_shallow, 1024);
	want = leaf_frame;
	call_outer(outer_deep, 1024);
	deep = leaf_frame;
	if (deep >= want || want - deep >= 1024)
		exit(4);
	pad = 1024 - (want - deep);
	call_outer(outer_deep, pad);
	if (leaf_frame != want)
		exit(4);
	/* One call site for both, as for call_outer's. */
	for (int i = 0; i < 4000; i++)
		call_outer(i & 1 ? outer_deep : outer_shallow, i & 1 ? pad : 1024);
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	if (!strcmp(m, "longjmp"))
		mode_longjmp();
	else if (!strcmp(m, "swapcontext"))
		mode_swapcontext();
	else if (!strcmp(m, "sigaltstack"))
		mode_sigaltstack();
	else if (!strcmp(m, "threads"))
		mode_threads();
	else if (!strcmp(m, "recurse"))
		mode_recurse();
	else if (!strcmp(m, "reframe"))
		mode_reframe();
	else
		return 2;
	return 0;
}
