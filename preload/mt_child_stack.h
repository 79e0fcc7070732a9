/*
 * mt_child_stack: the stacks of the preload's clone(CLONE_VM) children
 * (mt_nofd, mt_spawn), mapped and unmapped with raw system calls.
 *
 * Such a child shares the program's memory and ends with exit or exec,
 * never by returning, so the frames it leaves on its stack never end.
 * Under AddressSanitizer those frames' redzones stay poisoned in the
 * shared shadow after the stack is unmapped, and the next mapping at the
 * same address (any mmap of the program or the tracer) reads as a stack
 * overflow.  mt_child_stack_unmap() clears the shadow first; without the
 * sanitizer it is a plain munmap.  Never calls malloc or a hooked function.
 */
#ifndef MT_CHILD_STACK_H
#define MT_CHILD_STACK_H

#include <stddef.h>

/* A private, writable stack of len bytes: its lowest address, or -errno. */
long mt_child_stack_map(size_t len);

/* Give back a stack mt_child_stack_map() returned, once no child runs on
 * it any more. */
void mt_child_stack_unmap(long stack, size_t len);

#endif
