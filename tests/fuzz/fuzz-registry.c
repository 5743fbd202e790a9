// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Registry reading, as `mmkit maps` reads another process's: the input
 * becomes one to three memfds named like the registry (the first byte says
 * how many, and its top bit to make each file as long as its header
 * claims, holes past the input, up to CLAIM_MAX entries an area: reads
 * of many chunks, most entries zero; the rest is cut in that many parts),
 * and mmkit__names_get()
 * through this process's /proc directory (as another process's is read)
 * finds them in its fd/, reads each and merges them.  What comes back must be sorted, not overlapping and made
 * of valid names, whatever the files held.
 */
#include <fcntl.h>
#include <string.h>

#include "mmkit.h"
#include "names.h"
#include "fuzz.h"

/* Past a few of the reader's chunks (READ_CHUNK, 4096 entries), still quick to read. */
#define CLAIM_MAX	(3 * 4096 + 7)

/* Makes the file at @fd as long as the header at @data (@size bytes) claims. */
static void claim(int fd, const uint8_t *data, size_t size)
{
	struct mmkit__registry_header h;
	size_t cap;

	if (fd < 0 || size < sizeof(h))
		return;
	memcpy(&h, data, sizeof(h));
	cap = h.cap < CLAIM_MAX ? h.cap : CLAIM_MAX;
	if (sizeof(h) + 2 * cap * sizeof(struct mmkit__name_range) > size)
		F_CHECK(!ftruncate(fd, (off_t)(sizeof(h) + 2 * cap * sizeof(struct mmkit__name_range))));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mmkit__name_range *e = NULL;
	int fds[3], nfds, procfd;
	size_t part;
	ssize_t n;

	if (size < 1)
		return 0;
	nfds = 1 + data[0] % 3;
	part = (size - 1) / (size_t)nfds;
	for (int i = 0; i < nfds; i++) {
		const uint8_t *at = data + 1 + (size_t)i * part;
		size_t len = i == nfds - 1 ? size - 1 - (size_t)i * part : part;

		fds[i] = f_memfd(MMKIT__REGISTRY_NAME, at, len);
		if (data[0] & 0x80)
			claim(fds[i], at, len);
	}
	procfd = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	F_CHECK(procfd >= 0);
	n = mmkit__names_get(getpid(), procfd, &e);
	close(procfd);
	F_CHECK(n >= -4095);
	for (ssize_t i = 0; i < n; i++) {
		F_CHECK(e[i].start < e[i].end);
		F_CHECK(!i || e[i - 1].end <= e[i].start);
		F_CHECK(memchr(e[i].name, '\0', sizeof(e[i].name)));
		F_CHECK(mmkit_name_valid(e[i].name) == 0);
	}
	free(e);
	for (int i = 0; i < nfds; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return 0;
}
