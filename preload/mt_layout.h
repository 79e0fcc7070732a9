/*
 * mt_layout: where the preload's own variables lie in its writable
 * segment.  A fork makes every page of it copy-on-write, and a page the
 * child or the parent writes first after the fork is copied (14 to 19 us
 * a page in a guest that shadows page tables); a new process faults in
 * each page it first writes.  The small variables the hooks, the clock
 * and a fork write are therefore kept together, and every big array the
 * tracer touches a page at a time or rarely is declared MT_LAYOUT_APART:
 * the linker puts those after all the others (the Makefile sorts the
 * .bss input sections by name, and ".bss" comes before ".bss.mt_apart").
 * The arrays a process's start leaves out of the pages it makes resident
 * (MT_PREFAULT_COLD, mt_prefault.h) are MT_LAYOUT_COLD, last of all
 * (".bss.mt_cold"): the pages before them are then one range, made
 * resident by one system call.
 *
 * Only for zero-initialised static storage: the section is NOBITS.
 */
#ifndef MT_LAYOUT_H
#define MT_LAYOUT_H

#define MT_LAYOUT_APART __attribute__((section(".bss.mt_apart")))
#define MT_LAYOUT_COLD __attribute__((section(".bss.mt_cold")))

#endif
