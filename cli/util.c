// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/* Small helpers of the mmkit command: messages, JSON strings, parsing. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("mmkit: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

int cli_parse_size(const char *s, unsigned long long *out)
{
	unsigned long long v, mult = 1;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': mult = 1ULL << 10; end++; break;
	case 'm': case 'M': mult = 1ULL << 20; end++; break;
	case 'g': case 'G': mult = 1ULL << 30; end++; break;
	}
	if (*end || (v && mult > ULLONG_MAX / v))
		return -EINVAL;
	*out = v * mult;
	return 0;
}

int cli_parse_pid(const char *s, pid_t *out)
{
	unsigned long long v;

	if (cli_parse_size(s, &v) || strpbrk(s, "kKmMgG") || !v || v > INT_MAX)
		return -EINVAL;
	*out = (pid_t)v;
	return 0;
}
