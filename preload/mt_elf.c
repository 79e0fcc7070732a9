/*
 * mt_elf: the ELF symbol reader (mt_elf.h): a module's file mapped once,
 * its .symtab and .dynsym walked with libunwind 1.6.2's rule, a sorted
 * index of its function symbols for a module named often, and its build
 * id.  It must never read outside the mapped file (every offset is
 * checked against its size first), never malloc (the index is an
 * anonymous mapping), and never open a file in the program's descriptor
 * table (mt_nofd).  The index must name every address exactly as the walk
 * does.
 */
#include "mt_elf.h"

#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mt_nofd.h"
#include "mt_prefault.h"

#if defined(__x86_64__)
#define MT_ELF_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define MT_ELF_MACHINE EM_AARCH64
#endif

enum { INDEX_UNTRIED, INDEX_OK, INDEX_NONE };

/* When a module gets its index.  A scan costs a few ns per candidate, so up
 * to INDEX_MIN_CANDIDATES (a few us) it is the same order as the unwind of
 * the stack that found the frame, and an index (an mmap, a page or more)
 * would save next to nothing.  Most modules of a process are on few
 * distinct frames (ld.so, libpthread, small libraries): waiting for the
 * INDEX_AFTER_LOOKUPS-th lookup keeps them from paying an index for
 * nothing, and wastes at most that many scans on a module that does need
 * one, against the thousands of new frames a big C++ binary or an
 * interpreter has, each one a scan of its 10^5..10^6 symbols. */
#define INDEX_AFTER_LOOKUPS 8
#define INDEX_MIN_CANDIDATES 1024

/* One candidate of a module's index: its address (st_value, plus the load
 * offset unless SHN_ABS), its symbol's st_size and st_name (in its
 * table's strings: mt_elf_view_t.str_off), and its place in the scan's
 * order, which also says its table (mt_elf_view_t.split): 24 bytes a
 * candidate. */
struct mt_elf_cand {
	uint64_t addr;
	uint64_t size;
	uint32_t name;
	uint32_t order;
};

void mt_elf_drop(mt_elf_view_t *v)
{
	if (v->image)
		munmap((void *)v->image, v->size);
	if (v->index)
		munmap(v->index, v->index_bytes);
	v->image = NULL;
	v->state = MT_ELF_UNTRIED;
	v->index = NULL;
	v->nindex = 0;
	v->index_state = INDEX_UNTRIED;
	v->lookups = 0;
}

static int in_file(uint64_t off, uint64_t len, size_t size)
{
	return off <= size && len <= size - off;
}

/* Section header i of a mapped ELF image whose section table usable()
 * has checked. */
static const Elf64_Shdr *section(const unsigned char *img, uint64_t i)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;

	return (const Elf64_Shdr *)(img + eh->e_shoff + i * eh->e_shentsize);
}

/* Whether the section table names a .gnu_debugdata: libunwind would look
 * for a closer symbol in that MiniDebugInfo too, so leave such a file to
 * libunwind. */
static int has_minidebuginfo(const unsigned char *img, size_t size)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	const Elf64_Shdr *names;
	static const char want[] = ".gnu_debugdata";

	if (eh->e_shstrndx >= eh->e_shnum)
		return 1; /* cannot tell: not ours */
	names = section(img, eh->e_shstrndx);
	if (!in_file(names->sh_offset, names->sh_size, size))
		return 1;
	for (int i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *sh = section(img, (uint64_t)i);

		if (sh->sh_name < names->sh_size &&
		    names->sh_size - sh->sh_name >= sizeof(want) &&
		    !memcmp(img + names->sh_offset + sh->sh_name, want, sizeof(want)))
			return 1;
	}
	return 0;
}

/* Whether a mapped file is an ELF object of this machine whose headers and
 * symbol tables lie inside it, so a lookup never reads past the mapping. */
static int usable(const unsigned char *img, size_t size)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;

	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_VERSION] != EV_CURRENT)
		return 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return 0;
#else
	if (eh->e_ident[EI_DATA] != ELFDATA2MSB)
		return 0;
#endif
#ifdef MT_ELF_MACHINE
	if (eh->e_machine != MT_ELF_MACHINE)
		return 0;
#else
	return 0;
#endif
	if (eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    !in_file(eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr), size))
		return 0;
	if (eh->e_shentsize < sizeof(Elf64_Shdr) ||
	    !in_file(eh->e_shoff, (uint64_t)eh->e_shnum * eh->e_shentsize, size))
		return 0;
	for (int i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *sh = section(img, (uint64_t)i);

		if (sh->sh_type != SHT_SYMTAB && sh->sh_type != SHT_DYNSYM)
			continue;
		if (!in_file(sh->sh_offset, sh->sh_size, size))
			return 0;
	}
	return !has_minidebuginfo(img, size);
}

