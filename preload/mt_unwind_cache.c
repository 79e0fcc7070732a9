/*
 * mt_unwind_cache: rules read from .eh_frame, cached per thread, and the
 * previous walk taken again where its slots still hold what it read
 * (mt_unwind_cache.h).  It must never write to the program's memory,
 * call malloc, keep a descriptor, or give a stack libunwind would not:
 * whatever it does not follow exactly as libunwind's fast trace does
 * (libunwind's src/x86_64/Gtrace.c), it leaves to libunwind.
 */
#include "mt_unwind_cache.h"

#include <link.h>
#include <stddef.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "mt_elf.h"
#include "mt_prefault.h"
#include "mt_spares.h"
#include "mt_unwind_share.h"

#define TLS __thread __attribute__((tls_model("initial-exec")))

/* ---- rules ---- */

enum { RULE_STANDARD = 1, RULE_LAST, RULE_OTHER };
/* rbp_off when the frame leaves rbp as it was. */
#define RBP_KEPT INT16_MIN

typedef struct {
	uint64_t ip; /* 0: an empty slot; written last */
	int32_t cfa_off;
	int16_t rbp_off;
	uint8_t kind;
	uint8_t cfa_rsp; /* 1: CFA = rsp + cfa_off; 0: rbp + cfa_off */
} rule_t;

/* What follows the address is the rule a fork's processes share, in one
 * word (mt_unwind_share.h). */
_Static_assert(offsetof(rule_t, cfa_off) == 8 && sizeof(rule_t) == 16, "a rule is a word");

/* DWARF's numbers of the registers a rule may name. */
#define DW_RBP 6
#define DW_RSP 7
#define DW_RA 16
/* libunwind keeps rules for registers 0..16 and fails on others. */
#define DW_REGS 17

enum { WHERE_SAME, WHERE_UNDEF, WHERE_CFAREL, WHERE_OTHER };

typedef struct {
	uint8_t where;
	int64_t off;
} reg_t;

typedef struct {
	uint64_t cfa_reg;
	int64_t cfa_off;
	int cfa_expr;
	reg_t rbp, rsp, ra;
} row_t;

/* The registers of a row the walk reads; NULL for the others. */
static reg_t *row_reg(row_t *r, uint64_t reg)
{
	switch (reg) {
	case DW_RBP:
		return &r->rbp;
	case DW_RSP:
		return &r->rsp;
	case DW_RA:
		return &r->ra;
	}
	return NULL;
}

