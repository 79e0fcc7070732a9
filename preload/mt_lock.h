/*
 * mt_lock: the table lock, one per process.  It guards the frame and stack
 * tables and orders the records that declare them: a frame or stack is
 * published in the tables only after its record is reserved, so any event
 * that finds its id is reserved after the declaration.  Events whose
 * stack the thread's cache knows never take it.
 *
 * A futex word (Drepper, "Futexes Are Tricky", mutex 3): no allocation,
 * no libc lock, errno kept.  Never held while calling into the dynamic
 * loader or libunwind (they may take the loader's lock, which a thread
 * holding it may wait on ours behind), and not recursive.
 */
#ifndef MT_LOCK_H
#define MT_LOCK_H

/* Take the lock, spinning a little, then sleeping on the futex. */
void mt_lock_take(void);

/* Give it back, waking one sleeper if there is one. */
void mt_lock_give(void);

/* In a forked child: the lock is free (the child has one thread, and the
 * fork handlers held the lock across fork()). */
void mt_lock_reset(void);

#endif
