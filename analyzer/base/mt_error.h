/*
 * mt_error: the error codes analyzer functions return, and the exit
 * statuses the memtrace command maps them to (spec section 7).
 *
 * Every function that can fail returns MT_OK or a negative MT_E* code and
 * its caller checks it; nothing here is ever ignored or asserted.
 */
#ifndef MT_ERROR_H
#define MT_ERROR_H

enum {
	MT_OK = 0,
	MT_ENOMEM = -1,  /* an allocation failed */
	MT_ETOOLONG = -2, /* a row would pass its size limit */
	MT_EIO = -3,     /* reading the trace failed (errno says why) */
	MT_EOUTPUT = -4, /* writing an output failed (errno says why) */
	MT_ECORRUPT = -5, /* a compressed trace cannot be decoded (mt_reader_why()) */
};

/* Exit statuses of the memtrace command. */
enum {
	MT_EXIT_OK = 0,
	MT_EXIT_CAVEATED = 1,
	MT_EXIT_INVALID = 2,
	MT_EXIT_MISSING = 3,
	MT_EXIT_NOMEM = 4,
	MT_EXIT_USAGE = 64,   /* sysexits' EX_USAGE */
	MT_EXIT_CANTCREAT = 73, /* sysexits' EX_CANTCREAT: an output cannot be written */
	MT_EXIT_TEMPFAIL = 75,  /* sysexits' EX_TEMPFAIL: `top` gave up waiting (--timeout) */
};

#endif