static uint64_t uleb(const uint8_t **pp, const uint8_t *end)
{
	uint64_t v = 0;
	unsigned shift = 0;
	const uint8_t *p = *pp;

	while (p < end) {
		uint8_t b = *p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	*pp = p;
	return v;
}

static int64_t sleb(const uint8_t **pp, const uint8_t *end)
{
	int64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0;
	const uint8_t *p = *pp;

	while (p < end) {
		b = *p++;
		if (shift < 64)
			v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	if (shift < 64 && (b & 0x40))
		v |= -((int64_t)1 << shift);
	*pp = p;
	return v;
}

/* A pointer of encoding enc (DW_EH_PE_*) at *pp: absolute or relative
 * to its own place (pcrel), or to base (datarel).  -1 for the others. */
static int read_enc(const uint8_t **pp, const uint8_t *end, uint8_t enc, uint64_t base,
		    uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v;

	if (enc == 0xff || (enc & 0x80))
		return -1;
	switch (enc & 0x0f) {
	case 0x00:
	case 0x04:
	case 0x0c:
		if (end - p < 8)
			return -1;
		memcpy(&v, p, 8);
		*pp = p + 8;
		break;
	case 0x01:
		v = uleb(pp, end);
		break;
	case 0x09:
		v = (uint64_t)sleb(pp, end);
		break;
	case 0x02: {
		uint16_t u;

		if (end - p < 2)
			return -1;
		memcpy(&u, p, 2);
		v = u;
		*pp = p + 2;
		break;
	}
	case 0x0a: {
		int16_t s;

		if (end - p < 2)
			return -1;
		memcpy(&s, p, 2);
		v = (uint64_t)(int64_t)s;
		*pp = p + 2;
		break;
	}
	case 0x03: {
		uint32_t u;

		if (end - p < 4)
			return -1;
		memcpy(&u, p, 4);
		v = u;
		*pp = p + 4;
		break;
	}
	case 0x0b: {
		int32_t s;

		if (end - p < 4)
			return -1;
		memcpy(&s, p, 4);
		v = (uint64_t)(int64_t)s;
		*pp = p + 4;
		break;
	}
	default:
		return -1;
	}
	switch (enc & 0x70) {
	case 0x00:
		break;
	case 0x10:
		v += (uint64_t)p;
		break;
	case 0x30:
		v += base;
		break;
	default:
		return -1;
	}
	*out = v;
	return 0;
}

typedef struct {
	const uint8_t *instr, *end; /* the CIE's initial instructions */
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	int has_aug;
	int signal;
} cie_t;

static int parse_cie(const uint8_t *c, cie_t *cie)
{
	uint32_t len;
	const uint8_t *p, *end, *aug;
	uint8_t version;

	memcpy(&len, c, 4);
	if (len == 0 || len == 0xffffffffu)
		return -1;
	p = c + 4;
	end = p + len;
	if (*(const uint32_t *)p != 0)
		return -1;
	p += 4;
	version = *p++;
	if (version != 1 && version != 3)
		return -1;
	aug = p;
	while (p < end && *p)
		p++;
	if (p >= end)
		return -1;
	p++;
	if (aug[0] && aug[0] != 'z')
		return -1; /* "eh" and other old forms */
	cie->code_align = uleb(&p, end);
	cie->data_align = sleb(&p, end);
	cie->ra_reg = version == 1 ? *p++ : uleb(&p, end);
	cie->fde_enc = 0; /* absptr */
	cie->has_aug = aug[0] == 'z';
	cie->signal = 0;
	if (cie->has_aug) {
		uint64_t alen = uleb(&p, end);
		const uint8_t *q = p, *aend = p + alen;

		if (aend > end)
			return -1;
		for (const uint8_t *a = aug + 1; *a; a++) {
			uint64_t ignored;

			switch (*a) {
			case 'R':
				cie->fde_enc = *q++;
				break;
			case 'L':
				q++;
				break;
			case 'P': {
				/* Only its size matters: read as absolute. */
				uint8_t enc = *q++;

				if (read_enc(&q, aend, enc & 0x0f, 0, &ignored) < 0)
					return -1;
				break;
			}
			case 'S':
				cie->signal = 1;
				break;
			default:
				return -1;
			}
		}
		p = aend;
	}
	cie->instr = p;
	cie->end = end;
	return 0;
}

#define STATE_STACK 16

typedef struct {
	row_t row, initial;
	row_t saved[STATE_STACK];
	int nsaved;
} cfi_t;

static int set_reg(cfi_t *s, uint64_t reg, uint8_t where, int64_t off)
{
	reg_t *r;

	if (reg >= DW_REGS)
		return -1;
	r = row_reg(&s->row, reg);
	if (r) {
		r->where = where;
		r->off = off;
	}
	return 0;
}

/*
 * Run the CFA program [p, end) from location *loc while *loc <= upto, as
 * libunwind's run_cfi_program does.  -1 on what the walk does not take.
 */
static int run_cfi(cfi_t *s, const cie_t *cie, const uint8_t *p, const uint8_t *end,
		   uint64_t *loc, uint64_t upto)
{
	while (*loc <= upto && p < end) {
		uint8_t op = *p++, low = op & 0x3f;
		uint64_t reg, u;
		int64_t off;
		reg_t *r;

		switch (op & 0xc0) {
		case 0x40:
			*loc += low * cie->code_align;
			continue;
		case 0x80:
			u = uleb(&p, end);
			if (set_reg(s, low, WHERE_CFAREL, (int64_t)u * cie->data_align) < 0)
				return -1;
			continue;
		case 0xc0:
			if (low >= DW_REGS)
				return -1;
			r = row_reg(&s->row, low);
			if (r)
				*r = *row_reg(&s->initial, low);
			continue;
		}
		switch (op) {
		case 0x00: /* nop */
			break;
		case 0x01: /* set_loc */
			if (read_enc(&p, end, cie->fde_enc, 0, loc) < 0)
				return -1;
			break;
		case 0x02:
			*loc += *p++ * cie->code_align;
			break;
		case 0x03: {
			uint16_t d;

			memcpy(&d, p, 2);
			p += 2;
			*loc += d * cie->code_align;
			break;
		}
		case 0x04: {
			uint32_t d;

			memcpy(&d, p, 4);
			p += 4;
			*loc += d * cie->code_align;
			break;
		}
		case 0x05: /* offset_extended */
			reg = uleb(&p, end);
			u = uleb(&p, end);
			if (set_reg(s, reg, WHERE_CFAREL, (int64_t)u * cie->data_align) < 0)
				return -1;
			break;
		case 0x06: /* restore_extended */
			reg = uleb(&p, end);
			if (reg >= DW_REGS)
				return -1;
			r = row_reg(&s->row, reg);
			if (r)
				*r = *row_reg(&s->initial, reg);
			break;
		case 0x07: /* undefined */
			if (set_reg(s, uleb(&p, end), WHERE_UNDEF, 0) < 0)
				return -1;
			break;
		case 0x08: /* same_value */
			if (set_reg(s, uleb(&p, end), WHERE_SAME, 0) < 0)
				return -1;
			break;
		case 0x09: /* register */
			reg = uleb(&p, end);
			uleb(&p, end);
			if (set_reg(s, reg, WHERE_OTHER, 0) < 0)
				return -1;
			break;
		case 0x0a: /* remember_state */
			if (s->nsaved == STATE_STACK)
				return -1;
			s->saved[s->nsaved++] = s->row;
			break;
		case 0x0b: /* restore_state */
			if (!s->nsaved)
				return -1;
			s->row = s->saved[--s->nsaved];
			break;
		case 0x0c: /* def_cfa */
			s->row.cfa_reg = uleb(&p, end);
			s->row.cfa_off = (int64_t)uleb(&p, end);
			s->row.cfa_expr = 0;
			break;
		case 0x0d: /* def_cfa_register */
			s->row.cfa_reg = uleb(&p, end);
			s->row.cfa_expr = 0;
			break;
		case 0x0e: /* def_cfa_offset */
			s->row.cfa_off = (int64_t)uleb(&p, end);
			break;
		case 0x0f: /* def_cfa_expression */
			u = uleb(&p, end);
			p += u;
			s->row.cfa_expr = 1;
			break;
		case 0x10: /* expression */
		case 0x16: /* val_expression */
			reg = uleb(&p, end);
			u = uleb(&p, end);
			p += u;
			if (set_reg(s, reg, WHERE_OTHER, 0) < 0)
				return -1;
			break;
		case 0x11: /* offset_extended_sf */
			reg = uleb(&p, end);
			off = sleb(&p, end);
			if (set_reg(s, reg, WHERE_CFAREL, off * cie->data_align) < 0)
				return -1;
			break;
		case 0x12: /* def_cfa_sf */
			s->row.cfa_reg = uleb(&p, end);
			s->row.cfa_off = sleb(&p, end) * cie->data_align;
			s->row.cfa_expr = 0;
			break;
		case 0x13: /* def_cfa_offset_sf */
			s->row.cfa_off = sleb(&p, end) * cie->data_align;
			break;
		case 0x14: /* val_offset */
		case 0x15: /* val_offset_sf */
			reg = uleb(&p, end);
			uleb(&p, end);
			if (set_reg(s, reg, WHERE_OTHER, 0) < 0)
				return -1;
			break;
		case 0x2e: /* GNU_args_size */
			uleb(&p, end);
			break;
		case 0x2f: /* GNU_negative_offset_extended */
			reg = uleb(&p, end);
			u = uleb(&p, end);
			if (set_reg(s, reg, WHERE_CFAREL, -(int64_t)u * cie->data_align) < 0)
				return -1;
			break;
		default:
			return -1;
		}
	}
	return 0;
}

typedef struct {
	uint64_t ip;
	const uint8_t *hdr;
	int in;
	uint64_t unloads; /* the loader's count of unloads, or UINT64_MAX */
} find_t;

static int find_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	find_t *f = arg;
	const uint8_t *hdr = NULL;
	int in = 0;

	f->unloads = mt_elf_unloads(info, size);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && f->ip >= lo && f->ip < lo + ph->p_memsz)
			in = 1;
		else if (ph->p_type == PT_GNU_EH_FRAME)
			hdr = (const uint8_t *)lo;
	}
	if (!in)
		return 0;
	f->in = 1;
	f->hdr = hdr;
	return 1;
}

