/*
 * mt_srcline: frames to source lines with libdw, cached per module and
 * per frame.  It must never fail a command because of a module: whatever
 * libdw cannot do, the frame keeps what the trace says.  It must never
 * fetch anything over the network either.
 */
#include "../model/mt_srcline.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../model/mt_demangle.h"
#include "../base/mt_error.h"
#include "../base/mt_mem.h"

/* A symbol of a module's table, in the index lookups search. */
typedef struct {
	uint64_t value, size;
	const char *name; /* libdw's, alive while the module is open */
	int bind;         /* binding_value(): global 3, weak 2, local 1 */
	int order;        /* its index in the table */
} sym_t;

/* Symbols sorted by value, then by their order in the table; for the
 * sized ones, end_max[i] is the highest value + size of [0, i]. */
typedef struct {
	sym_t *sized, *sizeless;
	uint64_t *end_max;
	size_t nsized, nsizeless;
} symset_t;

struct mt_srcline_module {
	char *path;
	Dwfl *dwfl;       /* NULL when the module cannot be read */
	Dwfl_Module *mod;
	Dwarf_Addr bias;  /* libdw's address of the module's address 0 */
	int indexed;      /* globals and all are built */
	char *build_id;   /* the file's GNU build id in hex; NULL: none */
	int first_global; /* dwfl_module_getsymtab_first_global() */
	symset_t globals, all;
};

/* ---- finding debug information, locally only ---- */

static uint32_t crc_table[256];

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

/* The CRC-32 .gnu_debuglink records of a debug file; -1 on a read error. */
static int file_crc(int fd, uint32_t *out)
{
	unsigned char buf[65536];
	uint32_t crc = 0xffffffffu;
	ssize_t n;

	if (!crc_table[1])
		crc_init();
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		for (ssize_t i = 0; i < n; i++)
			crc = crc_table[(crc ^ buf[i]) & 0xff] ^ (crc >> 8);
	}
	*out = crc ^ 0xffffffffu;
	return lseek(fd, 0, SEEK_SET) < 0 ? -1 : 0;
}

/* The debuglink file in the places gdb and libdw look, when its CRC is
 * the one the module records. */
static int find_by_debuglink(const char *file_name, const char *link,
			     GElf_Word crc)
{
	char dir[PATH_MAX], path[PATH_MAX];
	const char *slash = strrchr(file_name, '/');
	const char *const fmt[] = { "%s/%s", "%s/.debug/%s", "/usr/lib/debug%s/%s" };
	size_t dlen;

	if (!slash) {
		dir[0] = '.';
		dlen = 1;
	} else {
		dlen = (size_t)(slash - file_name);
		if (dlen >= sizeof(dir))
			return -1;
		memcpy(dir, file_name, dlen);
	}
	dir[dlen] = '\0';
	for (size_t i = 0; i < sizeof(fmt) / sizeof(fmt[0]); i++) {
		uint32_t got;
		int n, fd;

		if (i == 2 && dir[0] != '/')
			continue;
		n = snprintf(path, sizeof(path), fmt[i], dir, link);
		if (n < 0 || (size_t)n >= sizeof(path))
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (file_crc(fd, &got) == 0 && got == crc)
			return fd;
		close(fd);
	}
	return -1;
}

/*
 * dwfl_standard_find_debuginfo() without its last resort, debuginfod,
 * which would fetch files over the network when DEBUGINFOD_URLS is set
 * (Debian sets it for login shells).  The file name is left NULL: libdw
 * would free() it, and memtrace allocates only through mt_mem.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata,
			  const char *modname, GElf_Addr base,
			  const char *file_name, const char *debuglink,
			  GElf_Word crc, char **debuginfo_file_name)
{
	int fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base,
					      file_name, debuglink, crc,
					      debuginfo_file_name);

	if (fd >= 0 || !file_name || !debuglink)
		return fd;
	return find_by_debuglink(file_name, debuglink, crc);
}

/* The module is reported by path; there is no other ELF file to find. */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
		    Dwarf_Addr base, char **file_name, Elf **elfp)
{
	(void)mod, (void)userdata, (void)modname, (void)base;
	(void)file_name, (void)elfp;
	return -1;
}

static char *debuginfo_path = NULL;

static const Dwfl_Callbacks callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* ---- modules ---- */

