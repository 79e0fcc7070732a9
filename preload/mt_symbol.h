/*
 * mt_symbol: names an instruction address: the module it lies in (path and
 * offset from the module's load bias, as addr2line wants it) and the
 * symbol containing it (static functions of a non-stripped binary too).
 * Symbols come from the module file's .symtab and .dynsym, mapped once per
 * module when the module table is read, and chosen with libunwind 1.6.2's
 * rule, so the names and offsets are what libunwind's get_proc_name gives,
 * except that a symbol with a size names only the addresses inside it: a
 * frame past the end of the nearest symbol (a static function of a
 * stripped module) gets no symbol, only its module and offset.  A module whose file cannot
 * be mapped and parsed (deleted, [vdso], not ELF, MiniDebugInfo) is named
 * by libunwind itself, nearest symbol and all.  A module read that way
 * also gives its build id (the NT_GNU_BUILD_ID note of its PT_NOTE
 * segments), so a report can tell a module rebuilt since the run.
 *
 * The module table is read from /proc/self/maps, never from the dynamic
 * loader, and is re-read when an address falls outside it and the loader
 * has loaded or unloaded an object since (a dlopen), never for JIT code,
 * and at the first address named after an unload (mt_symbol_forget).
 * Every file is opened in a child with a descriptor table of its own
 * (mt_nofd), never in the program's.
 * Callers must hold no lock of the tracer while calling in: libunwind may
 * take the loader's lock (prior-art: loader-lock deadlocks).  The module
 * lock taken inside never waits for the loader.  Never allocates through
 * the traced malloc: the caller's recursion guard is set.
 */
#ifndef MT_SYMBOL_H
#define MT_SYMBOL_H

#include <stddef.h>
#include <stdint.h>

#include "mt_elf.h"

/* The longest build id kept (mt_elf.h). */
#define MT_SYMBOL_BUILD_ID_MAX MT_ELF_BUILD_ID_MAX

typedef struct {
	int has_module;
	uint64_t module_offset;
	size_t module_len;
	int has_symbol;
	uint64_t offset;
	size_t symbol_len;
	/* The module file's GNU build id (its NT_GNU_BUILD_ID note), when
	 * the file could be read and has one; build_id_len 0 otherwise. */
	unsigned char build_id[MT_SYMBOL_BUILD_ID_MAX];
	size_t build_id_len;
} mt_symbol_info_t;

/* Resolve ip (a return address).  The module path goes to module (cap
 * bytes), the symbol to symbol (cap bytes); both NUL-terminated. */
void mt_symbol_resolve(uint64_t ip, mt_symbol_info_t *info, char *module,
		       size_t module_cap, char *symbol, size_t symbol_cap);

/* Read the module table and map every module's file now (at start), so
 * that naming a frame later opens no file unless the loader has loaded
 * something since; a file's headers are read when a frame in it is first
 * named.  Call with no lock of the tracer held. */
void mt_symbol_load(void);

/* The program is about to install a seccomp filter, or started under one:
 * mt_symbol_load() now, the names' cache made (mt_namecache_lock_down),
 * and from then on a reload (a dlopen's module) reads its files in a
 * child, never in place, whose refusal the caller hears of
 * (mt_nofd_refused) rather than the program being told no. */
void mt_symbol_lock_down(void);

/* What naming cost so far, for tests: how often /proc/self/maps was read,
 * how many lookups went to libunwind (which reads the maps and maps the
 * file again on every call), how many were answered from a module's
 * sorted index instead of a walk over all its symbols, and how many
 * mapped files had their headers read (once each, when a frame in the
 * module is first named). */
typedef struct {
	uint64_t maps_reads;
	uint64_t fallbacks;
	uint64_t indexed;
	uint64_t headers_read;
} mt_symbol_stats_t;

void mt_symbol_stats(mt_symbol_stats_t *stats);

/* For tests: what the module holding address at says of ip (not ip - 1),
 * both by walking all its symbols and through its sorted index, which this
 * builds now if the module has none, whatever its size or lookup count;
 * the module keeps it for mt_symbol_resolve.  Returns 0 when at lies in
 * no module, or its file has no view or no candidate symbol. */
typedef mt_elf_sym_t mt_symbol_probe_t;

int mt_symbol_probe(uint64_t at, uint64_t ip, mt_symbol_probe_t *scan,
		    mt_symbol_probe_t *indexed);

/* A module was unloaded: the next address named reads the module table
 * again (its entry may now be another module's), and the unloaded
 * module's file is unmapped then.  Takes no lock; any thread. */
void mt_symbol_forget(void);

/* Forget the module table and unmap its files (a forked child keeps its
 * parent's mappings, so this is only for tests). */
void mt_symbol_reset(void);

/* Fork: hold the module lock across fork(), so a child never inherits it
 * held by a thread that is not there; the child gets a fresh one. */
void mt_symbol_fork_prepare(void);
void mt_symbol_fork_parent(void);
void mt_symbol_fork_child(void);

#endif
