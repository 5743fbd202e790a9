// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * What the reference-page backend itself costs in maximum RSS, for
 * tests/test-perturb-rss.sh: "refpage" maps one 2 MiB piece as the
 * perturb shim does (kmod where /dev/refpage exists, else memfd) and
 * writes 16 KiB of it; "none" does nothing.  Both link the same library,
 * so the difference of their maximum RSS is the backend's share, which the
 * shim cannot avoid paying on its first large block.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include <mmkit.h>

int main(int argc, char **argv)
{
	unsigned int backend = MMKIT_REFPAGE_BACKEND_KMOD;
	unsigned char pattern = 0xaa;
	struct mmkit_refpage *rp;
	void *mem;
	int ret;

	if (argc != 2 || (strcmp(argv[1], "refpage") && strcmp(argv[1], "none"))) {
		fprintf(stderr, "usage: refpage-floor refpage|none\n");
		return 2;
	}
	if (!strcmp(argv[1], "none"))
		return 0;
	if (mmkit_refpage_backend_available(backend, NULL, 0))
		backend = MMKIT_REFPAGE_BACKEND_MEMFD;
	ret = mmkit_refpage_create(&rp, &pattern, 1, backend);
	if (!ret)
		ret = mmkit_refpage_map(rp, 2UL << 20, PROT_READ | PROT_WRITE, &mem);
	if (ret) {
		fprintf(stderr, "refpage-floor: %s\n", strerror(-ret));
		return 1;
	}
	memset(mem, 1, 16384);
	return 0;
}