static uint64_t hash_path(const char *s)
{
	uint64_t h = 0xcbf29ce484222325u; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3u;
	return h;
}

/* Open path with libdw; a module it cannot read is left without dwfl. */
static void module_open(struct mt_srcline_module *m)
{
	GElf_Addr bias;
	struct stat st;

	/* libdw would read a FIFO or a device named by a hostile trace;
	 * only a regular file can be a module. */
	if (stat(m->path, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	m->dwfl = dwfl_begin(&callbacks);
	if (!m->dwfl)
		return;
	m->mod = dwfl_report_offline(m->dwfl, m->path, m->path, -1);
	if (dwfl_report_end(m->dwfl, NULL, NULL) != 0 || !m->mod ||
	    !dwfl_module_getelf(m->mod, &bias)) {
		dwfl_end(m->dwfl);
		m->dwfl = NULL;
		m->mod = NULL;
		return;
	}
	m->bias = bias;
}

/* The file's build id as lower-case hex, as the preload writes it in
 * the trace; NULL when it has none.  MT_OK or MT_ENOMEM. */
static int module_build_id(struct mt_srcline_module *m)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n = m->mod ? dwfl_module_build_id(m->mod, &bits, &vaddr) : 0;

	if (n <= 0)
		return MT_OK;
	m->build_id = mt_mem_malloc(2 * (size_t)n + 1);
	if (!m->build_id)
		return MT_ENOMEM;
	for (int i = 0; i < n; i++) {
		m->build_id[2 * i] = digits[bits[i] >> 4];
		m->build_id[2 * i + 1] = digits[bits[i] & 15];
	}
	m->build_id[2 * n] = '\0';
	return MT_OK;
}

/* Whether the module's file is not the one the frame ran in: the trace
 * records the build id of the file that ran, and this one differs (or
 * has none).  A trace without build ids cannot tell: never. */
static int module_rebuilt(const struct mt_srcline_module *m,
			  const mt_frame_t *f)
{
	return f->build_id && f->build_id[0] &&
	       (!m->build_id || strcasecmp(m->build_id, f->build_id));
}

/* The module entry for path, opened the first time it is named. */
static int module_find(mt_srcline_t *s, const char *path,
		       struct mt_srcline_module **out)
{
	uint64_t h = hash_path(path);
	struct mt_srcline_module *m;
	void *v = mt_map_find(&s->by_hash, h);
	size_t i;
	int created;

	if (v) {
		i = *(size_t *)v - 1;
		if (!strcmp(s->modules[i].path, path)) {
			*out = &s->modules[i];
			return MT_OK;
		}
		/* Two paths with one hash: the later one is looked for
		 * by name, which is slow but never wrong. */
		for (i = 0; i < s->nmodules; i++)
			if (!strcmp(s->modules[i].path, path)) {
				*out = &s->modules[i];
				return MT_OK;
			}
	}
	if (s->nmodules == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct mt_srcline_module *grown =
			mt_mem_realloc(s->modules, cap * sizeof(*grown));

		if (!grown)
			return MT_ENOMEM;
		s->modules = grown;
		s->cap = cap;
	}
	m = &s->modules[s->nmodules];
	memset(m, 0, sizeof(*m));
	m->path = mt_mem_strndup(path, strlen(path));
	if (!m->path)
		return MT_ENOMEM;
	if (mt_map_upsert(&s->by_hash, h, &v, &created)) {
		mt_mem_free(m->path);
		return MT_ENOMEM;
	}
	if (created)
		*(size_t *)v = s->nmodules + 1;
	s->nmodules++;
	module_open(m);
	*out = m;
	return module_build_id(m);
}

/* ---- symbols ----
 *
 * dwfl_module_addrinfo() reads the whole symbol table on every call: on
 * cc1 (28,902 dynamic symbols) 7,470 frames took 3.9 s, which made
 * `flamegraph` (every frame of every stack) 27 times slower than `report`
 * (the top sites' frames).  So each module's table is read once into
 * sorted arrays and searched by bisection, with libdwfl's rule
 * (dwfl_module_addrsym.c): the sized symbol that contains the address,
 * the closest below it first, then the strongest binding; the global
 * symbols first and the local ones only when no global fits; without a
 * sized one, the closest sizeless symbol (an assembly label) that no
 * sized symbol's extent passes.  Where libdwfl's choice among nested
 * symbols depends on their order in the table, this takes the closest.
 */

static int binding_value(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		return 3;
	case STB_WEAK:
		return 2;
	case STB_LOCAL:
		return 1;
	default:
		return 0;
	}
}

