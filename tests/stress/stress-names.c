// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * A names writer renaming in a loop while another process reads its
 * registry.  The writer (a child) names the pages of one range in turn,
 * through the registry itself whatever the kernel has; the reader
 * (this process) reads the child's registry as `mmkit maps` does and
 * checks what it gets: sorted, inside the range, known names.  A read
 * that gives up (-EAGAIN) while the writer is busy fails: a reader must
 * get a consistent registry however busy the writer is.
 */
#include <signal.h>
#include <sys/mman.h>

#include "mmkit.h"
#include "names.h"
#include "stress.h"

#define PAGES	64

static const char *const names[] = { "stress-a", "stress-b", "stress-a-longer-name" };

static void writer(char *p, size_t page, int ready)
{
	uint32_t seed = 12345;
	unsigned long renames = 0;

	for (;;) {
		uint32_t r = stress_rand(&seed);
		uint64_t start = (uintptr_t)p + r % PAGES * page;
		uint64_t end = start + (1 + (r >> 8) % 8) * page;
		int ret;

		if (end > (uintptr_t)p + PAGES * page)
			end = (uintptr_t)p + PAGES * page;
		ret = mmkit__registry_name(start, end, r >> 16 & 1 ? names[(r >> 20) % 3] : NULL, 0);
		if (ret)
			T_FAIL("mmkit__registry_name: %s", strerror(-ret));
		if (++renames == 1)
			t_send_byte(ready);
	}
}

int main(int argc, char **argv)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned long reads = 0, entries = 0;
	struct mmkit__name_range *e;
	int pipefd[2], status, fds;
	char *p;
	pid_t pid;

	stress_start(argc, argv);
	p = mmap(NULL, PAGES * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(p != MAP_FAILED);
	T_EQ(pipe(pipefd), 0);
	fds = t_count_fds();
	fflush(NULL);
	pid = fork();
	T_ASSERT(pid >= 0);
	if (pid == 0)
		writer(p, page, pipefd[1]);
	t_wait_byte(pipefd[0]);
	while (stress_running()) {
		ssize_t n = mmkit__names_get(pid, -1, &e);

		if (n < 0) {
			kill(pid, SIGKILL);
			T_FAIL("reading a busy writer's registry: %s (after %lu reads)",
			       strerror((int)-n), reads);
		}
		for (ssize_t i = 0; i < n; i++) {
			T_ASSERT(e[i].start >= (uintptr_t)p && e[i].end <= (uintptr_t)p + PAGES * page);
			T_ASSERT(e[i].start < e[i].end && (!i || e[i - 1].end <= e[i].start));
			T_ASSERT(!strcmp(e[i].name, names[0]) || !strcmp(e[i].name, names[1]) ||
				 !strcmp(e[i].name, names[2]));
		}
		free(e);
		reads++;
		entries += (unsigned long)n;
	}
	kill(pid, SIGKILL);
	T_EQ(waitpid(pid, &status, 0), pid);
	T_EQ(t_count_fds(), fds);
	printf("stress-names: %lu iterations (registry reads, %lu entries)\n", reads, entries);
	return T_EXIT_PASS;
}
