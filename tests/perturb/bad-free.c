// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Frees memory wrongly, one way per run, for tests/test-perturb-free.sh,
 * which checks that glibc catches each the same way with the perturb shim
 * as without it.  "survived" on stdout means nothing caught it.
 *   double	malloc(40), free, free: glibc's thread-cache double free
 *   double-fast	the same once the thread cache's bin is full: a fast bin
 *   double-big	malloc(2000), beyond the thread cache and the fast bins
 *   non-heap	free of a static buffer with a plausible chunk header:
 *		glibc takes it; "wrote past" when a byte beyond glibc's
 *		16 bytes of list links changed
 *   interior	free of a pointer 32 bytes into a live block
 *   shim	prints whether a large block reads as the shim's fill
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The compiler must not see that a pointer is freed twice or is not malloc's. */
static void *opaque(void *p)
{
	__asm__ volatile("" : "+r"(p));
	return p;
}

static void double_free(size_t size, int fill_bin)
{
	void *bin[7], *p = malloc(size), *again = opaque(p);
	int i;

	/* Seven blocks of the same size fill the thread cache's bin first. */
	for (i = 0; fill_bin && i < 7; i++)
		bin[i] = malloc(size);
	for (i = 0; fill_bin && i < 7; i++)
		free(bin[i]);
	free(p);
	free(again);
}

int main(int argc, char **argv)
{
	static char buf[256] __attribute__((aligned(16)));
	const char *mode = argc > 1 ? argv[1] : "";
	unsigned char *p;
	int i;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(mode, "double")) {
		double_free(40, 0);
	} else if (!strcmp(mode, "double-fast")) {
		double_free(40, 1);
	} else if (!strcmp(mode, "double-big")) {
		double_free(2000, 0);
	} else if (!strcmp(mode, "non-heap")) {
		/* A plausible small chunk header before it: only a heap check tells. */
		((size_t *)buf)[3] = 0x31;
		memset(buf + 48, 0x11, 64);
		free(opaque(buf + 32));
		for (i = 48; i < 112; i++)
			if (buf[i] != 0x11) {
				printf("wrote past\n");
				return 0;
			}
	} else if (!strcmp(mode, "interior")) {
		p = malloc(200);
		memset(p, 0, 200);
		free(opaque(p + 32));
	} else if (!strcmp(mode, "shim")) {
		p = malloc(1 << 20);
		printf("large block byte: %u\n", p ? ((volatile unsigned char *)p)[1000] : 0);
		free(p);
		return 0;
	} else {
		fprintf(stderr, "usage: bad-free double|double-fast|double-big|non-heap|interior|shim\n");
		return 2;
	}
	printf("survived\n");
	return 0;
}
