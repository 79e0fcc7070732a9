/*
 * mt_rows: capture and repetition rows.  The strings here are the seed's
 * and must never change: consumers written for the seed's rows read ours.
 */
#include "../rows/mt_rows.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../base/mt_error.h"
#include "../rows/mt_summary.h"

#define ADD(expr)                     \
	do {                          \
		if ((rc = (expr)))    \
			goto cleanup; \
	} while (0)

static const char *file_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/* Add the process whose trace at path is a child of j's: MT_OK with
 * *bad set when it is no evidence (j->why says so), or MT_ENOMEM. */
static int add_child(mt_row_judgement_t *j, const char *path, int *bad)
{
	mt_integrity_t *ig = &j->analysis.integrity;
	mt_analysis_t c;
	int rc = mt_analysis_run(&c, path);

	*bad = 0;
	if (rc == MT_ENOMEM)
		goto cleanup;
	if (rc == MT_EIO || c.integrity.invalid) {
		snprintf(j->why_buf, sizeof(j->why_buf), "child trace '%s' %s",
			 file_name(path), rc == MT_EIO ? "cannot be read" :
			 "is not valid evidence");
		j->why = j->why_buf;
		*bad = 1;
		rc = MT_OK;
		goto cleanup;
	}
	if ((rc = mt_heap_add_process(&j->analysis.heap, &c.heap)))
		goto cleanup;
	/* The first trace that is not complete gives the status. */
	if (mt_integrity_complete(ig) && !mt_integrity_complete(&c.integrity)) {
		ig->caveats = c.integrity.caveats;
		for (int k = 0; k < MT_CAVEAT_COUNT; k++)
			if (ig->caveats & (1u << k)) {
				int len = snprintf(ig->message[k],
						   sizeof(ig->message[k]),
						   "in %s: %s", file_name(path),
						   c.integrity.message[k]);

				if (len < 0 || (size_t)len >= sizeof(ig->message[k]))
					memcpy(ig->message[k], c.integrity.message[k],
					       sizeof(ig->message[k]));
			}
	}
	ig->malformed += c.integrity.malformed;
cleanup:
	mt_analysis_release(&c);
	return rc;
}

int mt_rows_judge(mt_row_judgement_t *j, const char *path)
{
	return mt_rows_judge_tree(j, path, NULL, 0);
}

int mt_rows_judge_tree(mt_row_judgement_t *j, const char *path,
		       char *const *children, size_t n)
{
	int rc, bad = 0;

	memset(j, 0, sizeof(*j));
	mt_buf_init(&j->summary, 0);
	rc = mt_analysis_run(&j->analysis, path);
	if (rc == MT_ENOMEM)
		return rc;
	if (rc == MT_EIO) {
		j->read_errno = j->analysis.error_errno;
		/* The seed: only FileNotFound is a missing capture; any
		 * other failure to read is an invalid one. */
		j->outcome = (j->read_errno == ENOENT || j->read_errno == ENOTDIR) ?
				     MT_ROW_CAPTURE_MISSING :
				     MT_ROW_SUMMARY_INVALID;
		return MT_OK;
	}
	if (j->analysis.integrity.invalid) {
		j->outcome = MT_ROW_SUMMARY_INVALID;
		j->why = j->analysis.integrity.invalid_message;
		return MT_OK;
	}
	for (size_t i = 0; i < n && !bad; i++)
		if ((rc = add_child(j, children[i], &bad)))
			return rc;
	if (bad) {
		j->outcome = MT_ROW_SUMMARY_INVALID;
		return MT_OK;
	}
	rc = mt_summary_render(&j->analysis, 0, 1, &j->summary);
	if (rc == MT_ETOOLONG) {
		/* The seed renders into 8 KiB and calls a summary that does
		 * not fit invalid. */
		j->outcome = MT_ROW_SUMMARY_INVALID;
		j->why = "its summary line is longer than 8 KiB";
		return MT_OK;
	}
	if (rc)
		return rc;
	j->outcome = MT_ROW_SUMMARY_WRITTEN;
	return MT_OK;
}

void mt_rows_judgement_release(mt_row_judgement_t *j)
{
	mt_buf_release(&j->summary);
	mt_analysis_release(&j->analysis);
}

int mt_rows_capture(mt_buf_t *out, const mt_row_judgement_t *j,
		    const char *capture_path, const char *summary_path)
{
	const char *state, *kind = NULL, *message = NULL;
	size_t mark = out->len;
	int rc;

	switch (j->outcome) {
	case MT_ROW_SUMMARY_WRITTEN:
		state = "summary_written";
		if (!mt_integrity_complete(&j->analysis.integrity)) {
			kind = mt_integrity_status(&j->analysis.integrity);
			message = mt_integrity_message(&j->analysis.integrity);
		}
		break;
	case MT_ROW_CAPTURE_MISSING:
		state = "capture_missing";
		kind = "allocation_trace_missing";
		message = "allocation tracing was requested but produced no "
			  "trace artifact";
		break;
	default:
		state = "summary_invalid";
		kind = "invalid_allocation_trace";
		message = "allocation trace does not contain valid memtrace "
			  "evidence";
		break;
	}
	ADD(mt_buf_add_str(out, "{\"kind\":\"allocation_trace\",\"tool\":"
				"\"lib/memtrace\",\"scope\":\"direct\","
				"\"capture_path\":"));
	ADD(mt_buf_add_json_cstr_or_null(out, capture_path));
	ADD(mt_buf_add_str(out, ",\"summary_path\":"));
	ADD(mt_buf_add_json_cstr_or_null(out, summary_path));
	ADD(mt_buf_add_str(out, ",\"state\":"));
	ADD(mt_buf_add_json_cstr_or_null(out, state));
	ADD(mt_buf_add_str(out, ",\"caveat_kind\":"));
	ADD(mt_buf_add_json_cstr_or_null(out, kind));
	ADD(mt_buf_add_str(out, ",\"caveat_message\":"));
	ADD(mt_buf_add_json_cstr_or_null(out, message));
	ADD(mt_buf_add_str(out, "}\n"));
cleanup:
	if (rc)
		mt_buf_truncate(out, mark);
	return rc;
}

int mt_rows_repetition(mt_buf_t *out, const mt_row_judgement_t *j,
		       uint64_t index, int64_t exit_code)
{
	const char *state = "workload_failed";
	size_t mark = out->len;
	int rc;

	if (j)
		state = j->outcome == MT_ROW_SUMMARY_WRITTEN ? "summary_written" :
			j->outcome == MT_ROW_CAPTURE_MISSING ? "capture_missing" :
							      "summary_invalid";
	ADD(mt_buf_add_str(out, "{\"schema\":\"tiny.profiling.allocation-"
				"repetition/v1\",\"execution_index\":"));
	ADD(mt_buf_add_u64(out, index));
	ADD(mt_buf_add_str(out, ",\"exit_code\":"));
	ADD(mt_buf_add_i64(out, exit_code));
	ADD(mt_buf_add_str(out, ",\"state\":"));
	ADD(mt_buf_add_json_cstr_or_null(out, state));
	ADD(mt_buf_add_str(out, ",\"summary\":"));
	if (j && j->outcome == MT_ROW_SUMMARY_WRITTEN)
		/* The summary line embedded as is, less its newline. */
		ADD(mt_buf_add(out, j->summary.data, j->summary.len - 1));
	else
		ADD(mt_buf_add_str(out, "null"));
	ADD(mt_buf_add_str(out, "}\n"));
cleanup:
	if (rc)
		mt_buf_truncate(out, mark);
	return rc;
}
