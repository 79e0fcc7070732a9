/*
 * mt_symbol: module table from /proc/self/maps and symbol names from each
 * module's ELF symbol tables, read through one private mapping of the file
 * kept per module (libunwind's get_proc_name re-reads the maps and maps the
 * file on every call).  The symbol is chosen with libunwind 1.6.2's rule
 * and kept only when its extent (st_size, when it has one) contains the
 * address; a module whose file cannot be read that way falls back to
 * libunwind.  A
 * module named often gets a sorted index of its function symbols, so a new
 * frame costs a binary search instead of a walk over every symbol; the
 * index must name every address exactly as the walk does.  It must never
 * call dladdr or dl_iterate_phdr while the module lock is held, never be
 * called with the table lock held, and never malloc.
 */
#include "mt_symbol.h"

#include "mt_nofd.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stddef.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_MODULES 2048
#define PATH_POOL (512u << 10)

#if defined(__x86_64__)
#define MT_ELF_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define MT_ELF_MACHINE EM_AARCH64
#endif

enum { VIEW_UNTRIED, VIEW_OK, VIEW_FALLBACK };
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
 * offset unless SHN_ABS), and the symbol (section, index in its table),
 * which is also its place in the scan's order: 16 bytes a candidate. */
typedef struct {
	uint64_t addr;
	uint32_t sec;
	uint32_t sym;
} cand_t;

typedef struct {
	uint64_t start, end; /* an executable mapping */
	uint64_t off;        /* its file offset */
	uint64_t dev, inode;
	uint64_t path_hash;
	uint64_t bias;       /* the module's load bias */
	uint32_t path;       /* offset in the path pool */
	uint32_t path_len;
	/* The whole file, mapped once when the table is read; owned by this
	 * entry, handed on by a reload only to the same mapping of the
	 * same file. */
	int view;
	const unsigned char *image;
	size_t size;
	uint64_t load;       /* libunwind's load offset, set with the view */
	/* The sorted index, an anonymous mapping owned and handed on with
	 * the view; decided once, on the INDEX_AFTER_LOOKUPS-th lookup. */
	int index_state;
	uint32_t lookups;
	cand_t *index;
	size_t nindex;
	size_t index_bytes;
} module_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static module_t modules[MAX_MODULES];
static size_t nmodules;
/* The table before a reload, to hand its views on. */
static module_t old_modules[MAX_MODULES];
static size_t nold;
static uint64_t maps_reads, fallbacks, indexed;
static char pool[PATH_POOL];
static size_t pool_used;
static char maps_buf[1 << 16];
/* The last mapping at file offset 0: where its ELF header is. */
static uint64_t hdr_start;
static char hdr_path[4096];
static size_t hdr_len;

static uint64_t parse_hex(const char **s)
{
	uint64_t v = 0;

	for (;; (*s)++) {
		char c = **s;

		if (c >= '0' && c <= '9')
			v = v << 4 | (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (uint64_t)(c - 'a' + 10);
		else
			return v;
	}
}

/* The load bias of the ELF object whose header is mapped at header. */
static uint64_t load_bias(uint64_t header)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)header;
	const Elf64_Phdr *ph;
	uint64_t lowest = UINT64_MAX;

	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return header;
	if (eh->e_type == ET_EXEC)
		return 0;
	ph = (const Elf64_Phdr *)(header + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr < lowest)
			lowest = ph[i].p_vaddr;
	if (lowest == UINT64_MAX)
		return header;
	return header - (lowest & ~(uint64_t)4095);
}

/* One line of /proc/self/maps:
 * start-end perms offset dev inode   path */