static int cmp_sym(const void *x, const void *y)
{
	const sym_t *a = x, *b = y;

	if (a->value != b->value)
		return a->value < b->value ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

static void symset_release(symset_t *set)
{
	mt_mem_free(set->sized);
	mt_mem_free(set->sizeless);
	mt_mem_free(set->end_max);
	memset(set, 0, sizeof(*set));
}

/* The symbols of table entries [from, to) that libdwfl would consider. */
static int symset_build(Dwfl_Module *mod, int from, int to, symset_t *set)
{
	size_t n = to > from ? (size_t)(to - from) : 0;

	set->sized = mt_mem_malloc((n ? n : 1) * sizeof(*set->sized));
	set->sizeless = mt_mem_malloc((n ? n : 1) * sizeof(*set->sizeless));
	set->end_max = mt_mem_malloc((n ? n : 1) * sizeof(*set->end_max));
	if (!set->sized || !set->sizeless || !set->end_max) {
		symset_release(set);
		return MT_ENOMEM;
	}
	for (int i = from; i < to; i++) {
		GElf_Sym sym;
		GElf_Addr value;
		GElf_Word shndx;
		Elf *elf;
		Dwarf_Addr bias;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &value,
							   &shndx, &elf, &bias);
		int type = GELF_ST_TYPE(sym.st_info);
		sym_t s;

		if (!name || !name[0] || sym.st_shndx == SHN_UNDEF ||
		    type == STT_SECTION || type == STT_FILE || type == STT_TLS)
			continue;
		s = (sym_t){ value, sym.st_size, name, binding_value(&sym), i };
		if (s.size)
			set->sized[set->nsized++] = s;
		else
			set->sizeless[set->nsizeless++] = s;
	}
	qsort(set->sized, set->nsized, sizeof(sym_t), cmp_sym);
	qsort(set->sizeless, set->nsizeless, sizeof(sym_t), cmp_sym);
	for (size_t i = 0; i < set->nsized; i++) {
		uint64_t end = set->sized[i].value + set->sized[i].size;

		set->end_max[i] = i && set->end_max[i - 1] > end ?
					  set->end_max[i - 1] : end;
	}
	return MT_OK;
}