/* The module's GNU build id, from the notes of its PT_NOTE segments in
 * the mapped file (every note inside the file, its name and descriptor
 * padded to 4 bytes, or to 8 in a segment aligned so, as gABI and
 * GNU's property notes lay them out): 0 and nothing copied when it has
 * none that fits. */
static size_t read_build_id(const mt_elf_view_t *v, unsigned char *out)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)v->image;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(v->image + eh->e_phoff);

	for (int i = 0; i < eh->e_phnum; i++) {
		uint64_t at, end, pad;

		if (ph[i].p_type != PT_NOTE ||
		    !in_file(ph[i].p_offset, ph[i].p_filesz, v->size))
			continue;
		pad = ph[i].p_align == 8 ? 7 : 3;
		at = ph[i].p_offset;
		end = at + ph[i].p_filesz;
		while (end - at >= sizeof(Elf64_Nhdr)) {
			const Elf64_Nhdr *n = (const Elf64_Nhdr *)(v->image + at);
			uint64_t name = at + sizeof(*n);
			uint64_t desc = name + (((uint64_t)n->n_namesz + pad) & ~pad);
			uint64_t next = desc + (((uint64_t)n->n_descsz + pad) & ~pad);

			if (next > end || next <= at)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    !memcmp(v->image + name, "GNU", 4) && n->n_descsz &&
			    n->n_descsz <= MT_ELF_BUILD_ID_MAX) {
				memcpy(out, v->image + desc, n->n_descsz);
				return n->n_descsz;
			}
			at = next;
		}
	}
	return 0;
}

/* Map the module's file once: one private read-only mapping made with no
 * descriptor in the program's table (mt_nofd), never malloc; kept until a
 * reload finds the mapping gone. */
void mt_elf_open(mt_elf_view_t *v, const char *path, uint64_t start, uint64_t off)
{
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph;
	const void *img;
	size_t size;

	v->state = MT_ELF_FALLBACK;
	if (path[0] != '/')
		return; /* [vdso], [heap], anonymous memory */
	img = v->image; /* mapped by the caller, or not yet */
	size = v->size;
	v->image = NULL;
	if (!img && mt_nofd_map(path, &img, &size) < 0)
		return;
	if (!usable(img, size)) {
		munmap((void *)img, size);
		return;
	}
	v->image = img;
	v->size = size;
	v->state = MT_ELF_OK;
	/* libunwind's load offset: from the PT_LOAD whose file offset is the
	 * mapping's, 0 when none is; the same for every lookup. */
	v->load = 0;
	eh = img;
	ph = (const Elf64_Phdr *)((const unsigned char *)img + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset == off) {
			v->load = start - ph[i].p_vaddr;
			break;
		}
	v->build_id_len = read_build_id(v, v->build_id);
}

/* The string table of symbol section sh, or NULL: libunwind skips a table
 * whose strings lie outside the file.  A table whose entries are smaller
 * than a symbol or further apart than the file is long has no symbols
 * either: walking it, libunwind 1.6 loops forever (entry size 0) or lets
 * its pointer wrap past 2^64 and reads outside the file (near 2^64), in
 * the traced program.  (Such a file is not handed to libunwind at all: no
 * linker writes one, and the loader never reads section headers, so it
 * loads.) */
static const Elf64_Shdr *strings_of(const mt_elf_view_t *v, const Elf64_Shdr *sh)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)v->image;
	uint64_t soff = eh->e_shoff + (uint64_t)sh->sh_link * eh->e_shentsize;
	const Elf64_Shdr *str;

	if (sh->sh_entsize < sizeof(Elf64_Sym) || sh->sh_entsize > v->size)
		return NULL;

	if (!in_file(soff, eh->e_shentsize, v->size))
		return NULL;
	str = (const Elf64_Shdr *)(v->image + soff);
	if (!in_file(str->sh_offset, str->sh_size, v->size))
		return NULL;
	return str;
}

/* The next symbol table (SHT_SYMTAB or SHT_DYNSYM) from section *i on
 * that has its strings, in section order: the order of libunwind's walk.
 * Returns 0 when none is left; *i is then past the table returned. */
static int next_table(const mt_elf_view_t *v, int *i, const Elf64_Shdr **sh,
		      const Elf64_Shdr **str)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)v->image;

	while (*i < eh->e_shnum) {
		const Elf64_Shdr *s = section(v->image, (uint64_t)(*i)++);

		if (s->sh_type != SHT_SYMTAB && s->sh_type != SHT_DYNSYM)
			continue;
		if ((*str = strings_of(v, s)) != NULL) {
			*sh = s;
			return 1;
		}
	}
	return 0;
}

/* Whether sym is one of libunwind's candidates (a defined STT_FUNC whose
 * name lies in its string table), and at which address. */
