/*
 * mt_units: parsing and printing of sizes, counts and percentages.  It
 * must never round a limit up or a value down in a way that lets a budget
 * pass that should fail: the comparisons are exact, in 128 bits.
 */
#include "../base/mt_units.h"

#include <string.h>

#include "../base/mt_error.h"

typedef unsigned __int128 u128;

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Digits at *s into *v; 0, or -1 when there are none or they pass 64
 * bits.  *s is left after them. */
static int digits(const char **s, uint64_t *v)
{
	const char *p = *s;
	uint64_t n = 0;

	if (!is_digit(*p))
		return -1;
	for (; is_digit(*p); p++) {
		unsigned d = (unsigned)(*p - '0');

		if (n > (UINT64_MAX - d) / 10)
			return -1;
		n = n * 10 + d;
	}
	*s = p;
	*v = n;
	return 0;
}

int mt_units_parse_count(const char *s, uint64_t *out)
{
	uint64_t v;

	if (digits(&s, &v) || *s)
		return -1;
	*out = v;
	return 0;
}

int mt_units_parse_size(const char *s, uint64_t *out)
{
	uint64_t whole, frac = 0, scale = 1, mult = 1;
	u128 v;

	if (digits(&s, &whole))
		return -1;
	if (*s == '.') {
		s++;
		if (!is_digit(*s))
			return -1;
		/* Nineteen decimals are more than any suffix can use. */
		for (; is_digit(*s); s++)
			if (scale < 10000000000000000000u) {
				frac = frac * 10 + (uint64_t)(*s - '0');
				scale *= 10;
			}
	}
	switch (*s) {
	case '\0':
		break;
	case 'b': case 'B':
		s++;
		break;
	case 't': case 'T':
		mult *= 1024;
		/* fall through */
	case 'g': case 'G':
		mult *= 1024;
		/* fall through */
	case 'm': case 'M':
		mult *= 1024;
		/* fall through */
	case 'k': case 'K':
		mult *= 1024;
		s++;
		if (s[0] == 'i' && s[1] == 'B')
			s += 2;
		break;
	default:
		return -1;
	}
	if (*s)
		return -1;
	v = (u128)whole * mult + (u128)frac * mult / scale;
	if (v > UINT64_MAX)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

int mt_units_parse_pct(const char *s, uint64_t *milli)
{
	uint64_t whole;
	u128 v;
	int decimals = 0;

	if (digits(&s, &whole))
		return -1;
	v = (u128)whole * 1000;
	if (*s == '.') {
		s++;
		if (!is_digit(*s))
			return -1;
		for (; is_digit(*s); s++) {
			static const unsigned place[] = { 100, 10, 1 };

			if (decimals == 3)
				return -1;
			v += (u128)(unsigned)(*s - '0') * place[decimals++];
		}
	}
	if (*s == '%')
		s++;
	if (*s || v > UINT64_MAX)
		return -1;
	*milli = (uint64_t)v;
	return 0;
}

int mt_units_add_size(mt_buf_t *b, uint64_t bytes)
{
	static const char *const unit[] = { " KiB", " MiB", " GiB" };
	u128 d = 1;
	int rc;

	if (bytes < 1024) {
		if ((rc = mt_buf_add_u64(b, bytes)))
			return rc;
		return mt_buf_add_str(b, " B");
	}
	for (int i = 0; i < 3; i++) {
		u128 tenths;
		size_t mark = b->len;

		d *= 1024;
		tenths = ((u128)bytes * 10 + d / 2) / d;
		if (tenths >= 10240 && i < 2)
			continue;
		if ((rc = mt_buf_add_u64(b, (uint64_t)(tenths / 10))) ||
		    (rc = mt_buf_add_str(b, ".")) ||
		    (rc = mt_buf_add_u64(b, (uint64_t)(tenths % 10))) ||
		    (rc = mt_buf_add_str(b, unit[i]))) {
			mt_buf_truncate(b, mark);
			return rc;
		}
		break;
	}
	return MT_OK;
}

static int add_sign(mt_buf_t *b, uint64_t base, uint64_t now)
{
	if (now > base)
		return mt_buf_add_str(b, "+");
	if (now < base)
		return mt_buf_add_str(b, "-");
	return MT_OK;
}

int mt_units_add_size_change(mt_buf_t *b, uint64_t base, uint64_t now)
{
	size_t mark = b->len;
	int rc;

	if ((rc = add_sign(b, base, now)) ||
	    (rc = mt_units_add_size(b, now > base ? now - base : base - now)))
		mt_buf_truncate(b, mark);
	return rc;
}

int mt_units_add_count_change(mt_buf_t *b, uint64_t base, uint64_t now)
{
	size_t mark = b->len;
	int rc;

	if ((rc = add_sign(b, base, now)) ||
	    (rc = mt_buf_add_u64(b, now > base ? now - base : base - now)))
		mt_buf_truncate(b, mark);
	return rc;
}

int mt_units_add_pct_change(mt_buf_t *b, uint64_t base, uint64_t now)
{
	size_t mark = b->len;
	u128 tenths;
	int rc;

	if (!base)
		return mt_buf_add_str(b, now ? "new" : "0.0%");
	tenths = (u128)(now > base ? now - base : base - now) * 1000 / base;
	if (tenths > UINT64_MAX)
		tenths = UINT64_MAX;
	if ((rc = add_sign(b, base, now)) ||
	    (rc = mt_buf_add_u64(b, (uint64_t)(tenths / 10))) ||
	    (rc = mt_buf_add_str(b, ".")) ||
	    (rc = mt_buf_add_u64(b, (uint64_t)(tenths % 10))) ||
	    (rc = mt_buf_add_str(b, "%")))
		mt_buf_truncate(b, mark);
	return rc;
}

int mt_units_add_milli(mt_buf_t *b, uint64_t milli)
{
	char frac[5];
	size_t mark = b->len;
	unsigned f = (unsigned)(milli % 1000);
	int n = 0, rc;

	if ((rc = mt_buf_add_u64(b, milli / 1000)))
		return rc;
	if (!f)
		return MT_OK;
	frac[n++] = '.';
	frac[n++] = (char)('0' + f / 100);
	frac[n++] = (char)('0' + f / 10 % 10);
	frac[n++] = (char)('0' + f % 10);
	while (frac[n - 1] == '0')
		n--;
	if ((rc = mt_buf_add(b, frac, (size_t)n)))
		mt_buf_truncate(b, mark);
	return rc;
}

int mt_units_grew_beyond(uint64_t base, uint64_t now, uint64_t milli)
{
	if (now <= base)
		return 0;
	if (!base)
		return 1;
	/* now > base * (1 + milli / 100000), without rounding: both sides
	 * times 100000 fit in 128 bits. */
	return (u128)now * 100000 > (u128)base * (100000 + (u128)milli);
}

/* v / d with one decimal, rounded to nearest, then the unit. */
static int add_tenths(mt_buf_t *b, u128 tenths, const char *unit)
{
	size_t mark = b->len;
	int rc;

	if ((rc = mt_buf_add_u64(b, (uint64_t)(tenths / 10))) ||
	    (rc = mt_buf_add_str(b, ".")) ||
	    (rc = mt_buf_add_u64(b, (uint64_t)(tenths % 10))) ||
	    (rc = mt_buf_add_str(b, unit)))
		mt_buf_truncate(b, mark);
	return rc;
}

int mt_units_add_duration(mt_buf_t *b, uint64_t ns)
{
	static const char *const unit[] = { " us", " ms", " s" };
	size_t mark = b->len;
	u128 d = 1;
	int rc;

	if (ns < 1000) {
		if ((rc = mt_buf_add_u64(b, ns)) || (rc = mt_buf_add_str(b, " ns")))
			mt_buf_truncate(b, mark);
		return rc;
	}
	/* The first unit whose rounded value stays below 1000 of it. */
	for (int i = 0;; i++) {
		u128 tenths;

		d *= 1000;
		tenths = ((u128)ns * 10 + d / 2) / d;
		if (tenths < 10000 || i == 2)
			return add_tenths(b, tenths, unit[i]);
	}
}

int mt_units_add_count(mt_buf_t *b, uint64_t n, const char *one,
		     const char *many)
{
	size_t mark = b->len;
	int rc;

	if ((rc = mt_buf_add_u64(b, n)) || (rc = mt_buf_add_str(b, " ")) ||
	    (rc = mt_buf_add_str(b, n == 1 ? one : many)))
		mt_buf_truncate(b, mark);
	return rc;
}

int mt_units_add_size_exact(mt_buf_t *b, uint64_t bytes)
{
	int rc;

	if ((rc = mt_units_add_size(b, bytes)))
		return rc;
	if (bytes < 1024)
		return MT_OK;
	if ((rc = mt_buf_add_str(b, " (")) || (rc = mt_buf_add_u64(b, bytes)))
		return rc;
	return mt_buf_add_str(b, " bytes)");
}

int mt_units_add_label(mt_buf_t *b, const char *label, size_t width)
{
	static const char pad[] = "                                ";
	size_t n = strlen(label), fill = n < width ? width - n : 1;
	int rc;

	if ((rc = mt_buf_add_str(b, "  ")) || (rc = mt_buf_add_str(b, label)))
		return rc;
	return mt_buf_add(b, pad, fill < sizeof(pad) - 1 ? fill : sizeof(pad) - 1);
}

int mt_units_add_pm_size(mt_buf_t *b, uint64_t bytes)
{
	size_t mark = b->len;
	int rc;

	if ((rc = mt_buf_add_str(b, " +- ")) || (rc = mt_units_add_size(b, bytes)))
		mt_buf_truncate(b, mark);
	return rc;
}

int mt_units_add_pm_count(mt_buf_t *b, uint64_t n)
{
	size_t mark = b->len;
	int rc;

	if ((rc = mt_buf_add_str(b, " +- ")) || (rc = mt_buf_add_u64(b, n)))
		mt_buf_truncate(b, mark);
	return rc;
}