static void add_line(const char *s, const char *end)
{
	uint64_t start, stop, off, dev, inode = 0, hash = 1469598103934665603ull;
	const char *perms, *path;
	module_t *m;
	size_t len;

	start = parse_hex(&s);
	if (*s++ != '-')
		return;
	stop = parse_hex(&s);
	if (*s++ != ' ')
		return;
	perms = s;
	while (s < end && *s != ' ')
		s++;
	s++;
	off = parse_hex(&s);
	if (*s++ != ' ')
		return;
	dev = parse_hex(&s) << 32;
	if (*s++ != ':')
		return;
	dev |= parse_hex(&s);
	if (*s++ != ' ')
		return;
	while (s < end && *s >= '0' && *s <= '9')
		inode = inode * 10 + (uint64_t)(*s++ - '0');
	while (s < end && *s == ' ')
		s++;
	path = s;
	len = (size_t)(end - s);
	if (!len)
		return;
	if (off == 0 && perms[0] == 'r' && len < sizeof(hdr_path)) {
		hdr_start = start;
		memcpy(hdr_path, path, len);
		hdr_len = len;
	}
	if (perms[2] != 'x' || nmodules == MAX_MODULES)
		return;
	if (pool_used + len + 1 > sizeof(pool))
		return;
	for (size_t i = 0; i < len; i++)
		hash = (hash ^ (unsigned char)path[i]) * 1099511628211ull;
	m = &modules[nmodules];
	memset(m, 0, sizeof(*m));
	m->start = start;
	m->end = stop;
	m->off = off;
	m->dev = dev;
	m->inode = inode;
	m->path_hash = hash;
	/* The header is the lowest mapping of the same file at offset 0,
	 * which /proc/self/maps lists before its executable segment. */
	if (hdr_len == len && !memcmp(hdr_path, path, len) && path[0] == '/')
		m->bias = load_bias(hdr_start);
	else
		m->bias = start;
	memcpy(pool + pool_used, path, len);
	pool[pool_used + len] = '\0';
	m->path = (uint32_t)pool_used;
	m->path_len = (uint32_t)len;
	pool_used += len + 1;
	/* Keep the view of the same mapping of the same file: a reload is
	 * a dlopen, and the modules already there have not changed. */
	for (size_t i = 0; i < nold; i++) {
		module_t *o = &old_modules[i];

		if (o->view != VIEW_UNTRIED && o->start == start && o->end == stop &&
		    o->off == off && o->dev == dev && o->inode == inode &&
		    o->path_hash == hash && o->path_len == len) {
			m->view = o->view;
			m->image = o->image;
			m->size = o->size;
			m->load = o->load;
			m->index_state = o->index_state;
			m->lookups = o->lookups;
			m->index = o->index;
			m->nindex = o->nindex;
			m->index_bytes = o->index_bytes;
			o->view = VIEW_UNTRIED;
			o->image = NULL;
			o->index_state = INDEX_UNTRIED;
			o->index = NULL;
			break;
		}
	}
	nmodules++;
}

static void drop_view(module_t *m)
{
	if (m->image)
		munmap((void *)m->image, m->size);
	if (m->index)
		munmap(m->index, m->index_bytes);
	m->image = NULL;
	m->view = VIEW_UNTRIED;
	m->index = NULL;
	m->nindex = 0;
	m->index_state = INDEX_UNTRIED;
	m->lookups = 0;
}

/* Unmap the views no entry of the new table took over. */
static void drop_old(void)
{
	for (size_t i = 0; i < nold; i++)
		drop_view(&old_modules[i]);
	nold = 0;
}

/* mt_nofd_read_each's consumer, in its child: whole lines of the maps. */
static size_t maps_lines(void *arg, char *buf, size_t have)
{
	char *line = buf, *nl, *end = buf + have;

	(void)arg;
	while ((nl = memchr(line, '\n', (size_t)(end - line)))) {
		add_line(line, nl);
		line = nl + 1;
	}
	return (size_t)(line - buf);
}

static void view_open(module_t *m);

/* In mt_nofd's child: map the file of every module that has no view yet
 * (image and size; view_open() checks them). */
static long map_all(void *arg)
{
	(void)arg;
	for (size_t i = 0; i < nmodules; i++) {
		module_t *m = &modules[i];

		if (m->view == VIEW_UNTRIED && pool[m->path] == '/' &&
		    mt_nofd_map_here(pool + m->path, (const void **)&m->image, &m->size) < 0)
			m->image = NULL;
	}
	return 0;
}

/* The module table from /proc/self/maps, read with no descriptor in the
 * program's table; then the files of every module are mapped at once (one
 * child for all), so that a new frame later, even after the program has
 * locked its system calls down, opens nothing. */
