/*
 * mt_gate: budgets over a trace or a summary.  It must never let a budget
 * pass on input it could not read (bad input is its own exit status, never
 * 0 or 1), and never print half a report.
 */
#include "../gates/mt_gate.h"


#include <stdio.h>
#include <string.h>

#include "../base/mt_buf.h"
#include "../base/mt_error.h"
#include "../gates/mt_profile.h"
#include "../base/mt_units.h"

/* Frames shown under a failed budget: enough to know the place. */
#define HINT_FRAMES 4

static const struct {
	const char *option;
	mt_profile_field_t field;
	int is_size;
} budgets[MT_GATE_BUDGETS] = {
	[MT_GATE_PEAK] = { "--max-peak", MT_PF_PEAK_LIVE_BYTES, 1 },
	[MT_GATE_LIVE] = { "--max-live", MT_PF_LIVE_BYTES, 1 },
	[MT_GATE_ALLOCATIONS] = { "--max-allocations", MT_PF_ALLOCATIONS, 0 },
	[MT_GATE_TEMPORARY] = { "--max-temporary", MT_PF_TEMPORARY_ALLOCATIONS, 0 },
};

#define ADD(expr)                     \
	do {                          \
		if ((rc = (expr)))    \
			goto cleanup; \
	} while (0)

/* A number, and for a size its reading: "16600 (16.2 KiB)". */
static int add_value(mt_buf_t *b, uint64_t v, int is_size)
{
	int rc;

	ADD(mt_buf_add_u64(b, v));
	if (is_size) {
		ADD(mt_buf_add_str(b, " ("));
		ADD(mt_units_add_size(b, v));
		ADD(mt_buf_add_str(b, ")"));
	}
cleanup:
	return rc;
}

/* The site that weighs most in budget b: the most live bytes, the
 * highest peak of its own, the most calls (its allocations, and its
 * reallocs when the input is a trace: a site that reallocs in a loop
 * costs calls as one that allocates does).  NULL when no site has any
 * (or the summary file lists none). */
static const mt_profile_site_t *heaviest(const mt_profile_t *p,
					 mt_gate_budget_t b)
{
	const mt_profile_site_t *best = NULL;

	for (size_t i = 0; i < p->nsites; i++) {
		const mt_profile_site_t *s = &p->sites[i];
		uint64_t v = b == MT_GATE_LIVE ? s->live_bytes :
			     b == MT_GATE_PEAK ? s->peak_live_bytes : s->calls;
		uint64_t bv = !best ? 0 :
			      b == MT_GATE_LIVE ? best->live_bytes :
			      b == MT_GATE_PEAK ? best->peak_live_bytes : best->calls;

		/* Sites come ranked: the first of equals is kept. */
		if (v > bv)
			best = s;
	}
	return best;
}

/* "most live bytes: 4.0 KiB in 1 block from f (app) < main (app)": the
 * site that weighs most in failed budget b; nothing (and *site NULL) when
 * none does. */
static int add_hint(mt_buf_t *out, const mt_profile_t *p, mt_gate_budget_t b,
		    const mt_profile_site_t **site)
{
	const mt_profile_site_t *s = heaviest(p, b);
	int rc = MT_OK;

	*site = NULL;
	if (!s || b == MT_GATE_TEMPORARY)
		return MT_OK;
	*site = s;
	switch (b) {
	case MT_GATE_LIVE:
		ADD(mt_buf_add_str(out, "most live bytes: "));
		ADD(mt_units_add_size(out, s->live_bytes));
		ADD(mt_buf_add_str(out, " in "));
		ADD(mt_buf_add_u64(out, s->live_allocations));
		ADD(mt_buf_add_str(out, s->live_allocations == 1 ?
					" block from " : " blocks from "));
		break;
	case MT_GATE_PEAK:
		ADD(mt_buf_add_str(out, "highest site peak: "));
		ADD(mt_units_add_size(out, s->peak_live_bytes));
		ADD(mt_buf_add_str(out, " from "));
		break;
	default:
		/* Calls, not allocations: a site's reallocs may take its
		 * calls past the allocations total on the line above. */
		ADD(mt_buf_add_str(out, "most calls: "));
		ADD(mt_buf_add_u64(out, s->calls));
		ADD(mt_buf_add_str(out, " from "));
		break;
	}
	ADD(mt_profile_add_frames(out, p, s, HINT_FRAMES));
cleanup:
	return rc;
}

