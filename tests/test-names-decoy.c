// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Decoys for the registry reader: files whose descriptor link reads
 * "/memfd:mmkit-names (deleted)" like a registry's but that are no memfd.
 * A target process (root: it makes them in /, unlinking each at once)
 * holds a FIFO nobody writes to (opening it would block for good), a FIFO
 * open for reading and writing (reads fail with ESPIPE), a directory, and
 * an unlinked regular file of a disk filesystem that holds a well-formed
 * registry naming the target's page "forged".  Reading the target must
 * return at once with its real names only and count the four decoys; the
 * reader runs under alarm() so that a hang fails instead of hanging.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "harness.h"
#include "mmkit.h"
#include "names.h"

#define DECOY_PATH	"/memfd:" MMKIT__REGISTRY_NAME
#define READ_SECONDS	10

static size_t page;
static char *mem;

/* Fails unless descriptor @fd reads exactly like a registry's in /proc. */
static void expect_registry_link(int fd)
{
	char path[64], link[256];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	T_ASSERT(n > 0);
	link[n] = '\0';
	if (strcmp(link, MMKIT__REGISTRY_LINK))
		T_FAIL("decoy descriptor reads \"%s\", not \"%s\"", link, MMKIT__REGISTRY_LINK);
}

static void fifo_decoy(int flags)
{
	int fd;

	if (mkfifo(DECOY_PATH, 0600))
		T_FAIL("mkfifo %s: %s", DECOY_PATH, strerror(errno));
	fd = open(DECOY_PATH, flags | O_NONBLOCK);
	unlink(DECOY_PATH);
	T_ASSERT(fd >= 0);
	expect_registry_link(fd);
}

static void dir_decoy(void)
{
	int fd;

	if (mkdir(DECOY_PATH, 0700))
		T_FAIL("mkdir %s: %s", DECOY_PATH, strerror(errno));
	fd = open(DECOY_PATH, O_RDONLY | O_DIRECTORY);
	rmdir(DECOY_PATH);
	T_ASSERT(fd >= 0);
	expect_registry_link(fd);
}

/* A registry in every byte but where it lives: a file of the root filesystem. */
static void disk_file_decoy(void)
{
	struct {
		struct mmkit__registry_header h;
		struct mmkit__name_range e;
	} forged;
	int fd;

	memset(&forged, 0, sizeof(forged));
	forged.h.magic = MMKIT__REGISTRY_MAGIC;
	forged.h.version = MMKIT__REGISTRY_VERSION;
	forged.h.count = 1;
	forged.e.start = (uintptr_t)mem;
	forged.e.end = (uintptr_t)mem + page;
	strcpy(forged.e.name, "forged");
	fd = open(DECOY_PATH, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		T_FAIL("create %s: %s", DECOY_PATH, strerror(errno));
	unlink(DECOY_PATH);
	T_EQ(write(fd, &forged, sizeof(forged)), sizeof(forged));
	expect_registry_link(fd);
}

/* The target: a real registry naming its page "real", the decoys after it. */
static void target(void *arg)
{
	(void)arg;
	T_EQ(mmkit_name(mem, page, "real"), 0);
	fifo_decoy(O_RDONLY);
	fifo_decoy(O_RDWR);
	dir_decoy();
	disk_file_decoy();
}

static int region_fn(const struct mmkit_region *r, void *arg)
{
	int *found = arg;

	if (r->start <= (uintptr_t)mem && (uintptr_t)mem < r->end)
		*found = r->kind == MMKIT_REGION_REGISTRY && !strcmp(r->name, "real");
	return 0;
}

static void reader(void *arg)
{
	pid_t pid = *(pid_t *)arg;
	struct mmkit__names_stats stats;
	struct mmkit__name_range *e;
	ssize_t n;
	int found = 0;

	alarm(READ_SECONDS);
	n = mmkit__names_read(pid, -1, &e, &stats);
	if (n < 0)
		T_FAIL("mmkit__names_read: %s", strerror((int)-n));
	T_EQ(n, 1);
	T_EQ(e[0].start, (uintptr_t)mem);
	T_ASSERT(!strcmp(e[0].name, "real"));
	T_EQ(stats.decoys, 4);
	free(e);
	T_EQ(mmkit_regions(pid, region_fn, &found), 0);
	T_ASSERT(found);
}

int main(void)
{
	struct mmkit_features f;
	struct t_child ch;
	int status;

	if (!t_is_root())
		T_SKIP("not root: the decoys are made in /");
	T_EQ(mmkit_probe(&f), 0);
	if (f.feature[MMKIT_FEATURE_NAMES].status != MMKIT_STATUS_FALLBACK)
		T_SKIP("the kernel names VMAs itself: no registry to read");
	page = (size_t)sysconf(_SC_PAGESIZE);
	mem = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(mem != MAP_FAILED);

	T_CASE("FIFOs, a directory, a disk file named like the registry: skipped, no hang");
	ch = t_spawn_paused(target, NULL);
	status = t_in_child(reader, &ch.pid);
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		T_FAIL("reading a process holding decoys hung (> %d s)", READ_SECONDS);
	T_CHILD_OK(status);
	t_reap(ch);
	return T_EXIT_PASS;
}