/* How many of n symbols sorted by value have a value <= addr. */
static size_t count_at_or_below(const sym_t *syms, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (syms[mid].value <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The best sized symbol containing addr and the best sizeless one below
 * it, as libdwfl's search_table() leaves them; NULL when none. */
static void symset_find(const symset_t *set, uint64_t addr,
			const sym_t **sized, const sym_t **sizeless,
			uint64_t *min_label)
{
	size_t i = count_at_or_below(set->sized, set->nsized, addr);
	size_t j = count_at_or_below(set->sizeless, set->nsizeless, addr);
	const sym_t *best = NULL;

	*min_label = i ? set->end_max[i - 1] : 0;
	/* Back from the closest, while some symbol below still reaches
	 * past addr: end_max says when none does. */
	while (i-- > 0 && set->end_max[i] > addr) {
		const sym_t *s = &set->sized[i];

		if (best && s->value < best->value)
			break;
		if (addr - s->value < s->size &&
		    (!best || s->bind >= best->bind))
			best = s; /* the same value: the first in the table
				   * of the strongest binding */
	}
	*sized = best;
	best = NULL;
	while (j-- > 0) {
		const sym_t *s = &set->sizeless[j];

		if (best && s->value < best->value)
			break;
		if (!best || s->bind >= best->bind)
			best = s;
	}
	*sizeless = best;
}

static int module_index(struct mt_srcline_module *m)
{
	int n = dwfl_module_getsymtab(m->mod);
	int first = n > 0 ? dwfl_module_getsymtab_first_global(m->mod) : 0;

	if (n < 0 || first < 0)
		n = first = 0;
	m->first_global = first;
	if (symset_build(m->mod, first ? first : 1, n, &m->globals))
		return MT_ENOMEM;
	if (first > 1 && symset_build(m->mod, 1, n, &m->all)) {
		symset_release(&m->globals);
		return MT_ENOMEM;
	}
	m->indexed = 1;
	return MT_OK;
}

/* dwfl_module_addrinfo()'s answer for addr, from the index. */
static const sym_t *module_symbol(const struct mt_srcline_module *m,
				  uint64_t addr)
{
	const sym_t *sized, *sizeless;
	uint64_t min_label;

	symset_find(&m->globals, addr, &sized, &sizeless, &min_label);
	if (sized)
		return sized;
	/* The locals only when no global fits, unless a global label is
	 * exactly there. */
	if (m->first_global > 1 && !(sizeless && sizeless->value == addr))
		symset_find(&m->all, addr, &sized, &sizeless, &min_label);
	if (sized)
		return sized;
	return sizeless && sizeless->value >= min_label ? sizeless : NULL;
}

void mt_srcline_init(mt_srcline_t *s)
{
	memset(s, 0, sizeof(*s));
	s->inlines = 1;
	mt_map_init(&s->by_hash, sizeof(size_t));
	mt_map_init(&s->frames, sizeof(mt_srcline_loc_t));
}

void mt_srcline_release(mt_srcline_t *s)
{
	for (size_t i = 0; i < s->nmodules; i++) {
		if (s->modules[i].dwfl)
			dwfl_end(s->modules[i].dwfl);
		symset_release(&s->modules[i].globals);
		symset_release(&s->modules[i].all);
		mt_mem_free(s->modules[i].path);
		mt_mem_free(s->modules[i].build_id);
	}
	mt_mem_free(s->modules);
	for (size_t i = 0; i < s->nowned; i++)
		mt_mem_free(s->owned[i]);
	mt_mem_free(s->owned);
	mt_map_release(&s->by_hash);
	mt_map_release(&s->frames);
	mt_srcline_init(s);
}

/* Keep str (mt_mem memory) until release; frees it when it cannot. */
static int own(mt_srcline_t *s, char *str)
{
	if (s->nowned == s->owned_cap) {
		size_t cap = s->owned_cap ? s->owned_cap * 2 : 16;
		char **grown = mt_mem_realloc(s->owned, cap * sizeof(*grown));

		if (!grown) {
			mt_mem_free(str);
			return MT_ENOMEM;
		}
		s->owned = grown;
		s->owned_cap = cap;
	}
	s->owned[s->nowned++] = str;
	return MT_OK;
}

/* file as a path from /: DWARF names a file relative to its unit's
 * directory, dir, and a report is read from anywhere. */
static int absolute_in(mt_srcline_t *s, const char *dir, const char *file,
		       const char **out)
{
	size_t dlen, flen;
	char *joined;

	*out = file;
	if (file[0] == '/' || !dir || dir[0] != '/')
		return MT_OK;
	dlen = strlen(dir);
	flen = strlen(file);
	joined = mt_mem_malloc(dlen + 1 + flen + 1);
	if (!joined)
		return MT_ENOMEM;
	memcpy(joined, dir, dlen);
	joined[dlen] = '/';
	memcpy(joined + dlen + 1, file, flen + 1);
	*out = joined;
	return own(s, joined);
}

static int absolute(mt_srcline_t *s, Dwfl_Line *line, const char *file,
		    const char **out)
{
	return absolute_in(s, dwfl_line_comp_dir(line), file, out);
}

static int demangle(mt_srcline_t *s, const char **name);

/* The name of an inlined call's function: its linkage name demangled (a
 * C++ function's full name), else its DW_AT_name, through the abstract
 * origin where the names are. */
static int inline_name(mt_srcline_t *s, Dwarf_Die *die, const char **out)
{
	static const int attrs[] = { DW_AT_linkage_name, DW_AT_MIPS_linkage_name,
				     DW_AT_name };
	Dwarf_Attribute attr;

	*out = NULL;
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		const char *name = dwarf_formstring(
			dwarf_attr_integrate(die, attrs[i], &attr));

		if (name && *name) {
			*out = name;
			return demangle(s, out);
		}
	}
	return MT_OK;
}

/* The number of inlined_subroutine scopes among scopes[0, n). */
static size_t count_inlined(const Dwarf_Die *scopes, int n)
{
	size_t count = 0;

	for (int i = 0; i < n; i++)
		count += dwarf_tag((Dwarf_Die *)&scopes[i]) ==
			 DW_TAG_inlined_subroutine;
	return count;
}

/*
 * The calls inlined at call (libdw's address), innermost first, up to
 * the function they are all in, as `addr2line -i` gives them.
 * dwarf_getscopes() follows an inlined call into its abstract origin
 * (the inlined function's own definition, not where it was inlined), so
 * only its innermost scope is taken; dwarf_getscopes_die() of that one
 * gives the scopes it is physically in, each inlined call's caller up to
 * the concrete function.  libdw's scope arrays are malloc()ed by libdw,
 * and freed here.
 */
static int unfold_inlines(mt_srcline_t *s, struct mt_srcline_module *m,
			  Dwarf_Addr call, mt_srcline_loc_t *loc)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(m->mod, call, &bias);
	Dwarf_Die *scopes = NULL, *physical = NULL, innermost;
	Dwarf_Files *files = NULL;
	Dwarf_Attribute attr;
	mt_srcline_inline_t *chain;
	const char *dir;
	size_t nfiles = 0, count;
	int n, rc = MT_OK;

	if (!cu || (n = dwarf_getscopes(cu, call - bias, &scopes)) <= 0)
		goto cleanup;
	innermost = scopes[0];
	if ((n = dwarf_getscopes_die(&innermost, &physical)) <= 0 ||
	    !(count = count_inlined(physical, n)))
		goto cleanup;
	chain = mt_mem_calloc(count, sizeof(*chain));
	if (!chain || (rc = own(s, (char *)chain))) {
		rc = MT_ENOMEM;
		goto cleanup;
	}
	loc->inlined = chain;
	loc->ninlined = count;
	if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0)
		files = NULL;
	dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
	for (int i = 0, j = 0; i < n && (size_t)j < count; i++) {
		Dwarf_Word file = 0, line = 0;
		const char *name;

		if (dwarf_tag(&physical[i]) != DW_TAG_inlined_subroutine)
			continue;
		if ((rc = inline_name(s, &physical[i], &name)))
			goto cleanup;
		chain[j].function = name;
		if (dwarf_formudata(dwarf_attr(&physical[i], DW_AT_call_line,
					       &attr), &line) == 0)
			chain[j].call_line = line;
		if (files &&
		    dwarf_formudata(dwarf_attr(&physical[i], DW_AT_call_file,
					       &attr), &file) == 0 &&
		    file < nfiles && (name = dwarf_filesrc(files, file, NULL, NULL)) &&
		    *name &&
		    (rc = absolute_in(s, dir, name, &chain[j].call_file)))
			goto cleanup;
		j++;
	}