/* "--max-live 4096 (4.0 KiB): live_bytes is 6192 (6.0 KiB), 2096 (2.0
 * KiB) over": budget b, given, over p; *fail says whether it failed. */
static int add_budget(mt_buf_t *out, const mt_gate_t *o, const mt_profile_t *p,
		      mt_gate_budget_t b, int *fail)
{
	uint64_t v = p->total[budgets[b].field];
	int rc = MT_OK;

	*fail = v > o->limit[b];
	ADD(mt_buf_add_str(out, budgets[b].option));
	ADD(mt_buf_add_str(out, " "));
	ADD(add_value(out, o->limit[b], budgets[b].is_size));
	ADD(mt_buf_add_str(out, ": "));
	ADD(mt_buf_add_str(out, mt_profile_field_name(budgets[b].field)));
	ADD(mt_buf_add_str(out, " is "));
	ADD(add_value(out, v, budgets[b].is_size));
	if (*fail) {
		ADD(mt_buf_add_str(out, ", "));
		ADD(add_value(out, v - o->limit[b], budgets[b].is_size));
		ADD(mt_buf_add_str(out, " over"));
	}
	if (b == MT_GATE_LIVE && o->left.sites) {
		ADD(mt_buf_add_str(out, " ("));
		ADD(mt_suppress_add_left_out(out, &o->left));
		ADD(mt_buf_add_str(out, ")"));
	}
cleanup:
	return rc;
}

/* "--require-complete: status is complete"; *fail when it is not. */
static int add_complete(mt_buf_t *out, const mt_profile_t *p, int *fail)
{
	int rc = MT_OK;

	*fail = strcmp(p->status, "complete") != 0;
	ADD(mt_buf_add_str(out, "--require-complete: status is "));
	ADD(mt_buf_add_str(out, p->status));
	if (*fail && p->message) {
		ADD(mt_buf_add_str(out, ": "));
		ADD(mt_buf_add_str(out, p->message));
	}
cleanup:
	return rc;
}

/* The note lines: a caveated trace judged without --require-complete, a
 * sampled one. */
static int add_notes(mt_buf_t *out, const mt_gate_t *o, const mt_profile_t *p)
{
	int rc = MT_OK;

	if (!o->require_complete && strcmp(p->status, "complete")) {
		ADD(mt_buf_add_str(out, "note: the "));
		ADD(mt_buf_add_str(out, p->source == MT_PROFILE_TRACE ?
					"trace" : "summarized trace"));
		ADD(mt_buf_add_str(out, " is "));
		ADD(mt_buf_add_str(out, p->status));
		ADD(mt_buf_add_str(out, ": its figures cover only the events it "
					"holds (--require-complete fails on it)\n"));
	}
	ADD(mt_profile_add_sampled_note(out, p->source == MT_PROFILE_TRACE ?
				"the trace" : "the summarized trace", p->sample_bytes));
cleanup:
	return rc;
}

/* "memtrace gate: new.jsonl: 2 of 5 budgets failed", no newline. */
static int add_verdict(mt_buf_t *out, const mt_gate_t *o, int failed,
		       int checked)
{
	int rc = MT_OK;

	ADD(mt_buf_add_str(out, "memtrace gate: "));
	ADD(mt_buf_add_str(out, o->path));
	if (o->allocator) {
		ADD(mt_buf_add_str(out, " (allocator "));
		ADD(mt_buf_add_str(out, o->allocator));
		ADD(mt_buf_add_str(out, ")"));
	}
	ADD(mt_buf_add_str(out, ": "));
	if (failed) {
		ADD(mt_buf_add_u64(out, (uint64_t)failed));
		ADD(mt_buf_add_str(out, " of "));
		ADD(mt_buf_add_u64(out, (uint64_t)checked));
		ADD(mt_buf_add_str(out, checked == 1 ? " budget failed" :
						       " budgets failed"));
	} else {
		ADD(mt_buf_add_u64(out, (uint64_t)checked));
		ADD(mt_buf_add_str(out, checked == 1 ? " budget holds" :
						       " budgets hold"));
	}
cleanup:
	return rc;
}

