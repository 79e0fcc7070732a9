/*
 * mt_drainer: the robust futex list of the rings' drainer words
 * (mt_drainer.h).  It must never leave a ring in the list once it is
 * unmapped, and never let a failure here stop the drain: without a word
 * the program asks the kernel.
 */
#include "mt_drainer.h"

#include <errno.h>
#include <linux/futex.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

static struct robust_list_head head = { .list = { &head.list } };
static int registered;
/* The thread whose list it is, as the words hold it. */
static uint32_t tid;

/* A ring's entry in the list: its drainer_link field. */
static struct robust_list *entry_of(mt_ring_hdr_t *h)
{
	return (struct robust_list *)&h->drainer_link;
}

int mt_drainer_take(mt_ring_hdr_t *h)
{
	struct robust_list *e = entry_of(h);

	if (!registered) {
		head.futex_offset = (long)(offsetof(mt_ring_hdr_t, drainer) -
					   offsetof(mt_ring_hdr_t, drainer_link));
		head.list_op_pending = NULL;
		if (syscall(SYS_set_robust_list, &head, sizeof(head)) < 0)
			return -errno;
		registered = 1;
		tid = (uint32_t)syscall(SYS_gettid) & FUTEX_TID_MASK;
	}
	atomic_store(&h->drainer, tid);
	e->next = head.list.next;
	head.list.next = e;
	return 0;
}

void mt_drainer_release(mt_ring_hdr_t *h)
{
	struct robust_list *e = entry_of(h);

	for (struct robust_list *p = &head.list; p->next != &head.list; p = p->next) {
		if (p->next == e) {
			p->next = e->next;
			return;
		}
	}
}
