// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The mmkit command's handling of untrusted bytes (cli/util.c): any string
 * through the table escaper must come out free of control bytes, valid
 * UTF-8, and decode back to the input; through the JSON escaper it must
 * be a valid JSON string literal in valid UTF-8; the PID and SIZE parsers
 * accept exactly the decimal numbers (sizes with a fraction and a K, M, G
 * or T suffix, KiB to TiB too) that fit, and compute them right.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "cli.h"
#include "fuzz.h"

/* Length of the valid UTF-8 sequence at @s (RFC 3629), 0 if invalid: a reference. */
static size_t utf8_ok(const unsigned char *s, size_t left)
{
	unsigned int c;
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 0;
	if (!n || n > left || s[0] > 0xf4)
		return 0;
	c = s[0] & (0x7f >> n);
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((n == 2 && c < 0x80) || (n == 3 && c < 0x800) || (n == 4 && c < 0x10000) ||
	    c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return n;
}

static void check_utf8_no_controls(const unsigned char *s, size_t len)
{
	size_t i = 0, n;

	while (i < len) {
		n = utf8_ok(s + i, len - i);
		F_CHECK(n);
		F_CHECK(s[i] >= 0x20 && s[i] != 0x7f);
		/* No C1 controls either: some terminals obey them. */
		F_CHECK(!(n == 2 && s[i] == 0xc2 && s[i + 1] <= 0x9f));
		i += n;
	}
}

static int hex(unsigned char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The table form: \\ and \xNN decode, everything else stands for itself. */
static void check_text(const char *in)
{
	char *out = NULL;
	size_t len = 0, i, k = 0;
	FILE *f = open_memstream(&out, &len);

	F_CHECK(f);
	cli_text_string(f, in);
	F_CHECK(!fclose(f));
	check_utf8_no_controls((const unsigned char *)out, len);
	for (i = 0; i < len; k++) {
		if (out[i] != '\\') {
			F_CHECK(in[k] == out[i++]);
			continue;
		}
		F_CHECK(i + 1 < len);
		if (out[i + 1] == '\\') {
			F_CHECK(in[k] == '\\');
			i += 2;
			continue;
		}
		F_CHECK(out[i + 1] == 'x' && i + 3 < len);
		F_CHECK(hex((unsigned char)out[i + 2]) >= 0 && hex((unsigned char)out[i + 3]) >= 0);
		F_CHECK((unsigned char)in[k] ==
			hex((unsigned char)out[i + 2]) * 16 + hex((unsigned char)out[i + 3]));
		i += 4;
	}
	F_CHECK(in[k] == '\0');
	free(out);
}

/* The JSON form: a string literal of valid UTF-8 with only JSON's escapes. */
static void check_json(const char *in)
{
	char *out = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&out, &len);

	F_CHECK(f);
	cli_json_string(f, in);
	F_CHECK(!fclose(f));
	F_CHECK(len >= 2 && out[0] == '"' && out[len - 1] == '"');
	check_utf8_no_controls((const unsigned char *)out, len);
	for (i = 1; i < len - 1; i++) {
		F_CHECK(out[i] != '"');
		if (out[i] != '\\')
			continue;
		i++;
		F_CHECK(i < len - 1);
		if (out[i] == 'u') {
			F_CHECK(i + 4 < len - 1);
			for (int d = 1; d <= 4; d++)
				F_CHECK(hex((unsigned char)out[i + d]) >= 0);
			i += 4;
		} else {
			F_CHECK(strchr("\"\\/bfnrt", out[i]));
		}
	}
	free(out);
}

/*
 * The size a string is, by a second reading in 128-bit arithmetic: digits,
 * an optional fraction of 1 to 6 digits, an optional K, M, G or T (either
 * case) with an optional "iB"; whole bytes only.  0 and *@out, -1 when it
 * is no size, -2 when it is one past 2^64 - 1.
 */
static int reference_size(const char *s, unsigned long long *out)
{
	const unsigned __int128 past = (unsigned __int128)1 << 65;
	unsigned __int128 whole = 0, fraction = 0, den = 1, mult = 1, bytes;
	size_t i = strspn(s, "0123456789"), f, k;
	const char *units = "KMGTkmgt", *unit;

	if (!i)
		return -1;
	/* Saturated: past 2^65 it is too big whatever follows. */
	for (k = 0; k < i; k++)
		whole = whole >= past ? past : whole * 10 + (unsigned)(s[k] - '0');
	if (s[i] == '.') {
		f = strspn(s + i + 1, "0123456789");
		if (!f || f > 6)
			return -1;
		for (k = 1; k <= f; k++) {
			fraction = fraction * 10 + (unsigned)(s[i + k] - '0');
			den *= 10;
		}
		i += f + 1;
	}
	unit = s[i] ? strchr(units, s[i]) : NULL;
	if (unit) {
		mult = (unsigned __int128)1 << (10 * ((unit - units) % 4 + 1));
		i++;
		if (s[i] == 'i' && s[i + 1] == 'B')
			i += 2;
	}
	if (s[i] || fraction * mult % den)
		return -1;
	bytes = whole * mult + fraction * mult / den;
	if (bytes > ULLONG_MAX)
		return -2;
	*out = (unsigned long long)bytes;
	return 0;
}

/* The parsers against a reference: a PID is decimal digits alone. */
static void check_parsers(const char *s)
{
	unsigned long long v = 0, want = 0;
	size_t i, digits = strspn(s, "0123456789");
	int fits = digits > 0, ret, ref;
	pid_t pid;

	for (i = 0; i < digits && fits; i++) {
		if (want > (ULLONG_MAX - (unsigned long long)(s[i] - '0')) / 10)
			fits = 0;
		want = want * 10 + (unsigned long long)(s[i] - '0');
	}
	ret = cli_parse_pid(s, &pid);
	F_CHECK((ret == 0) == (fits && !s[digits] && want > 0 && want <= INT_MAX));
	F_CHECK(ret || (unsigned long long)pid == want);
	ret = cli_parse_size(s, &v);
	ref = reference_size(s, &want);
	F_CHECK(ref == 0 ? ret == 0 && v == want : ref == -2 ? ret == -ERANGE : ret == -EINVAL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	check_text(s);
	check_json(s);
	check_parsers(s);
	free(s);
	return 0;
}
