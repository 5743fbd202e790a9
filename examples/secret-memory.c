// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * secret-memory: a 32-byte key in memory the kernel keeps out of its own
 * direct map (memfd_secret), wiped when freed.
 *
 *   secret-memory
 *
 * Allocates the key, fills it from the kernel's random source, and prints
 * the backend the allocator uses and why, then frees it.
 */
#include <stdio.h>
#include <sys/random.h>

#include "mmkit.h"

int main(void)
{
	struct mmkit_secret_stats st;
	unsigned char *key;
	int ret;

	ret = mmkit_secret_alloc((void **)&key, 32, 0);
	if (ret) {
		fprintf(stderr, "secret-memory: %s\n", mmkit_last_error());
		return 1;
	}
	if (getrandom(key, 32, 0) != 32) {
		perror("secret-memory: getrandom");
		mmkit_secret_free(key);
		return 1;
	}
	if (!mmkit_secret_stats(&st))
		printf("a 32-byte key on %s (%s); %llu secret pages mapped\n",
		       st.backend, st.reason, st.pages_mapped);
	mmkit_secret_free(key);
	return 0;
}
