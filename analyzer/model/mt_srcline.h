/*
 * mt_srcline: source lines for a trace's frames, found after the run from
 * the module path and module offset each frame event carries, with libdw
 * (elfutils): the module's own DWARF, else a separate debug file found
 * locally by build id (/usr/lib/debug/.build-id/) or by .gnu_debuglink
 * (beside the module, in its .debug/, or under /usr/lib/debug).  It never
 * goes to the network: debuginfod is not asked, whatever DEBUGINFOD_URLS
 * says, so a report is as fast and as repeatable offline as online.
 *
 * A frame's ip is a return address, so the line looked up is the one of
 * module_offset - 1: the call, not the statement after it.  The function
 * is the module's symbol there when libdw finds one (a debug file's
 * .symtab names the static functions the preload, which sees only dynamic
 * symbols of some modules, may name wrong), else the trace's symbol; a
 * C++ name is demangled (mt_demangle), so every command that names frames
 * through here shows `operator new(unsigned long)`, not `_Znwm`.
 * A symbol names a frame only when its extent contains the call: where
 * libdw reads a module's symbols and none contains it, the trace's own
 * symbol (older traces carry the nearest one below, far away in a
 * stripped module) is dropped and the frame shows as "0xOFFSET in
 * MODULE".  Inlined calls are unfolded (unless inlines is cleared):
 * DWARF's inlined_subroutine scopes at the call, each with its function
 * (the linkage name demangled, else DW_AT_name) and its call site.
 *
 * Each module is opened once and kept open (libdw's strings point into
 * it), each frame resolved once.  A module that is gone, is not a regular
 * ELF file, or has no line information gives no line: the frame falls
 * back to its symbol and offset.  A module whose file's build id is not
 * the one the trace records for the frame (rebuilt since the run) is not
 * asked either: the frame keeps the trace's own name and is flagged
 * (loc.rebuilt); a trace without build ids cannot tell, and takes the
 * file as it is.  Nothing here fails but an allocation of memtrace's own
 * (MT_ENOMEM); libdw's own allocations are outside mt_mem, like json-c's.
 *
 * Invariant: every string a lookup hands out lives until
 * mt_srcline_release(), and the frames passed in must live as long.
 */
#ifndef MT_SRCLINE_H
#define MT_SRCLINE_H

#include <stdint.h>

#include "../base/mt_buf.h"
#include "../model/mt_heap.h"
#include "../base/mt_map.h"

/* A call inlined where a frame is: the inlined function, and where its
 * caller (the next one out) called it. */
typedef struct {
	const char *function; /* demangled; NULL when DWARF names none */
	const char *call_file; /* from /; NULL when unknown */
	uint64_t call_line;   /* 0 when unknown */
} mt_srcline_inline_t;

typedef struct {
	const char *function; /* the module's symbol, else the trace's,
			       * demangled; or NULL */
	uint64_t offset;      /* of the ip from function's start */
	int has_offset;
	const char *file;     /* the source file, from /; NULL when no line is known */
	uint64_t line;
	/* With mt_srcline_t.inlines set: the calls inlined at the frame,
	 * innermost first.  file:line is then inside inlined[0].function;
	 * inlined[i] was called at inlined[i].call_file:call_line from
	 * inlined[i + 1].function, the last one from function. */
	const mt_srcline_inline_t *inlined;
	size_t ninlined;
	/* The module's file has another build id than the trace records
	 * for it: rebuilt since the run, so libdw was not asked and the
	 * rest is the trace's own. */
	int rebuilt;
} mt_srcline_loc_t;

struct mt_srcline_module; /* private */

typedef struct {
	struct mt_srcline_module *modules;
	size_t nmodules, cap;
	mt_map_t by_hash; /* hash of a module path -> index + 1 in modules */
	mt_map_t frames;  /* frame id -> mt_srcline_loc_t */
	char **owned;     /* strings made here (absolute file names) */
	size_t nowned, owned_cap;
	/* Set after init to look up no source lines (file stays NULL): a
	 * caller that prints function names alone (`flamegraph`) spares
	 * itself reading, and inflating, every module's DWARF lines. */
	int names_only;
	/* Unfold the calls inlined at each frame (mt_srcline_loc_t.inlined),
	 * from DWARF's inlined_subroutine scopes: set by init; a caller
	 * that shows no inlined call clears it after init and spares
	 * itself a walk of each frame's unit (names_only keeps it: a
	 * folded stack names each inlined call). */
	int inlines;
} mt_srcline_t;

void mt_srcline_init(mt_srcline_t *s);
void mt_srcline_release(mt_srcline_t *s);

/* Where frame f (with id frame_id) is.  MT_OK, or MT_ENOMEM. */
int mt_srcline_resolve(mt_srcline_t *s, uint64_t frame_id,
		       const mt_frame_t *f, mt_srcline_loc_t *out);

/* One level of a frame: with calls inlined there, a frame stands for
 * several functions, innermost first (level 0), the frame's own function
 * last (level ninlined), as `addr2line -f -i` lists them. */
typedef struct {
	const char *function; /* demangled; NULL when unknown */
	const char *file;     /* from /; NULL when no line is known */
	uint64_t line;
	int inlined;          /* inlined into the next level out */
} mt_srcline_level_t;

/* How many levels loc stands for: its inlined calls, and itself. */
size_t mt_srcline_nlevels(const mt_srcline_loc_t *loc);

/* Level i (< mt_srcline_nlevels()) of loc. */
mt_srcline_level_t mt_srcline_level(const mt_srcline_loc_t *loc, size_t i);

/*
 * Append level i of frame f (resolved as loc) for a person: "function at
 * file:line", else "function+0xoffset" (the frame's own level alone has an
 * offset), else "0xoffset in module-file-name" (the offset in the module)
 * or the bare ip: a frame without a line says so, and names its module,
 * never as a source file.  " (inlined)" after a level inlined into the
 * next, " (rebuilt since the run)" when the module was.  with_module adds
 * " in module" (the full path) to a level that has a line or a function,
 * and names the module of one without by its full path too; without
 * it, a level without a line still ends " in module-file-name".
 */
int mt_srcline_add_level(mt_buf_t *b, const mt_srcline_loc_t *loc, size_t i,
			 const mt_frame_t *f, int with_module);

/*
 * Append frame f for a person: "function at file:line in module" when
 * its line is known, each call inlined there first as "name at
 * file:line, inlined into " (then function's line is the call site of
 * the outermost), else "function+0xoffset in module", " (rebuilt since
 * the run)" after it when the module was (loc.rebuilt), and when even
 * the function is unknown "0xoffset in module" (the offset in the module)
 * or the bare ip "0x...".  Control bytes in the trace's strings become '?'.
 */
int mt_srcline_add_frame(mt_buf_t *b, mt_srcline_t *s, uint64_t frame_id,
			 const mt_frame_t *f);

/* Append s, with bytes below 0x20 and 0x7f as '?': a name from a trace
 * must not break the line it is printed on. */
int mt_srcline_add_clean(mt_buf_t *b, const char *s);

#endif