cleanup:
	free(scopes);
	free(physical);
	return rc;
}

/*
 * What libdw knows of the call before a return address: the function's
 * name from the module's symbol table (the debug file's .symtab, which
 * names static functions the preload's dynamic symbols may miss, so it
 * wins over the trace's symbol), and the call's line.
 */
static int lookup(mt_srcline_t *s, struct mt_srcline_module *m,
		  uint64_t module_offset, mt_srcline_loc_t *loc)
{
	Dwarf_Addr call = m->bias + module_offset - 1;
	const sym_t *sym;
	const char *name;
	uint64_t off;
	Dwfl_Line *line;

	if (!m->indexed && module_index(m))
		return MT_ENOMEM;
	sym = module_symbol(m, call);
	name = sym ? sym->name : NULL;
	off = sym ? call - sym->value : 0;
	/* No symbol of the module's table contains the call (a static
	 * function of a stripped module): the trace's name, from a preload
	 * or a trace older than the extent rule, is the nearest symbol
	 * below, which ends before it; the frame is its module and offset. */
	if (!sym && (m->globals.nsized || m->all.nsized)) {
		loc->function = NULL;
		loc->has_offset = 0;
		loc->offset = 0;
	}

	if (name && *name && *name != '@') {
		const char *at = strchr(name, '@');

		/* "__libc_start_main@@GLIBC_2.34": the version is no part of
		 * the function's name. */
		if (at) {
			char *bare = mt_mem_strndup(name, (size_t)(at - name));

			if (!bare || own(s, bare))
				return MT_ENOMEM;
			name = bare;
		}
		loc->function = name;
		loc->offset = off + 1;
		loc->has_offset = 1;
	}
	if (s->names_only)
		return s->inlines ? unfold_inlines(s, m, call, loc) : MT_OK;
	line = dwfl_module_getsrc(m->mod, call);
	if (line) {
		int lineno = 0;
		const char *file = dwfl_lineinfo(line, NULL, &lineno, NULL,
						 NULL, NULL);

		if (file && *file && lineno > 0) {
			loc->line = (uint64_t)lineno;
			if (absolute(s, line, file, &loc->file))
				return MT_ENOMEM;
		}
	}
	return s->inlines ? unfold_inlines(s, m, call, loc) : MT_OK;
}

