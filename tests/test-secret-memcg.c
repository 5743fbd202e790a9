// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Secret memory in a memory cgroup: the kernel charges secret pages to the
 * cgroup and can neither swap nor reclaim them, so a secret larger than the
 * cgroup's limit can never be backed.  In a child cgroup limited to 32 MiB
 * (cgroup v2's memory.max, or the v1 memory controller's
 * memory.limit_in_bytes), a 64 MiB secret is refused up front with -ENOMEM
 * and a reason naming the limit and its file, before any page is mapped
 * (it was handed out, and its first use took the cgroup's OOM killer),
 * while a 1 MiB secret works.  Both backends.  Needs root and a memory
 * cgroup this process can make a child of (the host's v1 memory
 * controller; the kernel tiers' guests mount cgroup v2 with the memory
 * controller on); skips otherwise.
 */
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "harness.h"
#include "secret-backends.h"
#include "mmkit.h"

#define MIB		(1024ULL * 1024)

static char cg[PATH_MAX];	/* the child cgroup */
static int v1;			/* the v1 memory controller's files */

/* Writes @s to the file @name of the child cgroup: 0, or -errno. */
static int cg_write(const char *name, const char *s)
{
	char path[PATH_MAX + 64];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", cg, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * The directory of this process's memory cgroup: the v1 memory line of
 * /proc/self/cgroup under /sys/fs/cgroup/memory, else the v2 line under
 * the cgroup2 mount (/sys/fs/cgroup or /sys/fs/cgroup/unified).
 */
static int own_cgroup(char *dir, size_t len)
{
	char line[PATH_MAX + 64], v2[PATH_MAX / 2] = "";
	FILE *f = fopen("/proc/self/cgroup", "r");
	struct stat st;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *path = strchr(line, ':'), *ctl;

		line[strcspn(line, "\n")] = '\0';
		if (!path || !(ctl = path + 1, path = strchr(ctl, ':')))
			continue;
		ctl[-1] = '\0';
		*path++ = '\0';
		if (!strcmp(line, "0") && !*ctl)
			snprintf(v2, sizeof(v2), "%s", path);
		else if (strstr(ctl, "memory")) {
			v1 = 1;
			snprintf(dir, len, "/sys/fs/cgroup/memory%s", path);
		}
	}
	fclose(f);
	if (v1)
		return 1;
	if (!v2[0])
		return 0;
	snprintf(dir, len, "/sys/fs/cgroup%s", strcmp(v2, "/") ? v2 : "");
	if (!stat("/sys/fs/cgroup/cgroup.controllers", &st))
		return 1;
	snprintf(dir, len, "/sys/fs/cgroup/unified%s", strcmp(v2, "/") ? v2 : "");
	return !stat("/sys/fs/cgroup/unified/cgroup.controllers", &st);
}

static void suite(void)
{
	struct mmkit_secret_stats st;
	void *p;
	int ret;

	T_CASE("a 64 MiB secret in a 32 MiB cgroup: refused, the limit and its file named");
	ret = mmkit_secret_alloc(&p, 64 * MIB, MMKIT_SECRET_QUIET);
	T_EQ(ret, -ENOMEM);
	T_EQ(mmkit_secret_stats(&st), 0);
	printf("    %s\n", st.last_error);
	if (!strstr(st.last_error, "memory cgroup allows 32 MiB") ||
	    !strstr(st.last_error, v1 ? "memory.limit_in_bytes" : "memory.max"))
		T_FAIL("the reason does not name the cgroup's limit: %s", st.last_error);
	T_EQ(st.pages_mapped, 0);
	T_CASE("a 1 MiB secret in the same cgroup: works");
	T_EQ(mmkit_secret_alloc(&p, MIB, MMKIT_SECRET_QUIET), 0);
	memset(p, 0x5a, MIB);
	mmkit_secret_free(p);
}

/* The cgroups of runs killed before they could remove theirs (empty by now). */
static void remove_stale(const char *own)
{
	char path[PATH_MAX + 300];
	struct dirent *e;
	DIR *d = opendir(own);
	int pid;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (sscanf(e->d_name, "mmkit-test-%d", &pid) == 1 && pid > 0 &&
		    kill(pid, 0) && errno == ESRCH) {
			snprintf(path, sizeof(path), "%s/%s", own, e->d_name);
			rmdir(path);
		}
	closedir(d);
}

static void backends(void *arg)
{
	(void)arg;
	t_secret_backends(suite);
}

int main(void)
{
	char own[PATH_MAX - 64], pid[32];
	int status;

	if (!t_is_root())
		T_SKIP("making a memory cgroup needs root");
	if (!own_cgroup(own, sizeof(own)))
		T_SKIP("no memory cgroup mounted where this process can see it");
	remove_stale(own);
	snprintf(cg, sizeof(cg), "%s/mmkit-test-%d", own, (int)getpid());
	if (mkdir(cg, 0755))
		T_SKIP("cannot make a child cgroup %s: %s", cg, strerror(errno));
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (cg_write(v1 ? "memory.limit_in_bytes" : "memory.max", "33554432") ||
	    cg_write("cgroup.procs", pid)) {
		rmdir(cg);
		T_SKIP("cannot limit %s and move into it (cgroup v2 needs the memory controller in the parent's subtree_control)",
		       cg);
	}
	printf("cgroup %s, limit 32 MiB\n", cg);
	status = t_in_child(backends, NULL);
	/* Back to the parent cgroup, so that the child one can go. */
	snprintf(cg, sizeof(cg), "%s", own);
	cg_write("cgroup.procs", pid);
	snprintf(cg, sizeof(cg), "%s/mmkit-test-%d", own, (int)getpid());
	rmdir(cg);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	T_FAIL("the test's child died: status %#x", status);
}