static int candidate(const Elf64_Sym *sym, const Elf64_Shdr *str, uint64_t load,
		     uint64_t *val)
{
	if (ELF64_ST_TYPE(sym->st_info) != STT_FUNC || sym->st_shndx == SHN_UNDEF ||
	    sym->st_name >= str->sh_size)
		return 0;
	*val = sym->st_value;
	if (sym->st_shndx != SHN_ABS)
		*val += load;
	return 1;
}

/* Name ip with libunwind 1.6.2's rule (src/elfxx.c), so names and offsets
 * stay what they were: every defined STT_FUNC of every SHT_SYMTAB and
 * SHT_DYNSYM, in section order, is a candidate, at st_value plus the load
 * offset unless SHN_ABS; the nearest one at or below ip wins, the first on
 * a tie, st_size ignored; and nothing is found when that distance is not
 * below the file's size.  Returns the distance, or UINT64_MAX.  This walks
 * every symbol of the module: the reference the index must agree with,
 * and what a module without an index pays for each new frame. */
static uint64_t scan(const mt_elf_view_t *v, uint64_t ip, const char **name,
			  size_t *name_max, uint64_t *size)
{
	const unsigned char *img = v->image;
	const Elf64_Shdr *sh, *str;
	uint64_t best = UINT64_MAX;
	int i = 0;

	*name = NULL;
	*size = 0;
	while (next_table(v, &i, &sh, &str)) {
		for (uint64_t o = 0; o + sizeof(Elf64_Sym) <= sh->sh_size; o += sh->sh_entsize) {
			const Elf64_Sym *sym = (const Elf64_Sym *)(img + sh->sh_offset + o);
			uint64_t val;

			if (candidate(sym, str, v->load, &val) && ip - val < best) {
				best = ip - val;
				*name = (const char *)img + str->sh_offset + sym->st_name;
				*name_max = str->sh_size - sym->st_name;
				*size = sym->st_size;
			}
		}
	}
	if (best >= v->size)
		return UINT64_MAX;
	return best;
}

/* The scan's order: address, then place in the tables (unique). */
static int cand_before(const mt_elf_cand_t *a, const mt_elf_cand_t *b)
{
	if (a->addr != b->addr)
		return a->addr < b->addr;
	return a->order < b->order;
}

static void sift_down(mt_elf_cand_t *c, size_t root, size_t n)
{
	for (;;) {
		size_t child = 2 * root + 1;
		mt_elf_cand_t t;

		if (child >= n)
			return;
		if (child + 1 < n && cand_before(&c[child], &c[child + 1]))
			child++;
		if (!cand_before(&c[root], &c[child]))
			return;
		t = c[root];
		c[root] = c[child];
		c[child] = t;
		root = child;
	}
}

/* Heapsort: in place, no recursion, no allocation, n log n at worst. */
static void sort_cands(mt_elf_cand_t *c, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(c, i, n);
	for (size_t end = n; end-- > 1;) {
		mt_elf_cand_t t = c[0];

		c[0] = c[end];
		c[end] = t;
		sift_down(c, 0, end);
	}
}

/* Build the module's sorted index when it has more than min candidates.
 * Why: without it every new frame walks every symbol (a C++ binary with
 * 500k functions and 30k distinct frames: ~10^10 symbol visits); with it,
 * a frame is a binary search.  Cost: two walks over the tables and a
 * heapsort, once; 24 bytes per candidate (sizeof(mt_elf_cand_t)) in an anonymous
 * mapping (never malloc), then only the first candidate of each address
 * is kept (aliases the lookup never picks) and the pages that frees are
 * given back.  When the mapping fails the module keeps its scan: naming
 * never fails. */