static int reload(void)
{
	long rc;

	memcpy(old_modules, modules, nmodules * sizeof(modules[0]));
	nold = nmodules;
	nmodules = 0;
	hdr_len = 0;
	pool_used = 0;
	maps_reads++;
	rc = mt_nofd_read_each("/proc/self/maps", maps_buf, sizeof(maps_buf), maps_lines,
			       NULL);
	drop_old();
	mt_nofd_run(map_all, NULL);
	for (size_t i = 0; i < nmodules; i++)
		if (modules[i].view == VIEW_UNTRIED)
			view_open(&modules[i]);
	return rc < 0 ? -1 : 0;
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

/* Map the module's file once: one private read-only mapping made with no
 * descriptor in the program's table (mt_nofd), never malloc; kept until a
 * reload finds the mapping gone. */
static void view_open(module_t *m)
{
	const char *path = pool + m->path;
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph;
	const void *img;
	size_t size;

	m->view = VIEW_FALLBACK;
	if (path[0] != '/')
		return; /* [vdso], [heap], anonymous memory */
	img = m->image; /* mapped by reload() */
	size = m->size;
	m->image = NULL;
	if (!img && mt_nofd_map(path, &img, &size) < 0)
		return;
	if (!usable(img, size)) {
		munmap((void *)img, size);
		return;
	}
	m->image = img;
	m->size = size;
	m->view = VIEW_OK;
	/* libunwind's load offset: from the PT_LOAD whose file offset is the
	 * mapping's, 0 when none is; the same for every lookup. */
	m->load = 0;
	eh = img;
	ph = (const Elf64_Phdr *)((const unsigned char *)img + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset == m->off) {
			m->load = m->start - ph[i].p_vaddr;
			break;
		}
}

/* The string table of symbol section sh, or NULL: libunwind skips a table
 * whose strings lie outside the file.  A table whose entries are smaller
 * than a symbol or further apart than the file is long has no symbols
 * either: walking it, libunwind 1.6 loops forever (entry size 0) or lets
 * its pointer wrap past 2^64 and reads outside the file (near 2^64), in
 * the traced program.  (Such a file is not handed to libunwind at all: no
 * linker writes one, and the loader never reads section headers, so it
 * loads.) */
static const Elf64_Shdr *strings_of(const module_t *m, const Elf64_Shdr *sh)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m->image;
	uint64_t soff = eh->e_shoff + (uint64_t)sh->sh_link * eh->e_shentsize;
	const Elf64_Shdr *str;

	if (sh->sh_entsize < sizeof(Elf64_Sym) || sh->sh_entsize > m->size)
		return NULL;

	if (!in_file(soff, eh->e_shentsize, m->size))
		return NULL;
	str = (const Elf64_Shdr *)(m->image + soff);
	if (!in_file(str->sh_offset, str->sh_size, m->size))
		return NULL;
	return str;
}

/* The next symbol table (SHT_SYMTAB or SHT_DYNSYM) from section *i on
 * that has its strings, in section order: the order of libunwind's walk.
 * Returns 0 when none is left; *i is then past the table returned. */
