// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * hostile-victim: not an attacker but the process a peer attacks through
 * its registry (tests/hostile/hostile-peer.c).  Names 4 pages "victim",
 * prints "ready fd=N" (its registry's descriptor), then on each SIGUSR1
 * renames page 1 ROUNDS times, alternating "victim-a" and "victim-b", with
 * mmkit_regions(0) after each rename, and prints "done MS": the time those
 * took.  A registry its peer could break makes it die (SIGBUS) or stall.
 */
#include <signal.h>
#include <time.h>
#include <sys/mman.h>

#include "hostile.h"
#include "mmkit.h"
#include "../names-registry.h"

#define ROUNDS	100

static int count_region(const struct mmkit_region *r, void *arg)
{
	(void)r;
	++*(size_t *)arg;
	return 0;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), regions;
	double t0;
	sigset_t usr1;
	char *p;
	int i, sig, ret;

	p = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		hostile_fail("mmap", -errno);
	memset(p, 1, 4 * page);
	hostile_name(p, 4 * page, "victim");
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	printf("ready fd=%d\n", registry_fd());
	fflush(stdout);
	for (;;) {
		if (sigwait(&usr1, &sig))
			continue;
		t0 = now_ms();
		for (i = 0; i < ROUNDS; i++) {
			hostile_name(p + page, page, i % 2 ? "victim-b" : "victim-a");
			regions = 0;
			ret = mmkit_regions(0, count_region, &regions);
			if (ret < 0)
				hostile_fail("mmkit_regions", ret);
		}
		/* Page 1 back to the name of its neighbours: one range again. */
		hostile_name(p + page, page, "victim");
		printf("done %.0f\n", now_ms() - t0);
		fflush(stdout);
	}
}
