/*
 * mt_integrity: caveat bookkeeping and the sentences that explain them.
 * It must never quote trace bytes in a message: a message has to fit in a
 * summary line whatever the trace holds.
 */
#include "../model/mt_integrity.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const names[MT_CAVEAT_COUNT] = {
	[MT_CAVEAT_MISSING_START] = "missing_start_event",
	[MT_CAVEAT_SEQUENCE_GAP] = "sequence_gap",
	[MT_CAVEAT_MALFORMED] = "malformed_event",
	[MT_CAVEAT_MISSING_STOP] = "missing_stop_event",
	[MT_CAVEAT_AFTER_STOP] = "events_after_stop",
	[MT_CAVEAT_DROPPED] = "events_dropped",
};

const char *mt_integrity_caveat_name(mt_caveat_t c)
{
	return (unsigned)c < MT_CAVEAT_COUNT ? names[c] : NULL;
}

void mt_integrity_init(mt_integrity_t *ig)
{
	memset(ig, 0, sizeof(*ig));
}

void mt_integrity_set_invalid(mt_integrity_t *ig, const char *fmt, ...)
{
	va_list ap;

	ig->invalid = 1;
	va_start(ap, fmt);
	vsnprintf(ig->invalid_message, sizeof(ig->invalid_message), fmt, ap);
	va_end(ap);
}

