/*
 * mt_exe: the path of the process's executable, as /proc/self/exe names
 * it, for a trace.start.
 *
 * A process's first look under /proc/self makes the kernel build its
 * /proc entries, and its exit takes them down: 35 to 57 us of a short
 * process's life (bench/mt_pagecost.c, proc_self), as much as the rest of
 * a traced /bin/true's start.  So the path is found, where it can be,
 * from the name the image was exec'd by (AT_EXECFN) made canonical, as
 * the kernel's d_path of the exe would be, with readlink() on each of its
 * components, and taken only when that file begins with the image's own
 * ELF header and program headers, as mapped: a script's name (the exe is
 * its interpreter), a name that no longer leads to the file, or anything
 * unusual falls back to reading /proc/self/exe.
 *
 * It must never allocate, call a function of libc that sets errno or
 * takes a lock, or keep a descriptor: system calls are mt_real's, and the
 * file is read through mt_nofd.
 */
#ifndef MT_EXE_H
#define MT_EXE_H

#include <stddef.h>

/*
 * path made absolute (against the working directory) and canonical into
 * out (cap bytes, NUL-terminated): no ".", "..", repeated "/" or symbolic
 * link left, as realpath(3) gives it.  Every component must exist.
 * Returns the length, or -errno (ELOOP past 40 links, ENAMETOOLONG when
 * it does not fit, EXDEV for a walk that would enter /proc).  Never
 * allocates; its own work space is 2 KiB of stack, and a link or a
 * working directory longer than 1 KiB is refused with ENAMETOOLONG.
 */
long mt_exe_resolve(const char *path, char *out, size_t cap);

/*
 * The exe's path from AT_EXECFN into out (cap bytes): made canonical as
 * above, and confirmed by reading the file's start (mt_nofd_read), which
 * must be the image's own headers as mapped.  Returns the length, or
 * -errno where it is not confirmed: a script (the exe is its
 * interpreter), ld.so run as the program (no AT_BASE: the exe is ld.so),
 * a name through /proc (fexecve), a file replaced since.
 */
long mt_exe_from_exec_name(char *out, size_t cap);

/*
 * The exe's path into out (cap bytes, NUL-terminated): from AT_EXECFN as
 * above when may_open (a file may be read in place: mt_nofd_alone()),
 * else, or when that fails, from readlink("/proc/self/exe").  Returns the
 * length, or -errno.
 */
long mt_exe_path(char *out, size_t cap, int may_open);

#endif