/* The FDE of ip through its module's .eh_frame_hdr table, or NULL; the
 * loader's count of unloads as it said it then into *unloads. */
static const uint8_t *find_fde(uint64_t ip, uint64_t *unloads)
{
	find_t f = { ip, NULL, 0, UINT64_MAX };
	const uint8_t *p, *end;
	const int32_t *table;
	uint64_t ignored, count, base;
	size_t lo, hi;

	dl_iterate_phdr(find_module, &f);
	*unloads = f.unloads;
	if (!f.in || !f.hdr || f.hdr[0] != 1 || f.hdr[3] != 0x3b)
		return NULL;
	base = (uint64_t)f.hdr;
	p = f.hdr + 4;
	end = p + 32;
	if (read_enc(&p, end, f.hdr[1], base, &ignored) < 0 ||
	    read_enc(&p, end, f.hdr[2], base, &count) < 0 || !count)
		return NULL;
	table = (const int32_t *)p;
	/* The last entry whose start is at or below ip. */
	if (ip < base + (uint64_t)(int64_t)table[0])
		return NULL;
	lo = 0;
	hi = count;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (ip < base + (uint64_t)(int64_t)table[2 * mid])
			hi = mid;
		else
			lo = mid;
	}
	return (const uint8_t *)(base + (uint64_t)(int64_t)table[2 * lo + 1]);
}

