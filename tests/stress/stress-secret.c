// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Secret alloc/free in many threads while the process forks.  Each thread
 * keeps a set of live secrets, each filled with a byte of its own, and
 * checks it before freeing; the main thread forks, and each child frees
 * what it inherited (secrets are not inherited: their pages are wiped or
 * PROT_NONE in the child, but each is still owed a free), then allocates,
 * checks and frees anew.
 * At the end nothing may be live and no descriptor may be left.
 */
#include <pthread.h>
#include <sys/wait.h>

#include "mmkit.h"
#include "stress.h"

#define THREADS	4
#define LIVE	64

struct secret {
	unsigned char *p;
	size_t size;
	unsigned char fill;
};

struct worker {
	struct secret live[LIVE];
	uint32_t seed;
	unsigned long iterations;
	pthread_t th;
	/* Held for a step: a fork sees each set between steps. */
	pthread_mutex_t lock;
};

static struct worker workers[THREADS];

static void check_free(struct secret *s)
{
	for (size_t i = 0; i < s->size; i++)
		if (s->p[i] != s->fill)
			T_FAIL("secret %p byte %zu: %#x, not %#x", (void *)s->p, i, s->p[i], s->fill);
	mmkit_secret_free(s->p);
	s->p = NULL;
}

static void step(struct worker *w)
{
	struct secret *s = &w->live[stress_rand(&w->seed) % LIVE];
	uint32_t r = stress_rand(&w->seed);
	int ret;

	if (s->p) {
		check_free(s);
		return;
	}
	/* Mostly pooled sizes, some spans of their own pages. */
	s->size = r % 8 ? 1 + r % MMKIT_SECRET_POOL_MAX : 4096 + r % 20000;
	s->fill = (unsigned char)(r >> 24 | 1);
	ret = mmkit_secret_alloc((void **)&s->p, s->size, MMKIT_SECRET_QUIET);
	if (ret == -ENOMEM) {	/* RLIMIT_MEMLOCK: a full heap is not an error */
		s->p = NULL;
		return;
	}
	if (ret)
		T_FAIL("mmkit_secret_alloc(%zu): %s", s->size, strerror(-ret));
	memset(s->p, s->fill, s->size);
}

static void *run_worker(void *arg)
{
	struct worker *w = arg;

	while (stress_running()) {
		pthread_mutex_lock(&w->lock);
		step(w);
		pthread_mutex_unlock(&w->lock);
		w->iterations++;
	}
	/*
	 * Under the lock too: the main thread may still be forking, and a
	 * child that saw a secret freed but its pointer not yet cleared
	 * freed it again (a double free, one run in about 130).
	 */
	pthread_mutex_lock(&w->lock);
	for (int i = 0; i < LIVE; i++)
		if (w->live[i].p)
			check_free(&w->live[i]);
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* In a fork child: frees the parent's secrets unread, then uses the heap. */
static void child(void)
{
	struct mmkit_secret_stats st;
	struct worker *w = &workers[0];

	for (int t = 0; t < THREADS; t++)
		for (int i = 0; i < LIVE; i++)
			if (workers[t].live[i].p) {
				mmkit_secret_free(workers[t].live[i].p);
				workers[t].live[i].p = NULL;
			}
	for (int i = 0; i < 400; i++)
		step(w);
	for (int i = 0; i < LIVE; i++)
		if (w->live[i].p)
			check_free(&w->live[i]);
	T_EQ(mmkit_secret_stats(&st), 0);
	T_EQ(st.allocs_live, 0);
	_exit(0);
}

int main(int argc, char **argv)
{
	struct mmkit_secret_stats st;
	unsigned long iterations = 0, forks = 0;
	int fds, status;
	pid_t pid;

	stress_start(argc, argv);
	/* The set-up's own descriptors and mappings are made before counting. */
	T_EQ(mmkit_secret_stats(&st), 0);
	fds = t_count_fds();
	for (int i = 0; i < THREADS; i++) {
		workers[i].seed = 0x9e3779b9u * (uint32_t)(i + 1);
		pthread_mutex_init(&workers[i].lock, NULL);
		T_EQ(pthread_create(&workers[i].th, NULL, run_worker, &workers[i]), 0);
	}
	while (stress_running()) {
		fflush(NULL);
		for (int i = 0; i < THREADS; i++)
			pthread_mutex_lock(&workers[i].lock);
		pid = fork();
		if (pid == 0)
			child();
		for (int i = 0; i < THREADS; i++)
			pthread_mutex_unlock(&workers[i].lock);
		if (pid < 0)
			T_FAIL("fork: %s", strerror(errno));
		T_EQ(waitpid(pid, &status, 0), pid);
		T_CHILD_OK(status);
		forks++;
		usleep(20000);
	}
	for (int i = 0; i < THREADS; i++) {
		T_EQ(pthread_join(workers[i].th, NULL), 0);
		iterations += workers[i].iterations;
	}
	T_EQ(mmkit_secret_stats(&st), 0);
	T_EQ(st.allocs_live, 0);
	T_EQ(st.bytes_live, 0);
	T_EQ(t_count_fds(), fds);
	printf("stress-secret: %lu iterations, %lu forks, backend %s\n", iterations, forks,
	       st.backend);
	return T_EXIT_PASS;
}
