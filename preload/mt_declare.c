/*
 * mt_declare: frame and stack declarations (mt_declare.h).  It must never
 * name a frame with the table lock held (naming may take the loader's
 * lock), never publish an id before its record is reserved, and never
 * call malloc.
 */
#include "mt_declare.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "../common/mt_jsonl.h"
#include "../common/mt_ring.h"
#include "mt_layout.h"
#include "mt_lock.h"
#include "mt_nofd.h"
#include "mt_record.h"
#include "mt_stack.h"
#include "mt_symbol.h"
#include "mt_trace.h"

_Static_assert(MT_DECLARE_LINE_CAP <= MT_RING_TEXT_MAX, "a frame's line fits a record");

char mt_declare_line[MT_DECLARE_LINE_CAP] MT_LAYOUT_APART;

void mt_declare_record_line(size_t len)
{
	if (mt_record_text(mt_declare_line, len) < 0)
		mt_trace_collector_lost();
}

/* "build_id":"HEX", the module's build id in lower-case hex, as
 * readelf -n and the debug file paths under /usr/lib/debug/.build-id
 * spell it. */
static void add_build_id(mt_jsonl_t *l, const mt_symbol_info_t *info)
{
	static const char digits[] = "0123456789abcdef";
	char hex[2 * MT_SYMBOL_BUILD_ID_MAX];

	for (size_t i = 0; i < info->build_id_len; i++) {
		hex[2 * i] = digits[info->build_id[i] >> 4];
		hex[2 * i + 1] = digits[info->build_id[i] & 15];
	}
	mt_jsonl_str(l, "build_id", hex, 2 * info->build_id_len, 0);
}

/* Declare ip as a frame: resolve it with no lock held, then record the
 * frame unless another thread did meanwhile, or a module was unloaded
 * meanwhile (the name may be the unloaded module's; the caller asks
 * again).  Returns -1 when the frame table could not take it (no memory
 * to grow it), else 0. */
static int declare_frame(uint64_t ip)
{
	char module[MT_DECLARE_MODULE_CAP], symbol[MT_DECLARE_SYMBOL_CAP];
	uint64_t gen = mt_stack_generation(), id;
	mt_symbol_info_t info;
	mt_jsonl_t l;
	int cancel, rc = 0;

	/* Naming a new frame is the tracer's slowest path, and libunwind's
	 * own naming (a module it reads itself) opens files: no cancel may
	 * act inside it. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	mt_symbol_resolve(ip, &info, module, sizeof(module), symbol,
			  sizeof(symbol));
	pthread_setcancelstate(cancel, NULL);
	if (__builtin_expect(atomic_load(&mt_nofd_refused) != 0, 0))
		mt_trace_clone_refused(atomic_load(&mt_nofd_refused));
	mt_lock_take();
	if (mt_trace_active() && mt_stack_generation() == gen && !mt_stack_frame_find(ip)) {
		mt_jsonl_begin(&l, mt_declare_line, sizeof(mt_declare_line), 0, "frame");
		/* The id the table will give it: reserved before it is
		 * published there. */
		id = mt_stack_frame_add(ip);
		if (id) {
			mt_jsonl_u64(&l, "frame_id", id);
			mt_jsonl_hex(&l, "ip", ip);
			if (info.has_symbol) {
				mt_jsonl_str(&l, "symbol", symbol, info.symbol_len, 0);
				mt_jsonl_hex(&l, "offset", info.offset);
			}
			if (info.has_module) {
				mt_jsonl_str(&l, "module", module, info.module_len, 0);
				mt_jsonl_hex(&l, "module_offset", info.module_offset);
			}
			if (info.build_id_len)
				add_build_id(&l, &info);
			mt_declare_record_line(mt_jsonl_end(&l));
		} else {
			rc = -1;
		}
	}
	mt_lock_give();
	return rc;
}

uint64_t mt_declare_stack(const uint64_t *ips, int n)
{
	uint64_t gen = 0, id;

	if (!n)
		return 0;
	id = mt_stack_cached(ips, n, &gen);
	if (__builtin_expect(id && gen == mt_stack_generation(), 1))
		return id;
	for (;;) {
		int missing = -1;

		mt_lock_take();
		id = mt_stack_find(ips, n);
		if (id || !mt_trace_active())
			break;
		for (int i = 0; i < n && missing < 0; i++)
			if (!mt_stack_frame_find(ips[i]))
				missing = i;
		if (missing < 0) {
			uint64_t ids[MT_STACK_MAX_DEPTH];
			mt_jsonl_t l;

			id = mt_stack_add(ips, n);
			if (!id)
				break;
			mt_stack_frame_ids(ips, n, ids);
			mt_jsonl_begin(&l, mt_declare_line, sizeof(mt_declare_line), 0, "stack");
			mt_jsonl_u64(&l, "stack_id", id);
			mt_jsonl_u64_array(&l, "frames", ids, (size_t)n);
			mt_declare_record_line(mt_jsonl_end(&l));
			break;
		}
		mt_lock_give();
		if (declare_frame(ips[missing]) < 0) {
			/* The frame has no id, and asking again would spin
			 * (a full address space stays full): this stack
			 * goes without one. */
			mt_lock_take();
			id = 0;
			break;
		}
	}
	if (id)
		mt_stack_remember(ips, n, id);
	else if (mt_trace_active())
		atomic_fetch_add(&mt_record_ring.hdr->dropped, 1);
	mt_lock_give();
	return id;
}

/* The module table first: a frame named after the tables are emptied
 * must not be named from the table of before the unload.  A frame named
 * before that is not recorded (declare_frame sees the generation
 * change). */
void mt_declare_forget(void)
{
	mt_symbol_forget();
	mt_lock_take();
	mt_stack_forget();
	mt_lock_give();
}