/* The rule at ip (the address libunwind looks up: a caller's return
 * address minus one), as libunwind's tdep_stash_frame would class it;
 * the loader's count of unloads when it was read into *unloads. */
static void read_rule(uint64_t ip, rule_t *out, uint64_t *unloads)
{
	const uint8_t *fde = find_fde(ip, unloads), *p, *end, *cie_at;
	uint32_t len, cie_off;
	uint64_t begin, range, loc;
	cie_t cie;
	cfi_t s;

	out->kind = RULE_OTHER;
	if (!fde)
		return;
	memcpy(&len, fde, 4);
	if (len == 0 || len == 0xffffffffu)
		return;
	p = fde + 4;
	end = p + len;
	memcpy(&cie_off, p, 4);
	if (!cie_off)
		return;
	cie_at = p - cie_off;
	p += 4;
	if (parse_cie(cie_at, &cie) < 0 || cie.signal || cie.ra_reg != DW_RA)
		return;
	if (read_enc(&p, end, cie.fde_enc, 0, &begin) < 0 ||
	    read_enc(&p, end, cie.fde_enc & 0x0f, 0, &range) < 0)
		return;
	if (ip < begin || ip >= begin + range)
		return;
	if (cie.has_aug) {
		uint64_t alen = uleb(&p, end);

		p += alen;
	}
	memset(&s, 0, sizeof(s));
	s.row.cfa_reg = ~0ull; /* none */
	loc = 0;
	if (run_cfi(&s, &cie, cie.instr, cie.end, &loc, ~0ull) < 0)
		return;
	s.initial = s.row;
	s.nsaved = 0;
	loc = begin;
	if (run_cfi(&s, &cie, p, end, &loc, ip) < 0)
		return;
	if (s.row.cfa_expr || (s.row.cfa_reg != DW_RSP && s.row.cfa_reg != DW_RBP))
		return;
	/* libunwind's unw_step ends the stack where the return address or
	 * rbp is undefined. */
	if (s.row.ra.where == WHERE_UNDEF || s.row.rbp.where == WHERE_UNDEF) {
		out->kind = RULE_LAST;
		return;
	}
	if (s.row.cfa_off <= -(1 << 28) || s.row.cfa_off >= (1 << 28))
		return;
	if (s.row.ra.where != WHERE_CFAREL || s.row.ra.off != -8)
		return;
	if (s.row.rbp.where == WHERE_CFAREL) {
		if (s.row.rbp.off <= -(1 << 14) || s.row.rbp.off >= (1 << 14) ||
		    s.row.rbp.off == -1)
			return;
		out->rbp_off = (int16_t)s.row.rbp.off;
	} else if (s.row.rbp.where == WHERE_SAME) {
		out->rbp_off = RBP_KEPT;
	} else {
		return;
	}
	if (s.row.rsp.where == WHERE_OTHER ||
	    (s.row.rsp.where == WHERE_CFAREL &&
	     (s.row.rsp.off <= -(1 << 14) || s.row.rsp.off >= (1 << 14) || s.row.rsp.off == -1)))
		return;
	out->cfa_off = (int32_t)s.row.cfa_off;
	out->cfa_rsp = s.row.cfa_reg == DW_RSP;
	out->kind = RULE_STANDARD;
}

/* ---- the per-thread state ---- */

/* 8,192 rules a thread, in sets of 4 (a cache line): a direct-mapped
 * table of 4,096 made hot addresses of python3 evict each other, and each
 * eviction reads the rule again.
 *
 * A thread starts with the first RULE_SMALL_BITS' worth of sets (one
 * page), indexed by fewer bits of the same hash, and has the whole table
 * once it has read RULE_GROW_AFTER rules: most threads of a program with
 * many run little code, and the whole table resident in each of them
 * would hold 500 threads at 190 KiB each over their bare size. */
