/*
 * mt_forkmap: the memory a process shares with the children it forks
 * (the names' cache, the unwind rules' table): an anonymous MAP_SHARED
 * mapping, aligned to its size, so that a child's first look at it maps
 * as many of its pages as the kernel's fault-around window takes (64 KiB
 * by default) in one fault.
 *
 * Never allocates, holds no descriptor; makes one mmap and trims it.
 */
#ifndef MT_FORKMAP_H
#define MT_FORKMAP_H

#include <stddef.h>

/* A zeroed mapping of bytes (a power of two, at least a page), shared
 * with every child forked after, aligned to bytes; NULL when it cannot
 * be made.  Undone by munmap(p, bytes). */
void *mt_forkmap_make(size_t bytes);

#endif