/* The function as a person writes it: a C++ name demangled, once a frame
 * (the frame's answer is cached). */
static int demangle(mt_srcline_t *s, const char **name)
{
	char *plain;
	int rc = mt_demangle_name(*name, &plain);

	if (rc || !plain)
		return rc;
	*name = plain;
	return own(s, plain);
}

int mt_srcline_resolve(mt_srcline_t *s, uint64_t frame_id,
		       const mt_frame_t *f, mt_srcline_loc_t *out)
{
	mt_srcline_loc_t loc = { 0 };
	struct mt_srcline_module *m;
	void *v = mt_map_find(&s->frames, frame_id);
	int rc;

	if (v) {
		*out = *(mt_srcline_loc_t *)v;
		return MT_OK;
	}
	if ((f->has & MT_HAS_SYMBOL) && f->symbol[0]) {
		loc.function = f->symbol;
		loc.offset = f->offset;
		loc.has_offset = (f->has & MT_HAS_OFFSET) != 0;
	}
	if ((f->has & MT_HAS_MODULE) && (f->has & MT_HAS_MODULE_OFFSET) &&
	    f->module_offset && f->module[0]) {
		if ((rc = module_find(s, f->module, &m)))
			return rc;
		/* A file rebuilt since the run would name the frame from
		 * other code: the trace's own name stays, flagged. */
		if (m->dwfl && module_rebuilt(m, f))
			loc.rebuilt = 1;
		else if (m->dwfl && (rc = lookup(s, m, f->module_offset, &loc)))
			return rc;
	}
	if (loc.function && (rc = demangle(s, &loc.function)))
		return rc;
	if ((rc = mt_map_upsert(&s->frames, frame_id, &v, NULL)))
		return rc;
	*(mt_srcline_loc_t *)v = loc;
	*out = loc;
	return MT_OK;
}

int mt_srcline_add_clean(mt_buf_t *b, const char *s)
{
	size_t mark = b->len;

	while (*s) {
		size_t n = 0;
		int rc;

		while (s[n] && (unsigned char)s[n] >= 0x20 && s[n] != 0x7f)
			n++;
		if ((rc = mt_buf_add(b, s, n)) ||
		    (s[n] && (rc = mt_buf_add_str(b, "?")))) {
			mt_buf_truncate(b, mark);
			return rc;
		}
		s += n + (s[n] != '\0');
	}
	return MT_OK;
}

/* "NAME at FILE:LINE, inlined into " for each call inlined at the frame,
 * innermost first; then *file and *line are where the frame's own
 * function called the outermost. */
static int add_inlined(mt_buf_t *b, const mt_srcline_loc_t *loc,
		       const char **file, uint64_t *line)
{
	int rc = MT_OK;

	*file = loc->file;
	*line = loc->line;
	for (size_t i = 0; !rc && i < loc->ninlined; i++) {
		const mt_srcline_inline_t *in = &loc->inlined[i];

		rc = mt_srcline_add_clean(b, in->function ? in->function : "??");
		if (!rc && *file && !(rc = mt_buf_add_str(b, " at ")) &&
		    !(rc = mt_srcline_add_clean(b, *file)) &&
		    !(rc = mt_buf_add_str(b, ":")))
			rc = mt_buf_add_u64(b, *line);
		if (!rc)
			rc = mt_buf_add_str(b, ", inlined into ");
		*file = in->call_file;
		*line = in->call_line;
	}
	return rc;
}