static void index_build(mt_elf_view_t *v, size_t min)
{
	const unsigned char *img = v->image;
	size_t n = 0, cap = 0, k, bytes = 0, keep, page = (size_t)sysconf(_SC_PAGESIZE);
	mt_elf_cand_t *c = NULL;
	void *mem = NULL;

	v->index_state = INDEX_NONE;
	for (int pass = 0; pass < 2; pass++) {
		const Elf64_Shdr *sh, *str;
		int i = 0, table = 0;

		while (next_table(v, &i, &sh, &str)) {
			if (table == 2) {
				/* A third table (no linker writes one): keep
				 * the scan.  (Only a file changed under its
				 * mapping gets here in the second pass, after
				 * the mapping.) */
				if (mem)
					munmap(mem, bytes);
				return;
			}
			for (uint64_t o = 0; o + sizeof(Elf64_Sym) <= sh->sh_size;
			     o += sh->sh_entsize) {
				const Elf64_Sym *sym = (const Elf64_Sym *)(img + sh->sh_offset + o);
				uint64_t val;

				if (!candidate(sym, str, v->load, &val))
					continue;
				if (pass && n == cap)
					break; /* the file changed under its mapping */
				if (pass) {
					c[n].addr = val;
					c[n].size = sym->st_size;
					c[n].name = sym->st_name;
					c[n].order = (uint32_t)n;
				}
				n++;
			}
			if (pass) {
				v->str_off[table] = str->sh_offset;
				v->str_size[table] = str->sh_size;
				if (!table)
					v->split = (uint32_t)n;
			}
			table++;
		}
		if (pass)
			break;
		if (n == 0 || n <= min || n > UINT32_MAX ||
		    n > SIZE_MAX / sizeof(mt_elf_cand_t) - page)
			return;
		bytes = (n * sizeof(mt_elf_cand_t) + page - 1) / page * page;
		/* Resident at once: the second pass writes all of it. */
		mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | mt_prefault_map_flags(), -1, 0);
		if (mem == MAP_FAILED)
			return;
		c = mem;
		cap = n;
		n = 0;
	}
	sort_cands(c, n);
	/* The scan picks the first candidate of an address: keep only it. */
	k = 1;
	for (size_t i = 1; i < n; i++)
		if (c[i].addr != c[k - 1].addr)
			c[k++] = c[i];
	keep = (k * sizeof(mt_elf_cand_t) + page - 1) / page * page;
	if (keep < bytes)
		munmap((unsigned char *)mem + keep, bytes - keep);
	v->index = c;
	v->nindex = k;
	v->index_bytes = keep;
	v->index_state = INDEX_OK;
}

/* scan's answer from the index: the candidate with the smallest
 * ip - addr (mod 2^64) is the greatest address <= ip, or when every one is
 * above ip, the greatest of all (the scan's wrapped distance); the first of
 * an address is the only one kept; and the same not-below-the-file's-size
 * rule gives "not found" exactly when the scan does (a wrapped distance is
 * huge, and UINT64_MAX, which the scan's strict < never picks, is too). */
static uint64_t index_lookup(const mt_elf_view_t *v, uint64_t ip, const char **name,
			     size_t *name_max, uint64_t *size)
{
	const mt_elf_cand_t *c = v->index;
	size_t lo = 0, hi = v->nindex;
	uint64_t dist;
	int t;

	*name = NULL;
	*size = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c[mid].addr <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	c += lo ? lo - 1 : v->nindex - 1;
	dist = ip - c->addr;
	if (dist >= v->size)
		return UINT64_MAX;
	t = c->order >= v->split;
	*name = (const char *)v->image + v->str_off[t] + c->name;
	*name_max = v->str_size[t] - c->name;
	*size = c->size;
	return dist;
}

/* Through the index once the module has one (mt_elf.h), so a new frame in a module of 500k functions costs ~20 comparisons, not
 * 500k symbol visits, for 24 bytes per candidate (index_build). */
uint64_t mt_elf_lookup(mt_elf_view_t *v, uint64_t ip, const char **name,
		       size_t *name_max, uint64_t *size)
{
	if (v->index_state == INDEX_UNTRIED && ++v->lookups >= INDEX_AFTER_LOOKUPS)
		index_build(v, INDEX_MIN_CANDIDATES);
	if (v->index_state == INDEX_OK)
		return index_lookup(v, ip, name, name_max, size);
	return scan(v, ip, name, name_max, size);
}

size_t mt_elf_build_id(const mt_elf_view_t *v, unsigned char *out)
{
	memcpy(out, v->build_id, v->build_id_len);
	return v->build_id_len;
}

int mt_elf_has_index(const mt_elf_view_t *v)
{
	return v->index_state == INDEX_OK;
}

int mt_elf_probe(mt_elf_view_t *v, uint64_t ip, mt_elf_sym_t *by_scan,
		 mt_elf_sym_t *by_index)
{
	if (v->index_state != INDEX_OK)
		index_build(v, 0);
	if (v->index_state != INDEX_OK)
		return 0;
	by_scan->distance = scan(v, ip, &by_scan->name, &by_scan->name_max, &by_scan->size);
	by_index->distance = index_lookup(v, ip, &by_index->name, &by_index->name_max,
					  &by_index->size);
	return 1;
}

uint64_t mt_elf_unloads(const struct dl_phdr_info *info, size_t size)
{
	if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs))
		return UINT64_MAX;
	return info->dlpi_subs;
}

int mt_elf_main_phdrs(const Elf64_Phdr **ph, size_t *n, uintptr_t *bias)
{
	*ph = (const Elf64_Phdr *)getauxval(AT_PHDR);
	*n = getauxval(AT_PHNUM);
	for (size_t i = 0; *ph && i < *n; i++)
		if ((*ph)[i].p_type == PT_PHDR) {
			*bias = (uintptr_t)*ph - (*ph)[i].p_vaddr;
			return 0;
		}
	return -1;
}
