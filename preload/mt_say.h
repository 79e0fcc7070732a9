/*
 * mt_say: the preload's one way to tell the user something: a line
 * "memtrace: " a b c on stderr, written with one write(2) through the
 * system call.  It must never allocate, lock or go through stdio (it is
 * called from hooks, fork handlers and signal handlers), and never be
 * cancelled mid-line.
 */
#ifndef MT_SAY_H
#define MT_SAY_H

/* The longest line written, its prefix included; a longer one is cut. */
#define MT_SAY_MAX (4096 + 512)

/* Write "memtrace: " a b c and a newline in one write(2) (a NULL part is
 * empty): processes of a tree share their stderr, and a line written in
 * parts would interleave with theirs.  errno may change. */
void mt_say_line(const char *a, const char *b, const char *c);

#endif