#define RULE_SET_BITS 11
#define RULE_SMALL_BITS 6
#define RULE_GROW_AFTER 64
#define RULE_WAYS 4
#define RULES ((1 << RULE_SET_BITS) * RULE_WAYS)
/* A walk's steps: its outputs and the step that ended it. */
#define FRAMES 300

enum { END_NATURAL, END_TRUNCATED };

/* One step of a walk: the registers it began with (rip already the
 * address looked up), and the two words it read, each where and what:
 * the return address, and the rbp it restored.  A word it did not read
 * (a last step reads neither, a frame that keeps rbp the second) is
 * nothing_read's, which holds 0: checking a step is then the same two
 * loads and compares for every step. */
typedef struct {
	uint64_t sp, rip, bp;
	uint64_t ra_at, ra;
	uint64_t bp_at, bp_read;
	uint64_t pad;
} step_t;

static const uint64_t nothing_read;
#define NOTHING_READ ((uint64_t)&nothing_read)

typedef struct {
	unsigned walks; /* up to PREFAULT_WALKS */
	/* 64 less the bits of the hash that index the table in use, and the
	 * rules read while it is the small one (up to RULE_GROW_AFTER). */
	unsigned shift, misses;
	/* The generation the rules and the record were read in. */
	uint64_t generation;
} state_head_t;

/*
 * What every walk writes lies on one page for the usual stack: the
 * record's end (a walk leaves its steps at the end of rec), its bounds
 * and the rule table's victim, and the start of scratch, with STEPS_AT of
 * the page before the bounds, room for 32 steps either side.  A fork
 * makes the state's pages copy-on-write, and a shell copied two of them
 * after every child.  STEPS_PAD puts the bounds there.
 */
#define PAGE 4096
#define STEPS_AT 2048
#define STEPS_PAD ((STEPS_AT + 2 * PAGE - \
		    (sizeof(state_head_t) + FRAMES * sizeof(step_t)) % PAGE) % PAGE)

typedef struct {
	rule_t rules[RULES] __attribute__((aligned(64)));
	state_head_t h;
	char pad[STEPS_PAD];
	/* The previous walk's steps, rec[base..top), innermost first. */
	step_t rec[FRAMES];
	int base, top, end, valid;
	unsigned victim;
	step_t scratch[FRAMES];
} state_t;

_Static_assert(sizeof(((state_t *)0)->rules) % PAGE == 0, "the state's pages start at its rules");
_Static_assert(offsetof(state_t, base) % PAGE == STEPS_AT, "a walk's writes share a page");

#define STATE_NONE ((state_t *)1)

/* A thread that keeps allocating reads rules into every page of its
 * table, and each page's first rule cost two faults (the look mapped the
 * zero page, the write copied it): at its PREFAULT_WALKS-th walk the
 * table in use and the page every walk writes are made resident in one
 * call each (mt_prefault.h), and the rest of the state once the table is
 * the whole one.  A thread that allocates a few times touches a few
 * pages, and no more. */
#define PREFAULT_WALKS 8

static TLS state_t *state;
/* Rules read from .eh_frame, every thread's (MEMTRACE_STATS=1). */
static _Atomic uint64_t rules_read;
/* Bumped when a module may have been unloaded: a thread's rules and
 * record read in an older one may describe code no longer there. */
static _Atomic uint64_t generation;
static TLS int walking;
static pthread_key_t state_key;
static int state_key_ok;

/* The states of threads that ended, for the threads that start next:
 * their rules are read once for all of them (mt_spares.h). */
static mt_spares_t spare_states = MT_SPARES_INIT;

static void state_drop(void *p)
{
	state = STATE_NONE;
	if (p)
		mt_spares_give(&spare_states, p, sizeof(state_t));
}

static void state_key_make(void)
{
	state_key_ok = pthread_key_create(&state_key, state_drop) == 0;
}

/* What brackets a rule's read from .eh_frame (mt_unwind_cache_init). */
static void (*guard_enter)(void), (*guard_leave)(void);

void mt_unwind_cache_init(void (*enter)(void), void (*leave)(void))
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	guard_enter = enter;
	guard_leave = leave;
	pthread_once(&once, state_key_make);
}