int mt_gate_render(mt_buf_t *out, const mt_gate_t *o, const mt_profile_t *p,
		   int *failed, int *checked)
{
	const mt_profile_site_t *site;
	int rc = MT_OK, fail;

	*failed = *checked = 0;
	for (int i = 0; i < MT_GATE_BUDGETS; i++) {
		mt_gate_budget_t b = (mt_gate_budget_t)i;
		size_t mark;

		if (!o->given[b])
			continue;
		mark = out->len;
		ADD(mt_buf_add_str(out, "ok   "));
		ADD(add_budget(out, o, p, b, &fail));
		if (fail)
			memcpy(out->data + mark, "FAIL ", 5);
		++*checked;
		*failed += fail;
		ADD(mt_buf_add_str(out, "\n"));
		if (!fail)
			continue;
		mark = out->len;
		ADD(mt_buf_add_str(out, "     "));
		ADD(add_hint(out, p, b, &site));
		if (site)
			ADD(mt_buf_add_str(out, "\n"));
		else
			mt_buf_truncate(out, mark);
	}
	if (o->require_complete) {
		size_t mark = out->len;

		ADD(mt_buf_add_str(out, "ok   "));
		ADD(add_complete(out, p, &fail));
		if (fail)
			memcpy(out->data + mark, "FAIL ", 5);
		++*checked;
		*failed += fail;
		ADD(mt_buf_add_str(out, "\n"));
	}
	ADD(add_notes(out, o, p));
	ADD(add_verdict(out, o, *failed, *checked));
	ADD(mt_buf_add_str(out, "\n"));
cleanup:
	return rc;
}

int mt_gate_ci(mt_ci_t *c, const mt_gate_t *o, const mt_profile_t *p)
{
	const mt_profile_site_t *site;
	int rc = MT_OK, fail, failed = 0, checked = 0;
	mt_ci_case_t *k;

	_Static_assert(MT_GATE_BUDGETS + 1 <= MT_CI_CASES_MAX,
		       "a case for every budget and --require-complete");
	ADD(mt_buf_add_str(&c->suite, "memtrace gate "));
	ADD(mt_buf_add_str(&c->suite, o->path));
	if (o->allocator) {
		ADD(mt_buf_add_str(&c->suite, " (allocator "));
		ADD(mt_buf_add_str(&c->suite, o->allocator));
		ADD(mt_buf_add_str(&c->suite, ")"));
	}
	for (int i = 0; i < MT_GATE_BUDGETS; i++) {
		mt_gate_budget_t b = (mt_gate_budget_t)i;

		if (!o->given[b])
			continue;
		k = mt_ci_add(c);
		ADD(mt_buf_add_str(&k->name, budgets[b].option));
		ADD(add_budget(&k->message, o, p, b, &fail));
		k->failed = fail;
		++checked;
		failed += fail;
		if (!fail)
			continue;
		ADD(add_hint(&k->site, p, b, &site));
		if (site)
			ADD(mt_ci_set_site(c, k, p, site));
	}
	if (o->require_complete) {
		k = mt_ci_add(c);
		ADD(mt_buf_add_str(&k->name, "--require-complete"));
		ADD(add_complete(&k->message, p, &fail));
		k->failed = fail;
		++checked;
		failed += fail;
	}
	ADD(add_notes(&c->notes, o, p));
	ADD(add_verdict(&c->verdict, o, failed, checked));
cleanup:
	return rc;
}

const char *mt_gate_budget_option(mt_gate_budget_t b)
{
	return budgets[b].option;
}

int mt_gate_budget_is_size(mt_gate_budget_t b)
{
	return budgets[b].is_size;
}