int mt_srcline_add_frame(mt_buf_t *b, mt_srcline_t *s, uint64_t frame_id,
			 const mt_frame_t *f)
{
	mt_srcline_loc_t loc;
	size_t mark = b->len;
	int has_module = (f->has & MT_HAS_MODULE) && f->module[0];
	int rc;

	if ((rc = mt_srcline_resolve(s, frame_id, f, &loc)))
		return rc;
	if (loc.ninlined &&
	    (rc = add_inlined(b, &loc, &loc.file, &loc.line))) {
		mt_buf_truncate(b, mark);
		return rc;
	}
	if (loc.function) {
		rc = mt_srcline_add_clean(b, loc.function);
		if (!rc && loc.has_offset && !loc.file &&
		    !(rc = mt_buf_add_str(b, "+")))
			rc = mt_buf_add_hex(b, loc.offset);
	} else if (loc.file) {
		rc = mt_buf_add_str(b, "??");
	} else {
		rc = mt_buf_add_hex(b, has_module &&
					       (f->has & MT_HAS_MODULE_OFFSET) ?
					       f->module_offset : f->ip);
	}
	if (!rc && loc.file &&
	    !(rc = mt_buf_add_str(b, " at ")) &&
	    !(rc = mt_srcline_add_clean(b, loc.file)) &&
	    !(rc = mt_buf_add_str(b, ":")))
		rc = mt_buf_add_u64(b, loc.line);
	if (!rc && has_module && !(rc = mt_buf_add_str(b, " in ")))
		rc = mt_srcline_add_clean(b, f->module);
	if (!rc && loc.rebuilt)
		rc = mt_buf_add_str(b, " (rebuilt since the run)");
	if (rc)
		mt_buf_truncate(b, mark);
	return rc;
}

size_t mt_srcline_nlevels(const mt_srcline_loc_t *loc)
{
	return loc->ninlined + 1;
}

mt_srcline_level_t mt_srcline_level(const mt_srcline_loc_t *loc, size_t i)
{
	mt_srcline_level_t l = { 0 };

	if (i > loc->ninlined)
		i = loc->ninlined;
	l.function = i < loc->ninlined ? loc->inlined[i].function : loc->function;
	l.inlined = i < loc->ninlined;
	if (!i) {
		l.file = loc->file;
		l.line = loc->line;
	} else {
		l.file = loc->inlined[i - 1].call_file;
		l.line = loc->inlined[i - 1].call_line;
	}
	if (!l.file)
		l.line = 0;
	return l;
}

int mt_srcline_add_level(mt_buf_t *b, const mt_srcline_loc_t *loc, size_t i,
			 const mt_frame_t *f, int with_module)
{
	mt_srcline_level_t l = mt_srcline_level(loc, i);
	int has_module = f && (f->has & MT_HAS_MODULE) && f->module[0];
	size_t mark = b->len;
	int rc;

	if (l.function) {
		rc = mt_srcline_add_clean(b, l.function);
		if (!rc && !l.inlined && loc->has_offset && !l.file &&
		    !(rc = mt_buf_add_str(b, "+")))
			rc = mt_buf_add_hex(b, loc->offset);
	} else if (l.file) {
		rc = mt_buf_add_str(b, "??");
	} else if (has_module && (f->has & MT_HAS_MODULE_OFFSET)) {
		const char *slash = strrchr(f->module, '/');

		if (!(rc = mt_buf_add_hex(b, f->module_offset)) &&
		    !(rc = mt_buf_add_str(b, " in ")))
			rc = mt_srcline_add_clean(b, with_module || !slash ||
							     !slash[1] ?
							     f->module : slash + 1);
		has_module = 0;
	} else {
		rc = mt_buf_add_hex(b, f ? f->ip : 0);
	}
	if (!rc && l.file &&
	    !(rc = mt_buf_add_str(b, " at ")) &&
	    !(rc = mt_srcline_add_clean(b, l.file)) &&
	    !(rc = mt_buf_add_str(b, ":")))
		rc = mt_buf_add_u64(b, l.line);
	if (!rc && l.inlined)
		rc = mt_buf_add_str(b, " (inlined)");
	/* Without a line, the module says where the code is. */
	if (!rc && !with_module && has_module && !l.file) {
		const char *slash = strrchr(f->module, '/');

		if (!(rc = mt_buf_add_str(b, " in ")))
			rc = mt_srcline_add_clean(b, slash && slash[1] ?
							     slash + 1 : f->module);
	}
	if (!rc && with_module && has_module &&
	    !(rc = mt_buf_add_str(b, " in ")))
		rc = mt_srcline_add_clean(b, f->module);
	if (!rc && loc->rebuilt)
		rc = mt_buf_add_str(b, " (rebuilt since the run)");
	if (rc)
		mt_buf_truncate(b, mark);
	return rc;
}
