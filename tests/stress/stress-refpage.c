// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Reference pages under load, on the backend named by argv[2]: on one
 * shared range, writer threads write and read back their bytes while
 * another thread drops pages (MADV_DONTNEED) and the main thread forks
 * children that check what they inherited; a mapper thread maps, touches
 * and unmaps ranges of the same refpage (in part, then all); a churn
 * thread creates, uses and destroys refpages of its own while the others
 * fault.  Every byte read must be the pattern or what its writer wrote.
 * At the end every refpage is destroyed and no descriptor is left.
 */
#include <pthread.h>
#include <sys/mman.h>

#include "mmkit.h"
#include "stress.h"

#define PAGES	64
#define WRITERS	3

static const unsigned char pattern[16] = "stress-refpage!";
static struct mmkit_refpage *rp;
static unsigned int flag;
static unsigned char *shared;
static size_t page;
static volatile int stop;
static unsigned long counts[WRITERS + 3];

/* Byte t*8 of a page is written by writer t only, as 0x80 + t. */
static void check_byte(const unsigned char *pg, int t, const char *who)
{
	unsigned char c = __atomic_load_n(&pg[t * 8], __ATOMIC_RELAXED);

	if (c != pattern[(t * 8) % 16] && c != 0x80 + t)
		T_FAIL("%s: page %p byte %d: %#x", who, (const void *)pg, t * 8, c);
}

static void *writer(void *arg)
{
	int id = (int)(intptr_t)arg;
	uint32_t seed = 0x1234567u * (uint32_t)(id + 1);

	while (!stop) {
		unsigned char *pg = shared + stress_rand(&seed) % PAGES * page;

		__atomic_store_n(&pg[id * 8], 0x80 + id, __ATOMIC_RELAXED);
		for (int t = 0; t < WRITERS; t++)
			check_byte(pg, t, "writer");
		/* Bytes nobody writes stay the pattern. */
		if (pg[page - 1] != pattern[(page - 1) % 16])
			T_FAIL("writer: untouched byte %#x", pg[page - 1]);
		counts[id]++;
	}
	return NULL;
}

static void *dropper(void *arg)
{
	uint32_t seed = 99;

	(void)arg;
	while (!stop) {
		if (madvise(shared + stress_rand(&seed) % PAGES * page, page, MADV_DONTNEED))
			T_FAIL("madvise: %s", strerror(errno));
		counts[WRITERS]++;
		usleep(100);
	}
	return NULL;
}

static int reads_pattern(const unsigned char *p, size_t len)
{
	for (size_t i = 0; i < len; i += 127)
		if (p[i] != pattern[i % 16])
			return 0;
	return 1;
}

static void *mapper(void *arg)
{
	(void)arg;
	while (!stop) {
		unsigned char *p;
		int ret = mmkit_refpage_map(rp, 16 * page, PROT_READ | PROT_WRITE, (void **)&p);

		if (ret)
			T_FAIL("map: %s", strerror(-ret));
		p[5 * page] = 1;
		T_ASSERT(reads_pattern(p, 5 * page) && p[5 * page] == 1);
		T_EQ(mmkit_refpage_unmap(rp, p + 8 * page, 8 * page), 0);
		T_ASSERT(reads_pattern(p + 6 * page, 2 * page));
		T_EQ(mmkit_refpage_unmap(rp, p, 8 * page), 0);
		counts[WRITERS + 1]++;
	}
	return NULL;
}

static void *churn(void *arg)
{
	(void)arg;
	while (!stop) {
		struct mmkit_refpage *own;
		unsigned char *p;
		int ret = mmkit_refpage_create(&own, pattern, sizeof(pattern), flag);

		if (ret)
			T_FAIL("create: %s", strerror(-ret));
		T_EQ(mmkit_refpage_map(own, 8 * page, PROT_READ | PROT_WRITE, (void **)&p), 0);
		T_ASSERT(reads_pattern(p, 8 * page));
		p[page] = 7;
		T_EQ(mmkit_refpage_unmap(own, p, 8 * page), 0);
		mmkit_refpage_destroy(own);
		counts[WRITERS + 2]++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct { const char *name; unsigned int flag; } backends[] = {
		{ "kmod", MMKIT_REFPAGE_BACKEND_KMOD },
		{ "memfd", MMKIT_REFPAGE_BACKEND_MEMFD },
		{ "uffd", MMKIT_REFPAGE_BACKEND_UFFD },
	};
	pthread_t th[WRITERS + 3];
	unsigned long forks = 0, total = 0;
	char why[128];
	int fds, status;
	pid_t pid;

	stress_start(argc, argv);
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		if (argc > 2 && !strcmp(argv[2], backends[i].name))
			flag = backends[i].flag;
	if (!flag)
		T_FAIL("usage: %s SECONDS kmod|memfd|uffd", argv[0]);
	if (mmkit_refpage_backend_available(flag, why, sizeof(why)))
		T_SKIP("backend %s: %s", argv[2], why);
	page = (size_t)sysconf(_SC_PAGESIZE);
	/* What the backend keeps for the process (uffd: its handler, slots) is made first. */
	T_EQ(mmkit_refpage_create(&rp, pattern, sizeof(pattern), flag), 0);
	T_EQ(mmkit_refpage_map(rp, PAGES * page, PROT_READ | PROT_WRITE, (void **)&shared), 0);
	T_ASSERT(reads_pattern(shared, PAGES * page));
	T_EQ(mmkit_refpage_unmap(rp, shared, PAGES * page), 0);
	mmkit_refpage_destroy(rp);
	fds = t_count_fds();
	T_EQ(mmkit_refpage_create(&rp, pattern, sizeof(pattern), flag), 0);
	T_EQ(mmkit_refpage_map(rp, PAGES * page, PROT_READ | PROT_WRITE, (void **)&shared), 0);

	for (int i = 0; i < WRITERS; i++)
		T_EQ(pthread_create(&th[i], NULL, writer, (void *)(intptr_t)i), 0);
	T_EQ(pthread_create(&th[WRITERS], NULL, dropper, NULL), 0);
	T_EQ(pthread_create(&th[WRITERS + 1], NULL, mapper, NULL), 0);
	T_EQ(pthread_create(&th[WRITERS + 2], NULL, churn, NULL), 0);
	while (stress_running()) {
		fflush(NULL);
		pid = fork();
		T_ASSERT(pid >= 0);
		if (pid == 0) {
			for (int pg = 0; pg < PAGES; pg++)
				for (int t = 0; t < WRITERS; t++)
					check_byte(shared + pg * page, t, "fork child");
			_exit(0);
		}
		T_EQ(waitpid(pid, &status, 0), pid);
		T_CHILD_OK(status);
		forks++;
		usleep(10000);
	}
	stop = 1;
	for (int i = 0; i < WRITERS + 3; i++)
		T_EQ(pthread_join(th[i], NULL), 0);
	T_EQ(mmkit_refpage_unmap(rp, shared, PAGES * page), 0);
	mmkit_refpage_destroy(rp);
	T_EQ(t_count_fds(), fds);
	for (int i = 0; i < WRITERS + 3; i++)
		total += counts[i];
	printf("stress-refpage %s: %lu iterations (writes %lu, drops %lu, maps %lu, "
	       "refpages %lu), %lu forks\n", argv[2], total, counts[0] + counts[1] + counts[2],
	       counts[WRITERS], counts[WRITERS + 1], counts[WRITERS + 2], forks);
	return T_EXIT_PASS;
}
