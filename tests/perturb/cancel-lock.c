// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Run with libmmkit-perturb.so preloaded and MALLOC_PERTURB_ set
 * (tests/test-perturb-cancel.sh): threads make a large block, mlock(2) it
 * (the shim makes it anonymous memory first, reading /proc/self/maps
 * under its table lock) and free it in a loop, and are cancelled there,
 * ROUNDS of them; then the main thread does the same.  A thread cancelled
 * at one of the shim's reads died holding the table lock, and the next
 * large block waited for good: the script's timeout catches that.  glibc's
 * malloc and mlock are no cancellation points; under the shim neither are
 * they.  Exits 0 when every block read as the fill.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define ROUNDS	200
#define SIZE	(1 << 20)

static unsigned char fill;
static int bad;

/* Fresh memory is read on purpose: the compiler must not see where it came from. */
static unsigned char *fresh(size_t size)
{
	void *p = malloc(size);

	__asm__ volatile("" : "+r"(p));
	return p;
}

static void block_cycle(void)
{
	unsigned char *p = fresh(SIZE);

	if (!p || p[SIZE / 2] != fill)
		__atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
	if (p && !mlock(p, SIZE))
		munlock(p, SIZE);
	free(p);
}

static void *cycler(void *arg)
{
	unsigned long *done = arg;

	for (;;) {
		block_cycle();
		__atomic_add_fetch(done, 1, __ATOMIC_RELEASE);
		pthread_testcancel();
	}
	return NULL;
}

int main(void)
{
	const char *perturb = getenv("MALLOC_PERTURB_");
	unsigned long done;
	volatile unsigned long spin;
	unsigned int round;
	pthread_t t;
	void *res;

	fill = (unsigned char)(strtoul(perturb ? perturb : "0", NULL, 0) ^ 0xff);
	for (round = 0; round < ROUNDS; round++) {
		done = 0;
		if (pthread_create(&t, NULL, cycler, &done))
			return 2;
		while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE))
			sched_yield();
		/* A moment that varies, so that the request lands in every part of a cycle. */
		for (spin = 0; spin < (round * 7919) % 20000; spin++)
			;
		if (pthread_cancel(t) || pthread_join(t, &res) || res != PTHREAD_CANCELED)
			return 2;
	}
	block_cycle();
	if (bad) {
		fprintf(stderr, "a large block did not read as the fill\n");
		return 1;
	}
	printf("%u threads cancelled in malloc, mlock and free of large blocks\n", ROUNDS);
	return 0;
}
