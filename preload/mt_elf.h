/*
 * mt_elf: the ELF symbol reader.  A module's file is mapped once, whole
 * and read-only (a view); an address is named from its .symtab and
 * .dynsym with libunwind 1.6.2's rule (src/elfxx.c: the nearest defined
 * STT_FUNC at or below it, the first on a tie, st_size ignored, nothing
 * when that distance is not below the file's size), so the names and
 * offsets are what libunwind's get_proc_name gives.  A module named often
 * gets a sorted index of its function symbols: a new frame is then a
 * binary search instead of a walk over every symbol.  It also finds the
 * main program's program headers where they are mapped, for whoever reads
 * them there (the loader's r_debug, the exe's check in mt_exe.c).
 *
 * Invariants:
 * - The index names every address exactly as the walk does
 *   (mt_elf_probe lets the tests compare them).
 * - Nothing is read outside the mapped file: a view is used only when the
 *   file is an ELF object of this machine whose headers and symbol tables
 *   lie inside it, and has no MiniDebugInfo (libunwind would look there
 *   too); otherwise the view is MT_ELF_FALLBACK and the caller asks
 *   libunwind.
 * - Never mallocs, never opens a file in the program's descriptor table
 *   (files are mapped through mt_nofd), takes no lock: a view is its
 *   caller's, under the caller's lock.
 */
#ifndef MT_ELF_H
#define MT_ELF_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

/* The longest build id kept: GNU ld's are 20 bytes (SHA-1), 16 (md5 or
 * uuid), or what --build-id=0xHEX gave; a longer one is left out. */
#define MT_ELF_BUILD_ID_MAX 64

/* A view's state: not yet tried, usable, or left to libunwind. */
enum { MT_ELF_UNTRIED, MT_ELF_OK, MT_ELF_FALLBACK };

typedef struct mt_elf_cand mt_elf_cand_t;

/* One module's file.  All zero is an untried view; the whole struct may
 * be handed on to another owner (a reload of the module table keeps the
 * views of mappings that have not changed), the old one zeroed.
 *
 * What every lookup needs of the file's headers (the build id, each
 * symbol table's strings) is kept here, and each index entry keeps its
 * symbol's name and size: naming a frame reads the index and the name's
 * string, no other page of the file.  In a forked child each page of the
 * file it reads is read for the first time since the fork, at the cost
 * of a fault; these are kept in the module table, which it reads anyway. */
typedef struct {
	int state;
	/* The whole file, or NULL.  The caller may map it before
	 * mt_elf_open (image and size), which then checks it. */
	const unsigned char *image;
	size_t size;
	uint64_t load;       /* libunwind's load offset */
	/* The sorted index, an anonymous mapping, decided once, on the
	 * few-th lookup (mt_elf.c). */
	int index_state;
	uint32_t lookups;
	mt_elf_cand_t *index;
	size_t nindex;
	size_t index_bytes;
	/* The index's string tables, by the symbol table's place among
	 * the file's (gABI allows one SHT_DYNSYM and one SHT_SYMTAB):
	 * file offset and size.  Candidates of the first table come
	 * first in the scan's order: below split. */
	uint64_t str_off[2], str_size[2];
	uint32_t split;
	/* The build id, read when the view is opened. */
	unsigned char build_id[MT_ELF_BUILD_ID_MAX];
	size_t build_id_len;
} mt_elf_view_t;

/* What naming an address found. */
typedef struct {
	uint64_t distance; /* ip minus the symbol's address; UINT64_MAX: none */
	const char *name;  /* in the mapped file, until the view is dropped */
	size_t name_max;   /* bytes of its string table from name on */
	uint64_t size;     /* the symbol's st_size; 0: none or unknown */
} mt_elf_sym_t;

/* Make an untried view of the module mapped at start from file offset
 * off, whose file is path: MT_ELF_OK, or MT_ELF_FALLBACK when path is no
 * file ([vdso], [heap]), cannot be mapped, or is not usable (then nothing
 * stays mapped). */
void mt_elf_open(mt_elf_view_t *v, const char *path, uint64_t start, uint64_t off);

/* Unmap the view's file and index; the view is untried again. */
void mt_elf_drop(mt_elf_view_t *v);

/* The main program's program headers as mapped (the auxiliary vector's
 * AT_PHDR and AT_PHNUM) into *ph and *n, and its load bias, from its
 * PT_PHDR, into *bias.  Returns 0, or -1 when it has no PT_PHDR. */
int mt_elf_main_phdrs(const Elf64_Phdr **ph, size_t *n, uintptr_t *bias);

struct dl_phdr_info;

/* The loader's count of objects unloaded (dlpi_subs) as a visit of
 * dl_iterate_phdr is told it (info of size bytes), or UINT64_MAX where
 * this loader's info has no such count. */
uint64_t mt_elf_unloads(const struct dl_phdr_info *info, size_t size);

/* Name ip in an MT_ELF_OK view: the distance from the symbol chosen, or
 * UINT64_MAX when there is none; *name (NULL when none), *name_max and
 * *size as in mt_elf_sym_t.  May build the view's index. */
uint64_t mt_elf_lookup(mt_elf_view_t *v, uint64_t ip, const char **name,
		       size_t *name_max, uint64_t *size);

/* 1 when the view has its index (lookups go through it), else 0. */
int mt_elf_has_index(const mt_elf_view_t *v);

/* The module's GNU build id (the NT_GNU_BUILD_ID note of its PT_NOTE
 * segments, read when the view was opened) into out
 * (MT_ELF_BUILD_ID_MAX bytes): its length, 0 when it has none that fits.
 * An MT_ELF_OK view. */
size_t mt_elf_build_id(const mt_elf_view_t *v, unsigned char *out);

/* For tests: ip named both by walking every symbol and through the index,
 * which this builds now whatever the module's size or lookup count (the
 * view keeps it).  Returns 0 when the view has no candidate symbol. */
int mt_elf_probe(mt_elf_view_t *v, uint64_t ip, mt_elf_sym_t *by_scan,
		 mt_elf_sym_t *by_index);

#endif