static void note(mt_integrity_t *ig, mt_caveat_t c, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void note(mt_integrity_t *ig, mt_caveat_t c, const char *fmt, ...)
{
	va_list ap;

	if (ig->caveats & (1u << c))
		return;
	ig->caveats |= 1u << c;
	va_start(ap, fmt);
	vsnprintf(ig->message[c], sizeof(ig->message[c]), fmt, ap);
	va_end(ap);
}

void mt_integrity_missing_start(mt_integrity_t *ig, const char *kind)
{
	note(ig, MT_CAVEAT_MISSING_START,
	     "the trace does not begin with trace.start: line 1 is %s%s%s",
	     kind ? "'" : "", kind ? kind : "not a valid event",
	     kind ? "'" : "");
}

void mt_integrity_gap(mt_integrity_t *ig, uint64_t line, uint64_t expected,
		      uint64_t found)
{
	note(ig, MT_CAVEAT_SEQUENCE_GAP,
	     "sequence gap at line %llu: expected seq %llu, found %llu",
	     (unsigned long long)line, (unsigned long long)expected,
	     (unsigned long long)found);
}

void mt_integrity_malformed(mt_integrity_t *ig, uint64_t line,
			    const char *why, const char *field)
{
	if (!ig->malformed++) {
		ig->first_malformed_line = line;
		if (field)
			snprintf(ig->first_malformed_why,
				 sizeof(ig->first_malformed_why), "%s ('%s')",
				 why, field);
		else
			snprintf(ig->first_malformed_why,
				 sizeof(ig->first_malformed_why), "%s", why);
	}
	ig->caveats |= 1u << MT_CAVEAT_MALFORMED;
}

void mt_integrity_stop(mt_integrity_t *ig, uint64_t line, uint64_t dropped)
{
	if (ig->stop_line)
		return;
	ig->stop_line = line;
	if (dropped)
		note(ig, MT_CAVEAT_DROPPED,
		     "trace.stop at line %llu reports %llu dropped events",
		     (unsigned long long)line, (unsigned long long)dropped);
}

void mt_integrity_after_stop(mt_integrity_t *ig, uint64_t line)
{
	if (!ig->after_stop++)
		ig->first_after_stop_line = line;
	ig->caveats |= 1u << MT_CAVEAT_AFTER_STOP;
}

void mt_integrity_cut(mt_integrity_t *ig, uint64_t line, int unterminated)
{
	ig->cut_line = line;
	ig->cut_unterminated = unterminated;
}

void mt_integrity_stream_cut(mt_integrity_t *ig, const char *format,
			     const char *unit, uint64_t at)
{
	snprintf(ig->stream_cut, sizeof(ig->stream_cut),
		 "the %s stream is cut off inside its %s at byte %llu", format,
		 unit, (unsigned long long)at);
}

/* The end of a compressed trace cut inside a frame: a trace.stop decoded
 * from it was never followed by the frame's end, as a trace.stop without
 * its newline is not the end of a plain trace. */
static void finish_stream_cut(mt_integrity_t *ig, uint64_t last_line)
{
	if (ig->stop_line)
		note(ig, MT_CAVEAT_MISSING_STOP,
		     "%s, after line %llu: the trace never ended whole, "
		     "whatever its trace.stop at line %llu says",
		     ig->stream_cut, (unsigned long long)last_line,
		     (unsigned long long)ig->stop_line);
	else if (ig->cut_line)
		note(ig, MT_CAVEAT_MISSING_STOP,
		     "no trace.stop: %s, and its last line %llu, which %s, "
		     "was dropped", ig->stream_cut,
		     (unsigned long long)ig->cut_line,
		     ig->cut_unterminated ? "has no newline" :
					    "is not a valid event");
	else
		note(ig, MT_CAVEAT_MISSING_STOP,
		     "no trace.stop after line %llu: %s; the process may have "
		     "been killed", (unsigned long long)last_line,
		     ig->stream_cut);
}

void mt_integrity_finish(mt_integrity_t *ig, uint64_t last_line,
			 int zero_padded)
{
	ig->last_line = last_line;
	ig->zero_padded = zero_padded;
	if (ig->malformed)
		snprintf(ig->message[MT_CAVEAT_MALFORMED],
			 sizeof(ig->message[MT_CAVEAT_MALFORMED]),
			 "%llu malformed event%s skipped; the first, at line "
			 "%llu: %s",
			 (unsigned long long)ig->malformed,
			 ig->malformed == 1 ? "" : "s",
			 (unsigned long long)ig->first_malformed_line,
			 ig->first_malformed_why);
	if (ig->after_stop)
		snprintf(ig->message[MT_CAVEAT_AFTER_STOP],
			 sizeof(ig->message[MT_CAVEAT_AFTER_STOP]),
			 "%llu line%s after trace.stop at line %llu, the first "
			 "at line %llu",
			 (unsigned long long)ig->after_stop,
			 ig->after_stop == 1 ? "" : "s",
			 (unsigned long long)ig->stop_line,
			 (unsigned long long)ig->first_after_stop_line);
	if (ig->stream_cut[0]) {
		finish_stream_cut(ig, last_line);
		return;
	}
	if (ig->stop_line)
		return;
	if (ig->cut_line && ig->cut_unterminated)
		note(ig, MT_CAVEAT_MISSING_STOP,
		     "no trace.stop: the trace is cut off, and its last line "
		     "%llu, which has no newline, was dropped%s",
		     (unsigned long long)ig->cut_line,
		     zero_padded ? " (zero padding follows it)" : "");
	else if (ig->cut_line)
		note(ig, MT_CAVEAT_MISSING_STOP,
		     "no trace.stop: the trace is cut off, and its last line "
		     "%llu, which is not a valid event, was dropped",
		     (unsigned long long)ig->cut_line);
	else
		note(ig, MT_CAVEAT_MISSING_STOP,
		     "no trace.stop after line %llu: the process may have "
		     "been killed%s",
		     (unsigned long long)last_line,
		     zero_padded ? " (zero padding follows it)" : "");
}

int mt_integrity_complete(const mt_integrity_t *ig)
{
	return !ig->invalid && !ig->caveats;
}

static int first_caveat(const mt_integrity_t *ig)
{
	for (int c = 0; c < MT_CAVEAT_COUNT; c++)
		if (ig->caveats & (1u << c))
			return c;
	return -1;
}

const char *mt_integrity_status(const mt_integrity_t *ig)
{
	int c = first_caveat(ig);

	return c < 0 ? "complete" : names[c];
}

const char *mt_integrity_message(const mt_integrity_t *ig)
{
	int c = first_caveat(ig);

	return c < 0 ? NULL : ig->message[c];
}