static state_t *thread_state(void)
{
	void *p;

	if (__builtin_expect(state != NULL, 1))
		return state == STATE_NONE ? NULL : state;
	state = STATE_NONE;
	if (!state_key_ok)
		return NULL;
	p = mt_spares_take(&spare_states);
	if (p) {
		/* The rules hold (forget_if_unloaded() still judges them);
		 * the record is of another thread's stack. */
		((state_t *)p)->valid = 0;
	} else {
		p = mmap(NULL, sizeof(state_t), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		((state_t *)p)->h.shift = 64 - RULE_SMALL_BITS;
	}
	if (pthread_setspecific(state_key, p) != 0) {
		mt_spares_give(&spare_states, p, sizeof(state_t));
		return NULL;
	}
	state = p;
	return state;
}

/* The busy thread's state made resident: all of it with the whole
 * table, else the small table and the page every walk writes. */
static void prefault_state(state_t *st)
{
	if (st->h.shift == 64 - RULE_SET_BITS) {
		mt_prefault_range(st, sizeof(*st));
		return;
	}
	mt_prefault_range(st->rules, ((size_t)RULE_WAYS * sizeof(rule_t)) << RULE_SMALL_BITS);
	mt_prefault_range((char *)&st->base - STEPS_AT, PAGE);
}

/* Put rule r in its set of the table hashed by shift, in an empty way,
 * else the set's next victim, and return where.  The address last: a
 * walk that reads the slot meanwhile (it is this thread's) sees it empty,
 * never half written. */
static const rule_t *rule_put(state_t *st, const rule_t *r, unsigned shift)
{
	uint64_t h = r->ip * 0x9e3779b97f4a7c15ull;
	rule_t *set = &st->rules[(h >> shift) * RULE_WAYS], *to = NULL;

	for (int w = 0; w < RULE_WAYS && !to; w++)
		if (!set[w].ip)
			to = &set[w];
	if (!to)
		to = &set[st->victim++ % RULE_WAYS];
	to->ip = 0;
	atomic_signal_fence(memory_order_seq_cst);
	to->cfa_off = r->cfa_off;
	to->rbp_off = r->rbp_off;
	to->kind = r->kind;
	to->cfa_rsp = r->cfa_rsp;
	atomic_signal_fence(memory_order_seq_cst);
	to->ip = r->ip;
	return to;
}

/*
 * The small table becomes the whole one.  A rule of small set s belongs,
 * by the longer prefix of its hash, to one of the sets from s << k on (k
 * the bits added): moving the small sets from the last down, each set is
 * emptied before any rule lands on it, and no rule lands on a small set
 * not yet moved.
 */
static void rule_grow(state_t *st)
{
	for (unsigned s = 1u << RULE_SMALL_BITS; s-- > 0;) {
		rule_t moved[RULE_WAYS];

		memcpy(moved, &st->rules[s * RULE_WAYS], sizeof(moved));
		for (int w = 0; w < RULE_WAYS; w++)
			st->rules[s * RULE_WAYS + w].ip = 0;
		for (int w = 0; w < RULE_WAYS; w++)
			if (moved[w].ip)
				rule_put(st, &moved[w], 64 - RULE_SET_BITS);
	}
	st->h.shift = 64 - RULE_SET_BITS;
	if (st->h.walks >= PREFAULT_WALKS)
		mt_prefault_range(st, sizeof(*st));
}

/* A rule a fork's processes share, for a thread that does not keep it. */
static TLS rule_t shared_rule;
/* The thread's walks in this process, up to PREFAULT_WALKS: a forked
 * child's thread has its parent's state, walks and all. */
static TLS unsigned walks_here;

/*
 * The rule at ip when the thread's table has none: from the table the
 * processes of a fork share (mt_unwind_share.h), else read from
 * .eh_frame (and shared).  Out of line, so that the walk's lookup is the
 * set's four compares and no more.  A thread of fewer than
 * PREFAULT_WALKS walks does not put a shared rule in its table: a forked
 * child that allocates a few times before its exec copied a page of its
 * parent's table for each rule it put.
 */
static __attribute__((noinline, cold)) const rule_t *rule_missed(state_t *st, uint64_t ip)
{
	uint64_t gen = atomic_load_explicit(&generation, memory_order_relaxed), word, unloads;
	rule_t fresh;
	int shared;

	memset(&fresh, 0, sizeof(fresh));
	shared = mt_unwind_share_find(ip, gen, &word);
	if (shared) {
		memcpy(&fresh.cfa_off, &word, sizeof(word));
		fresh.ip = ip;
		if (walks_here < PREFAULT_WALKS) {
			shared_rule = fresh;
			return &shared_rule;
		}
	}
	if (__builtin_expect(st->h.shift != 64 - RULE_SET_BITS, 0) &&
	    ++st->h.misses >= RULE_GROW_AFTER)
		rule_grow(st);
	if (!shared) {
		if (guard_enter)
			guard_enter();
		read_rule(ip, &fresh, &unloads);
		if (guard_leave)
			guard_leave();
		atomic_fetch_add_explicit(&rules_read, 1, memory_order_relaxed);
		fresh.ip = ip;
		memcpy(&word, &fresh.cfa_off, sizeof(word));
		mt_unwind_share_add(ip, gen, unloads, word);
	}
	return rule_put(st, &fresh, st->h.shift);
}

/* The rule at ip: the thread's table's, else rule_missed()'s. */
static inline const rule_t *rule_of(state_t *st, uint64_t ip)
{
	uint64_t h = ip * 0x9e3779b97f4a7c15ull;
	const rule_t *set = &st->rules[(h >> st->h.shift) * RULE_WAYS];

	for (int w = 0; w < RULE_WAYS; w++)
		if (__builtin_expect(set[w].ip == ip, 1))
			return &set[w];
	return rule_missed(st, ip);
}

void mt_unwind_cache_fork_prepare(void)
{
	if (state_key_ok)
		mt_unwind_share_fork_prepare(atomic_load_explicit(&generation,
								  memory_order_relaxed));
}

void mt_unwind_cache_fork_child(void)
{
	if (walks_here)
		walks_here = 0;
	mt_unwind_share_fork_child();
}

/* The loader's count of objects unloaded, or UINT64_MAX when it gives
 * none. */
static int count_unloads(struct dl_phdr_info *info, size_t size, void *arg)
{
	*(uint64_t *)arg = mt_elf_unloads(info, size);
	return 1;
}

/* Most dlcloses only drop a reference (the object is a dependency of
 * another, or was opened twice); only an unload is told to the walks,
 * which would read every rule again.  The count is stored after the
 * bump: a thread that finds it stored finds the bump too. */
int mt_unwind_cache_forget(void)
{
	static _Atomic uint64_t unloads_seen;
	uint64_t unloads = UINT64_MAX;

	dl_iterate_phdr(count_unloads, &unloads);
	if (unloads != UINT64_MAX && atomic_load(&unloads_seen) == unloads)
		return 0;
	atomic_fetch_add_explicit(&generation, 1, memory_order_relaxed);
	atomic_store(&unloads_seen, unloads);
	return 1;
}

/* The thread's rules and record emptied when a module may have been
 * unloaded since they were read.  A rule read during this walk from a
 * module unloaded meanwhile is kept with the generation read here, so
 * the next walk empties it. */
static void forget_if_unloaded(state_t *st)
{
	uint64_t now = atomic_load_explicit(&generation, memory_order_relaxed);

	if (__builtin_expect(st->h.generation == now, 1))
		return;
	/* Only the table in use: the rest of a small one was never written. */
	memset(st->rules, 0, ((size_t)RULE_WAYS * sizeof(rule_t)) << (64 - st->h.shift));
	st->valid = 0;
	st->h.generation = now;
}

uint64_t mt_unwind_cache_rules_read(void)
{
	return atomic_load_explicit(&rules_read, memory_order_relaxed);
}

/* Whether the words step s read still hold what it read. */
static inline int still_holds(const step_t *s)
{
	return !((*(const uint64_t *)s->ra_at ^ s->ra) |
		 (*(const uint64_t *)s->bp_at ^ s->bp_read));
}

/*
 * Take the previous walk's steps from j on, after the i steps of this
 * walk in scratch (its outputs out[0..n) made): returns the outputs, or
 * -1 when they cannot be taken; then *changed is the first step whose
 * slots changed (a step further out may still be taken), or nrec when
 * none can.
 *
 * Only the record's last step can end a walk (a last rule, or a return
 * address too low): every step before it gave an output.  So what is
 * taken is known before a slot is read, and one pass over those steps
 * checks each and copies its output; the steps past them are not read,
 * as this walk would not use them.
 */
static int take_previous(state_t *st, int i, int j, void **out, int n, int max, int *changed)
{
	int nrec = st->top - st->base, natural = st->end == END_NATURAL;
	int avail = nrec - j - natural, take, kept, end, k, src, base, top;
	step_t *r = st->rec + st->base + j;

	if (n + avail >= max) {
		take = kept = max - n;
		end = END_TRUNCATED;
	} else if (natural) {
		take = avail;
		kept = avail + 1;
		end = END_NATURAL;
	} else {
		/* A truncated walk that ends before this one would. */
		*changed = nrec;
		return -1;
	}
	/* The outputs are written as the steps are checked: a walk that
	 * goes on from a changed step writes its own over them.  A natural
	 * end's step writes one past them, within max. */
	for (k = 0; k < kept; k++) {
		if (__builtin_expect(!still_holds(&r[k]), 0)) {
			*changed = j + k;
			return -1;
		}
		out[n + k] = (void *)r[k].ra;
	}
	n += take;
	/* The record: scratch[0..i), then the kept steps where they are. */
	src = st->base + j;
	if (src >= i) {
		base = src - i;
		top = src + kept;
	} else {
		memmove(st->rec + FRAMES - kept, st->rec + src, (size_t)kept * sizeof(step_t));
		top = FRAMES;
		base = FRAMES - kept - i;
	}
	memcpy(st->rec + base, st->scratch, (size_t)i * sizeof(step_t));
	st->base = base;
	st->top = top;
	st->end = end;
	return n;
}

int mt_unwind_cache_from(void **out, int max, uint64_t ra, uint64_t sp, uint64_t bp)
{
	state_t *st;
	uint64_t rip = ra, rsp = sp, rbp = bp, cfa;
	int depth = 0, i = 0, j = 0, changed = -1, n = -1, end = END_NATURAL, nrec;
	const step_t *rec;

	if (walking || max <= 0 || max > FRAMES - 1)
		return -1;
	walking = 1;
	st = thread_state();
	if (!st)
		goto done;
	if (__builtin_expect(st->h.walks < PREFAULT_WALKS, 0) && ++st->h.walks == PREFAULT_WALKS)
		prefault_state(st);
	if (__builtin_expect(walks_here < PREFAULT_WALKS, 0))
		walks_here++;
	forget_if_unloaded(st);
	/* The record describes a walk of the past whatever came since:
	 * taking it again depends only on the registers and the slots.  It
	 * changes only when it is taken, which ends the walk; nrec 0: none
	 * of it can be. */
	rec = st->rec + st->base;
	nrec = st->valid ? st->top - st->base : 0;
	/* The frame ra returns into: the walk's first output. */
	out[depth++] = (void *)ra;
	if (depth == max) {
		n = depth;
		goto done;
	}
	for (;;) {
		step_t *s = &st->scratch[i];
		const rule_t *r;

		/* Every frame here is a caller's: its address looked up is
		 * the return address minus one. */
		rip -= 1;
		/* The previous walk's step with these registers, if any:
		 * from there on this walk would read what it read. */
		while (j < nrec && rec[j].sp < rsp)
			j++;
		/* Past a step whose slots changed: the frames there were
		 * replaced, those further out may not be. */
		if (j < nrec && j > changed && rec[j].sp == rsp && rec[j].rip == rip &&
		    rec[j].bp == rbp) {
			n = take_previous(st, i, j, out, depth, max, &changed);
			if (n >= 0)
				goto done;
			if (changed >= nrec)
				nrec = 0;
		}
		r = rule_of(st, rip);
		s->sp = rsp;
		s->rip = rip;
		s->bp = rbp;
		s->bp_at = NOTHING_READ;
		s->bp_read = 0;
		if (r->kind == RULE_LAST) {
			s->ra_at = NOTHING_READ;
			s->ra = 0;
			i++;
			break;
		}
		if (r->kind != RULE_STANDARD)
			goto done;
		cfa = (r->cfa_rsp ? rsp : rbp) + (uint64_t)(int64_t)r->cfa_off;
		/* A frame below the one it returns to is no stack to walk
		 * fast: libunwind's to judge. */
		if (cfa <= rsp || (cfa & 7))
			goto done;
		s->ra_at = cfa - 8;
		s->ra = *(const uint64_t *)s->ra_at;
		if (r->rbp_off != RBP_KEPT) {
			s->bp_at = cfa + (uint64_t)(int64_t)r->rbp_off;
			rbp = *(const uint64_t *)s->bp_at;
			s->bp_read = rbp;
		}
		rsp = cfa;
		rip = s->ra;
		i++;
		if (rip < 0x4000)
			break;
		out[depth++] = (void *)rip;
		if (depth == max) {
			end = END_TRUNCATED;
			break;
		}
	}
	memcpy(st->rec + FRAMES - i, st->scratch, (size_t)i * sizeof(step_t));
	st->base = FRAMES - i;
	st->top = FRAMES;
	st->end = end;
	st->valid = 1;
	n = depth;
done:
	walking = 0;
	return n;
}