static int next_table(const module_t *m, int *i, const Elf64_Shdr **sh,
		      const Elf64_Shdr **str)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m->image;

	while (*i < eh->e_shnum) {
		const Elf64_Shdr *s = section(m->image, (uint64_t)(*i)++);

		if (s->sh_type != SHT_SYMTAB && s->sh_type != SHT_DYNSYM)
			continue;
		if ((*str = strings_of(m, s)) != NULL) {
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
static uint64_t view_scan(const module_t *m, uint64_t ip, const char **name,
			  size_t *name_max, uint64_t *size)
{
	const unsigned char *img = m->image;
	const Elf64_Shdr *sh, *str;
	uint64_t best = UINT64_MAX;
	int i = 0;

	*name = NULL;
	*size = 0;
	while (next_table(m, &i, &sh, &str)) {
		for (uint64_t o = 0; o + sizeof(Elf64_Sym) <= sh->sh_size; o += sh->sh_entsize) {
			const Elf64_Sym *sym = (const Elf64_Sym *)(img + sh->sh_offset + o);
			uint64_t val;

			if (candidate(sym, str, m->load, &val) && ip - val < best) {
				best = ip - val;
				*name = (const char *)img + str->sh_offset + sym->st_name;
				*name_max = str->sh_size - sym->st_name;
				*size = sym->st_size;
			}
		}
	}
	if (best >= m->size)
		return UINT64_MAX;
	return best;
}

/* The scan's order: address, then place in the tables (unique). */
static int cand_before(const cand_t *a, const cand_t *b)
{
	if (a->addr != b->addr)
		return a->addr < b->addr;
	if (a->sec != b->sec)
		return a->sec < b->sec;
	return a->sym < b->sym;
}

static void sift_down(cand_t *c, size_t root, size_t n)
{
	for (;;) {
		size_t child = 2 * root + 1;
		cand_t t;

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
static void sort_cands(cand_t *c, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(c, i, n);
	for (size_t end = n; end-- > 1;) {
		cand_t t = c[0];

		c[0] = c[end];
		c[end] = t;
		sift_down(c, 0, end);
	}
}

/* Build the module's sorted index when it has more than min candidates.
 * Why: without it every new frame walks every symbol (a C++ binary with
 * 500k functions and 30k distinct frames: ~10^10 symbol visits); with it,
 * a frame is a binary search.  Cost: two walks over the tables and a
 * heapsort, once; 16 bytes per candidate (sizeof(cand_t)) in an anonymous
 * mapping (never malloc), then only the first candidate of each address
 * is kept (aliases the lookup never picks) and the pages that frees are
 * given back.  When the mapping fails the module keeps its scan: naming
 * never fails. */
static void index_build(module_t *m, size_t min)
{
	const unsigned char *img = m->image;
	size_t n = 0, cap = 0, k, bytes = 0, keep, page = (size_t)sysconf(_SC_PAGESIZE);
	cand_t *c = NULL;
	void *mem = NULL;

	m->index_state = INDEX_NONE;
	for (int pass = 0; pass < 2; pass++) {
		const Elf64_Shdr *sh, *str;
		int i = 0;

		while (next_table(m, &i, &sh, &str)) {
			if (sh->sh_size / sh->sh_entsize > UINT32_MAX) {
				/* Cannot say which symbol: keep the scan.  (Only
				 * a file changed under its mapping gets here in
				 * the second pass, after the mapping.) */
				if (mem)
					munmap(mem, bytes);
				return;
			}
			for (uint64_t o = 0; o + sizeof(Elf64_Sym) <= sh->sh_size;
			     o += sh->sh_entsize) {
				const Elf64_Sym *sym = (const Elf64_Sym *)(img + sh->sh_offset + o);
				uint64_t val;

				if (!candidate(sym, str, m->load, &val))
					continue;
				if (pass && n == cap)
					break; /* the file changed under its mapping */
				if (pass) {
					c[n].addr = val;
					c[n].sec = (uint32_t)(i - 1);
					c[n].sym = (uint32_t)(o / sh->sh_entsize);
				}
				n++;
			}
		}
		if (pass)
			break;
		if (n == 0 || n <= min || n > SIZE_MAX / sizeof(cand_t) - page)
			return;
		bytes = (n * sizeof(cand_t) + page - 1) / page * page;
		mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
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
	keep = (k * sizeof(cand_t) + page - 1) / page * page;
	if (keep < bytes)
		munmap((unsigned char *)mem + keep, bytes - keep);
	m->index = c;
	m->nindex = k;
	m->index_bytes = keep;
	m->index_state = INDEX_OK;
}

/* view_scan's answer from the index: the candidate with the smallest
 * ip - addr (mod 2^64) is the greatest address <= ip, or when every one is
 * above ip, the greatest of all (the scan's wrapped distance); the first of
 * an address is the only one kept; and the same not-below-the-file's-size
 * rule gives "not found" exactly when the scan does (a wrapped distance is
 * huge, and UINT64_MAX, which the scan's strict < never picks, is too). */
static uint64_t index_lookup(const module_t *m, uint64_t ip, const char **name,
			     size_t *name_max, uint64_t *size)
{
	const cand_t *c = m->index;
	size_t lo = 0, hi = m->nindex;
	const Elf64_Shdr *sh, *str;
	const Elf64_Sym *sym;
	uint64_t dist;

	*name = NULL;
	*size = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c[mid].addr <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	c += lo ? lo - 1 : m->nindex - 1;
	dist = ip - c->addr;
	if (dist >= m->size)
		return UINT64_MAX;
	sh = section(m->image, c->sec);
	str = strings_of(m, sh); /* index_build found it */
	sym = (const Elf64_Sym *)(m->image + sh->sh_offset + (uint64_t)c->sym * sh->sh_entsize);
	*name = (const char *)m->image + str->sh_offset + sym->st_name;
	*name_max = str->sh_size - sym->st_name;
	*size = sym->st_size;
	return dist;
}

/* Name ip in a module with a view: through its index once it has one, so
 * a new frame in a module of 500k functions costs ~20 comparisons, not
 * 500k symbol visits, for 16 bytes per candidate (index_build). */
static uint64_t view_lookup(module_t *m, uint64_t ip, const char **name,
			    size_t *name_max, uint64_t *size)
{
	if (m->index_state == INDEX_UNTRIED && ++m->lookups >= INDEX_AFTER_LOOKUPS)
		index_build(m, INDEX_MIN_CANDIDATES);
	if (m->index_state == INDEX_OK) {
		indexed++;
		return index_lookup(m, ip, name, name_max, size);
	}
	return view_scan(m, ip, name, name_max, size);
}

/* Whether the symbol libunwind's rule picked contains the address, dist
 * bytes past its start: a symbol with a size must reach it.  In a stripped
 * module the nearest exported function below a static one ends long
 * before it (python3.11's PySys_WriteStderr+0x417): that frame is named
 * by module and offset alone, as heaptrack prints an address.  A symbol
 * without a size (an assembly label) cannot say where it ends, and keeps
 * libunwind's answer. */
static int symbol_contains(uint64_t dist, uint64_t size)
{
	return size == 0 || dist < size;
}

/* The module's GNU build id, from the notes of its PT_NOTE segments in
 * the mapped file (every note inside the file, its name and descriptor
 * padded to 4 bytes, or to 8 in a segment aligned so, as gABI and
 * GNU's property notes lay them out): 0 and nothing copied when it has
 * none that fits. */
static size_t build_id_of(const module_t *m, unsigned char *out)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m->image;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(m->image + eh->e_phoff);

	for (int i = 0; i < eh->e_phnum; i++) {
		uint64_t at, end, pad;

		if (ph[i].p_type != PT_NOTE ||
		    !in_file(ph[i].p_offset, ph[i].p_filesz, m->size))
			continue;
		pad = ph[i].p_align == 8 ? 7 : 3;
		at = ph[i].p_offset;
		end = at + ph[i].p_filesz;
		while (end - at >= sizeof(Elf64_Nhdr)) {
			const Elf64_Nhdr *n = (const Elf64_Nhdr *)(m->image + at);
			uint64_t name = at + sizeof(*n);
			uint64_t desc = name + (((uint64_t)n->n_namesz + pad) & ~pad);
			uint64_t next = desc + (((uint64_t)n->n_descsz + pad) & ~pad);

			if (next > end || next <= at)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    !memcmp(m->image + name, "GNU", 4) && n->n_descsz &&
			    n->n_descsz <= MT_SYMBOL_BUILD_ID_MAX) {
				memcpy(out, m->image + desc, n->n_descsz);
				return n->n_descsz;
			}
			at = next;
		}
	}
	return 0;
}

/* The loader's count of objects loaded and unloaded: the module table is
 * read again only when it has changed (a dlopen or dlclose), never for an
 * address in no module (JIT code), so that a program that has locked its
 * system calls down never makes the tracer open a file for a new frame. */
static int loaded;
static uint64_t loaded_gen;

static int count_loads(struct dl_phdr_info *info, size_t size, void *arg)
{
	uint64_t *gen = arg;

	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs))
		*gen = (uint64_t)info->dlpi_adds * 0x100000001ull + info->dlpi_subs;
	return 1;
}

static uint64_t loader_generation(void)
{
	uint64_t gen = 0;

	dl_iterate_phdr(count_loads, &gen);
	return gen;
}

static module_t *find(uint64_t ip)
{
	for (size_t i = 0; i < nmodules; i++)
		if (ip >= modules[i].start && ip < modules[i].end)
			return &modules[i];
	return NULL;
}

void mt_symbol_resolve(uint64_t ip, mt_symbol_info_t *info, char *module,
		       size_t module_cap, char *symbol, size_t symbol_cap)
{
	module_t *m;
	unw_word_t off = 0;
	unw_accessors_t *acc;
	int rc, fallback = 1;
	uint64_t gen;

	memset(info, 0, sizeof(*info));
	module[0] = '\0';
	symbol[0] = '\0';
	pthread_mutex_lock(&lock);
	/* The return address may be the first byte of the next function
	 * after a call that does not return: look up the call itself. */
	m = find(ip - 1);
	if (!m) {
		/* The loader is asked with no lock of ours held. */
		pthread_mutex_unlock(&lock);
		gen = loader_generation();
		pthread_mutex_lock(&lock);
		m = find(ip - 1);
		if (!m && (!loaded || gen != loaded_gen)) {
			/* A table that could not be read is read again at
			 * the next address it lacks. */
			loaded = reload() == 0;
			loaded_gen = gen;
			m = find(ip - 1);
		}
	}
	if (!m)
		fallback = 0; /* in no file: JIT code, anonymous memory */
	if (m) {
		size_t n = m->path_len < module_cap - 1 ? m->path_len : module_cap - 1;
		const char *name = NULL;
		size_t name_max = 0, len;
		uint64_t dist, size = 0;

		memcpy(module, pool + m->path, n);
		module[n] = '\0';
		info->has_module = 1;
		info->module_len = n;
		info->module_offset = ip - m->bias;
		if (m->view == VIEW_UNTRIED)
			view_open(m);
		if (m->view == VIEW_OK) {
			fallback = 0;
			info->build_id_len = build_id_of(m, info->build_id);
			dist = view_lookup(m, ip - 1, &name, &name_max, &size);
			if (dist != UINT64_MAX && name && name[0] &&
			    symbol_contains(dist, size)) {
				/* Truncated at the buffer as libunwind's
				 * strncpy leaves it. */
				len = strnlen(name, name_max < symbol_cap - 1 ? name_max : symbol_cap - 1);
				memcpy(symbol, name, len);
				symbol[len] = '\0';
				info->has_symbol = 1;
				info->symbol_len = len;
				info->offset = dist + 1;
			}
		}
	}
	if (fallback)
		fallbacks++;
	pthread_mutex_unlock(&lock);
	if (!fallback)
		return;

	acc = unw_get_accessors(unw_local_addr_space);
	if (!acc || !acc->get_proc_name)
		return;
	rc = acc->get_proc_name(unw_local_addr_space, (unw_word_t)(ip - 1),
				symbol, symbol_cap, &off, NULL);
	if ((rc == 0 || rc == -UNW_ENOMEM) && symbol[0]) {
		symbol[symbol_cap - 1] = '\0';
		info->has_symbol = 1;
		info->symbol_len = strlen(symbol);
		info->offset = off + 1;
	}
}

void mt_symbol_load(void)
{
	uint64_t gen = loader_generation();

	pthread_mutex_lock(&lock);
	if (!loaded || gen != loaded_gen) {
		loaded = reload() == 0;
		loaded_gen = gen;
	}
	pthread_mutex_unlock(&lock);
}

void mt_symbol_stats(mt_symbol_stats_t *stats)
{
	pthread_mutex_lock(&lock);
	stats->maps_reads = maps_reads;
	stats->fallbacks = fallbacks;
	stats->indexed = indexed;
	pthread_mutex_unlock(&lock);
}

int mt_symbol_probe(uint64_t at, uint64_t ip, mt_symbol_probe_t *scan,
		    mt_symbol_probe_t *via_index)
{
	module_t *m;
	int ok = 0;

	memset(scan, 0, sizeof(*scan));
	memset(via_index, 0, sizeof(*via_index));
	pthread_mutex_lock(&lock);
	m = find(at);
	if (!m) {
		reload();
		m = find(at);
	}
	if (m && m->view == VIEW_UNTRIED)
		view_open(m);
	if (m && m->view == VIEW_OK) {
		if (m->index_state != INDEX_OK)
			index_build(m, 0);
		if (m->index_state == INDEX_OK) {
			scan->distance = view_scan(m, ip, &scan->name, &scan->name_max,
						   &scan->size);
			via_index->distance = index_lookup(m, ip, &via_index->name,
						   &via_index->name_max,
						   &via_index->size);
			ok = 1;
		}
	}
	pthread_mutex_unlock(&lock);
	return ok;
}

void mt_symbol_reset(void)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nmodules; i++)
		drop_view(&modules[i]);
	nmodules = 0;
	pool_used = 0;
	loaded = 0;
	pthread_mutex_unlock(&lock);
}

void mt_symbol_fork_prepare(void)
{
	pthread_mutex_lock(&lock);
}

void mt_symbol_fork_parent(void)
{
	pthread_mutex_unlock(&lock);
}

void mt_symbol_fork_child(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;

	lock = fresh;
}
