// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/* Small helpers of the mmkit command: messages, escaped strings, parsing. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

const char *cli_option_value(const char *name, int argc, char **argv, int *i, int *missing)
{
	size_t len = strlen(name);

	if (strncmp(argv[*i], name, len))
		return NULL;
	if (argv[*i][len] == '=')
		return argv[*i] + len + 1;
	if (argv[*i][len])
		return NULL;
	if (*i + 1 >= argc) {
		*missing = 1;
		return NULL;
	}
	return argv[++*i];
}

void cli_read_command(int procfd, char *command, size_t len)
{
	ssize_t n;
	int fd;

	snprintf(command, len, "?");
	fd = openat(procfd, "comm", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, command, len - 1);
	close(fd);
	if (n <= 0) {
		snprintf(command, len, "?");
		return;
	}
	/* comm may hold any byte but NUL, a newline too: only the last one is the kernel's. */
	if (command[n - 1] == '\n')
		n--;
	command[n] = '\0';
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("mmkit: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * The length of the UTF-8 sequence at @s (1 to 4 bytes), 0 if the bytes
 * there are not a valid one: overlong forms, surrogates and code points
 * past U+10FFFF are invalid (RFC 3629).  The NUL that ends @s is never a
 * continuation byte, so the check stops there.
 */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* 1 if the valid sequence of @n bytes at @s is a C1 control, U+0080 to U+009F. */
static int utf8_c1(const unsigned char *s, size_t n)
{
	return n == 2 && s[0] == 0xc2 && s[1] <= 0x9f;
}

int cli_text_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int width = 0;
	size_t n, i;

	while (*p) {
		n = utf8_len(p);
		if (*p == '\\') {
			fputs("\\\\", f);
			width += 2;
		} else if (n == 1 && *p >= 0x20 && *p != 0x7f) {
			fputc(*p, f);
			width++;
		} else if (n > 1 && !utf8_c1(p, n)) {
			fwrite(p, 1, n, f);
			width++;
		} else {
			/* A control byte, a C1 control's bytes, or a byte that is not UTF-8. */
			for (i = 0; i < (n ? n : 1); i++)
				fprintf(f, "\\x%02x", p[i]);
			width += 4 * (int)i;
		}
		p += n ? n : 1;
	}
	return width;
}

void cli_json_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	fputc('"', f);
	while (*p) {
		n = utf8_len(p);
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (n == 1 && (*p < 0x20 || *p == 0x7f))
			fprintf(f, "\\u%04x", *p);
		else if (utf8_c1(p, n))
			fprintf(f, "\\u%04x", p[1]);
		else if (n)
			fwrite(p, 1, n, f);
		else
			fprintf(f, "\\\\x%02x", *p);
		p += n ? n : 1;
	}
	fputc('"', f);
}

void cli_label_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n, i;

	fputc('"', f);
	while (*p) {
		n = utf8_len(p);
		if (*p == '"')
			fputs("\\\"", f);
		else if (*p == '\\')
			fputs("\\\\\\\\", f);	/* \\ in the value: apart from a byte's \xNN */
		else if (*p == '\n')
			fputs("\\n", f);
		else if ((n == 1 && *p >= 0x20 && *p != 0x7f) || (n > 1 && !utf8_c1(p, n)))
			fwrite(p, 1, n, f);
		else
			for (i = 0; i < (n ? n : 1); i++)
				fprintf(f, "\\\\x%02x", p[i]);
		p += n ? n : 1;
	}
	fputc('"', f);
}

/* The number of decimal digits a fraction of a size may have: 10^6 * 2^40 fits 64 bits. */
#define SIZE_FRACTION_DIGITS	6

/* The power of 1024 a size suffix stands for: K 1, M 2, G 3, T 4; 0 if @c is none. */
static unsigned int size_suffix_power(char c)
{
	const char *units = "KMGTkmgt", *u = c ? strchr(units, c) : NULL;

	return u ? (unsigned int)(u - units) % 4 + 1 : 0;
}

int cli_parse_size(const char *s, unsigned long long *out)
{
	unsigned long long whole = 0, fraction = 0, scale = 1, mult = 1, digit;
	unsigned int power, fraction_digits = 0;
	const char *p = s;
	int too_big = 0;

	if (!s || *p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		digit = (unsigned long long)(*p - '0');
		/* Too big, but only if the rest is a size: "9...9X" is no size at all. */
		if (whole > (ULLONG_MAX - digit) / 10)
			too_big = 1;
		else
			whole = whole * 10 + digit;
	}
	if (*p == '.') {
		if (p[1] < '0' || p[1] > '9')
			return -EINVAL;
		for (p++; *p >= '0' && *p <= '9'; p++) {
			if (++fraction_digits > SIZE_FRACTION_DIGITS)
				return -EINVAL;
			fraction = fraction * 10 + (unsigned long long)(*p - '0');
			scale *= 10;
		}
	}
	power = size_suffix_power(*p);
	if (power) {
		mult <<= 10 * power;
		p++;
		/* 64KiB as well as 64K: the binary prefix the tool prints. */
		if (p[0] == 'i' && p[1] == 'B')
			p += 2;
	}
	if (*p)
		return -EINVAL;
	/* A fraction must come to whole bytes: 1.5K is 1536, 1.1K is no size. */
	if ((fraction * mult) % scale)
		return -EINVAL;
	if (too_big || whole > ULLONG_MAX / mult ||
	    whole * mult > ULLONG_MAX - fraction * mult / scale)
		return -ERANGE;
	*out = whole * mult + fraction * mult / scale;
	return 0;
}

int cli_parse_pid(const char *s, pid_t *out)
{
	unsigned long long v;

	if (cli_parse_size(s, &v) || strspn(s, "0123456789") != strlen(s) || !v || v > INT_MAX)
		return -EINVAL;
	*out = (pid_t)v;
	return 0;
}

int cli_self_dir(char *dir, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", dir, len);
	char *slash;

	if (n <= 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	dir[n] = '\0';
	slash = strrchr(dir, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	return 0;
}

double cli_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}
