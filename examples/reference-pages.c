// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * reference-pages: 64 MiB that read as 0xaa before anything is written,
 * paid for only where written.
 *
 *   reference-pages
 *
 * Maps the range from a reference page, writes one byte, and prints what an
 * untouched page and the written one read, the backend the library chose
 * and what the process holds resident for it.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "mmkit.h"

int main(void)
{
	struct mmkit_refpage *rp;
	size_t len = 64 << 20;
	unsigned char *p;
	int ret;

	ret = mmkit_refpage_create(&rp, "\xaa", 1, 0);
	if (!ret)
		ret = mmkit_refpage_map(rp, len, PROT_READ | PROT_WRITE, (void **)&p);
	if (ret) {
		fprintf(stderr, "reference-pages: %s\n", mmkit_last_error());
		return 1;
	}
	p[4096] = 0x01;
	printf("backend %s: byte 0 reads %#x, byte 4096 (written) %#x, the last byte %#x\n",
	       mmkit_refpage_backend(rp), p[0], p[4096], p[len - 1]);
	ret = mmkit_refpage_unmap(rp, p, len);
	mmkit_refpage_destroy(rp);
	return ret ? 1 : 0;
}
