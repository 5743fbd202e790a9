// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Run with libmmkit-perturb.so preloaded and MALLOC_PERTURB_ set
 * (tests/test-perturb-fork.sh): one thread forks in a loop, each child
 * making and freeing a large block before it exits, while the main thread
 * makes large blocks of 128 KiB to 2 MiB, the sizes that grow the memfd
 * backend's pattern file.  A lock order that fork(2) and a large malloc
 * take differently hangs it: the script's timeout catches that.  Exits 0
 * when every child exited 0 and every block read as the fill.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#define ROUNDS		40

static int done, forks;
static unsigned char fill;

/* Fresh memory is read on purpose: the compiler must not see where it came from. */
static unsigned char *fresh(size_t size)
{
	void *p = malloc(size);

	__asm__ volatile("" : "+r"(p));
	return p;
}

static void *forker(void *arg)
{
	int status;
	unsigned char *p;
	pid_t pid;

	(void)arg;
	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
		pid = fork();
		if (pid < 0) {
			fprintf(stderr, "fork: %s\n", strerror(errno));
			exit(1);
		}
		if (!pid) {
			/* The child's allocator must not be left locked. */
			p = fresh(256 << 10);
			_exit(p && p[4096] == fill ? 0 : 3);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			fprintf(stderr, "child %d: status %#x\n", (int)pid, status);
			exit(1);
		}
		__atomic_add_fetch(&forks, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

int main(void)
{
	const char *env = getenv("MALLOC_PERTURB_");
	size_t size;
	unsigned char *p;
	pthread_t t;
	int i, err;

	if (!env) {
		fprintf(stderr, "fork-loop: MALLOC_PERTURB_ is not set\n");
		return 2;
	}
	fill = (unsigned char)(strtoul(env, NULL, 0) ^ 0xff);
	err = pthread_create(&t, NULL, forker, NULL);
	if (err) {
		fprintf(stderr, "pthread_create: %s\n", strerror(err));
		return 1;
	}
	/* The first large block is made while the other thread forks. */
	while (!__atomic_load_n(&forks, __ATOMIC_ACQUIRE))
		sched_yield();
	for (i = 0; i < ROUNDS; i++) {
		/* 128 KiB, 256 KiB, ... 2 MiB, each a little more. */
		size = (128UL << 10 << (i % 5)) + (size_t)i * 4096;
		p = fresh(size);
		if (!p || p[size - 1] != fill) {
			fprintf(stderr, "block %d of %zu bytes: %s\n", i, size,
				p ? "not the fill" : "NULL");
			return 1;
		}
		p[0] = 1;
		free(p);
	}
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	printf("%d blocks, %d forks\n", ROUNDS, forks);
	return 0;
}
