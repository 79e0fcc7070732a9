/*
 * mt_unwind_sys: libunwind's system calls, routed to the tracer's own.
 *
 * libunwind (1.6, linked dynamically: libunwind.so.8) checks that memory
 * is readable before it reads a frame it is unsure of by writing a byte of
 * it into a pipe it opens in the process (pipe2, then read and
 * syscall(SYS_write) on it, close and pipe2 again when a read fails), and
 * asks mincore or msync first.  A pipe in the program's table moves the
 * program's descriptor numbers, and once the program closes and reopens
 * its descriptors libunwind reads, writes and closes the program's own
 * files; read is a cancellation point, and mincore and msync are system
 * calls a locked-down program may refuse.
 *
 * mt_unwind_sys_install() points libunwind's GOT entries for pipe2, read,
 * close, syscall, mincore, msync, open, fstat and mmap at functions of
 * this module: pipe2
 * hands out two descriptor numbers that no descriptor can have; a read of
 * one finds nothing (EAGAIN), a close of one does nothing, a write of a
 * byte to the other, mincore and msync answer whether the pages are
 * readable with a system call that needs no descriptor and changes
 * nothing (rt_sigprocmask with an invalid how: the kernel copies the set,
 * so EFAULT means unreadable).  To name a frame itself (a module the
 * tracer cannot read) libunwind opens /proc/PID/maps and the module's
 * file: open reads the file whole in a child with a descriptor table of
 * its own (mt_nofd) and hands out a number above any the kernel gives,
 * which read, fstat, mmap and close know.  Anything else passes through
 * as a raw system call, never a cancellation point.  It must never call a hooked
 * or cancellable libc function, nor leave a page's protection changed.
 */
#ifndef MT_UNWIND_SYS_H
#define MT_UNWIND_SYS_H

#include <stddef.h>

/* Route libunwind's calls (once; later calls give the first answer).
 * Returns 0, or -1 when libunwind's objects or their GOT entries cannot
 * be found or written: the caller must not unwind then. */
int mt_unwind_sys_install(void);

/* Whether the len bytes from addr lie in readable pages (one system call
 * per page, no descriptor, no side effect). */
int mt_unwind_sys_readable(const void *addr, size_t len);

/* How many GOT entries were routed, for tests. */
int mt_unwind_sys_routed(void);

#endif
