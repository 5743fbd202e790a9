// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit run --names: the supervisor's answers (names-run.c runs the
 * program).  The names a program gives its anonymous memory with
 * prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, ...) (Go's runtime, glibc 2.39,
 * or any other, by libc or a raw system call) are kept where the kernel
 * drops them (CONFIG_ANON_VMA_NAME off), in the registries libmmkit's
 * readers read (mmkit maps, mmkit_regions(), the bindings).
 *
 * For each call the supervisor reads the name (80 bytes at most,
 * process_vm_readv), checks the notification is still valid, makes the
 * kernel's checks and walks the VMAs of the process in its registry
 * (lib/names.c, lib/names-registry.c: the code mmkit_name() uses), and
 * answers with the kernel's result: 0, EINVAL, ENOMEM for a hole (after
 * naming what is mapped), EBADF for a file.
 *
 * Where readers find the names: each process gets a registry memfd of its
 * own, installed in it with SECCOMP_IOCTL_NOTIF_ADDFD (close-on-exec) on its
 * first naming call, written by the supervisor only (sealed like the
 * library's).  Readers scan /proc/PID/fd for it as for any registry.
 *  - fork: the child inherits its parent's descriptor, and so its names
 *    (the kernel copies names at fork).  Forks are not sent here (a
 *    process that outlives mmkit must still fork): on the child's first
 *    naming call, the supervisor, not knowing it, looks at its parent's
 *    number; if it holds the very file installed in the parent, the child
 *    gets a registry of its own, a copy of the parent's names then,
 *    installed at that number (replacing the shared one).  Until then
 *    readers of the child see the registry it shares with its parent,
 *    names the parent sets after the fork included.
 *  - exec closes the descriptor (close-on-exec): on the process's next
 *    naming call the supervisor finds its descriptor gone and starts it a
 *    new, empty registry, as exec drops names.  A program that closes the
 *    descriptor itself (closefrom) loses its names the same way.
 *  - processes that are gone: their registries are dropped when the
 *    number of registries has doubled since the last look.
 *  - mremap: sent here too; the names follow the VMA (names-remap.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "names.h"
#include "names-supervise.h"

static struct {
	int listener;
	struct proc **p;
	size_t n, cap;
	size_t sweep_at;	/* registries that make sweep() look for processes gone */
	dev_t memfd_dev;
	size_t max_entries;	/* vm.max_map_count: the kernel's bound on VMAs, so on names */
} sv = { .listener = -1, .sweep_at = 64, .max_entries = 65530 };

/*
 * Reads the name at @uaddr of thread @tid as strndup_user(uname, 80) would:
 * 0 and the name in @buf; -EFAULT if it cannot be read up to its NUL;
 * -EINVAL if the 80 bytes hold none.  The read is split at the page
 * boundary: process_vm_readv() does not split an iovec element.
 */
static int name_read(pid_t tid, uint64_t uaddr, char *buf)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t first = page - (uaddr & (page - 1));
	struct iovec local = { buf, MMKIT_NAME_MAX };
	struct iovec remote[2] = { { (void *)(uintptr_t)uaddr, MMKIT_NAME_MAX },
				   { (void *)(uintptr_t)(uaddr + first), 0 } };
	ssize_t got;

	if (first < MMKIT_NAME_MAX) {
		remote[0].iov_len = first;
		remote[1].iov_len = MMKIT_NAME_MAX - first;
	}
	got = process_vm_readv(tid, &local, 1, remote, remote[1].iov_len ? 2 : 1, 0);
	if (got <= 0)
		return -EFAULT;
	if (memchr(buf, '\0', (size_t)got))
		return 0;
	return got == MMKIT_NAME_MAX ? -EINVAL : -EFAULT;
}

/* The thread group of thread @tid, from /proc/TID/status; -errno if it is gone. */
static pid_t tgid_of(pid_t tid, pid_t *ppid)
{
	char path[64], buf[4096], *s;
	pid_t tgid;
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got <= 0)
		return -ESRCH;
	buf[got] = '\0';
	s = strstr(buf, "\nTgid:\t");
	if (!s || sscanf(s, "\nTgid:\t%d", &tgid) != 1 || tgid <= 0)
		return -ESRCH;
	s = strstr(buf, "\nPPid:\t");
	if (!s || sscanf(s, "\nPPid:\t%d", ppid) != 1)
		*ppid = 0;
	return tgid;
}

/* 1 if descriptor @fd of process @tgid is the file @dev, @ino: the registry installed. */
static int fd_is_file(pid_t tgid, int fd, dev_t dev, ino_t ino)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)tgid, fd);
	return fd >= 0 && !stat(path, &st) && st.st_dev == dev && st.st_ino == ino;
}

static struct proc *proc_find(pid_t tgid)
{
	size_t i;

	for (i = 0; i < sv.n; i++)
		if (sv.p[i]->tgid == tgid)
			return sv.p[i];
	return NULL;
}

static void proc_drop(size_t i)
{
	mmkit__registry_release(&sv.p[i]->reg);
	free(sv.p[i]);
	sv.p[i] = sv.p[--sv.n];
}

/*
 * Drops the registries of processes gone (or that executed a program, or
 * closed the descriptor), once their number has doubled since the last
 * look: memory stays within twice what live processes need.
 */
static void sweep(void)
{
	size_t i;

	if (sv.n < sv.sweep_at)
		return;
	for (i = sv.n; i-- > 0;)
		if (!fd_is_file(sv.p[i]->tgid, sv.p[i]->target_fd, sv.p[i]->dev, sv.p[i]->ino))
			proc_drop(i);
	sv.sweep_at = 2 * sv.n > 64 ? 2 * sv.n : 64;
}

/*
 * The names of the registry a child inherited at descriptor @fd, read as
 * readers read any: the file is opened O_PATH (which opens nothing behind
 * it), must be a memfd, and only then is it read, through /proc/self/fd,
 * at most sv.max_entries entries of it.  Its other threads may swap the
 * descriptor meanwhile: what is read is checked, and bounded, whatever it
 * is.  How many, or -errno if there is none.
 */
static ssize_t inherited_read(pid_t tgid, int fd, struct mmkit__name_range **e)
{
	char path[64];
	struct stat st;
	ssize_t n = -ENOENT;
	int path_fd, rfd;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)tgid, fd);
	path_fd = open(path, O_PATH | O_CLOEXEC);
	if (path_fd < 0)
		return -errno;
	if (!fstat(path_fd, &st) && S_ISREG(st.st_mode) && !st.st_nlink &&
	    st.st_dev == sv.memfd_dev) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", path_fd);
		rfd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		n = rfd < 0 ? -errno : mmkit__names_read_fd(rfd, sv.max_entries, e);
		if (rfd >= 0)
			close(rfd);
	}
	close(path_fd);
	return n;
}

/*
 * A new registry for process @tgid: a copy of the one it inherited from
 * its parent @ppid at fork (still at the parent's number), else empty.
 */
static struct proc *proc_new(pid_t tgid, pid_t ppid)
{
	struct mmkit__name_range *e = NULL;
	struct proc *p, *parent = ppid > 0 ? proc_find(ppid) : NULL, **bigger;
	struct mmkit__registry init = MMKIT__REGISTRY_INIT;
	ssize_t n = 0;

	sweep();
	if (sv.n == sv.cap) {
		bigger = reallocarray(sv.p, sv.cap ? 2 * sv.cap : 16, sizeof(*bigger));
		if (!bigger)
			return NULL;
		sv.p = bigger;
		sv.cap = sv.cap ? 2 * sv.cap : 16;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->tgid = tgid;
	p->target_fd = -1;
	p->reg = init;
	/*
	 * Only the very file installed in the parent is the inherited
	 * registry: after exec (close-on-exec) the number may hold a file of
	 * the program's own, which is neither read nor replaced.
	 */
	if (parent && parent->target_fd >= 0 &&
	    fd_is_file(tgid, parent->target_fd, parent->dev, parent->ino)) {
		n = inherited_read(tgid, parent->target_fd, &e);
		/* Replaces the inherited descriptor: not read as the child's besides its own. */
		if (n >= 0) {
			p->target_fd = parent->target_fd;
			p->dev = parent->dev;
			p->ino = parent->ino;
		}
	}
	if (mmkit__registry_fill(&p->reg, e, n > 0 ? (size_t)n : 0)) {
		free(e);
		mmkit__registry_release(&p->reg);
		free(p);
		return NULL;
	}
	free(e);
	sv.p[sv.n++] = p;
	return p;
}

/*
 * The registry of the process of thread @tid.  A process whose descriptor
 * is gone executed a program (or closed it, or its number was reused by
 * a new process): it gets a new registry, as exec drops names.
 */
static struct proc *proc_get(pid_t tid)
{
	pid_t ppid = 0, tgid = tgid_of(tid, &ppid);
	struct proc *p;
	size_t i;

	if (tgid < 0)
		return NULL;
	p = proc_find(tgid);
	if (p && p->target_fd >= 0 && !fd_is_file(tgid, p->target_fd, p->dev, p->ino)) {
		for (i = 0; sv.p[i] != p; i++)
			;
		proc_drop(i);
		p = NULL;
	}
	return p ? p : proc_new(tgid, ppid);
}

void cli_names_proc_install(struct proc *p, uint64_t id)
{
	struct seccomp_notif_addfd add = { .id = id, .newfd_flags = O_CLOEXEC };
	struct stat st;
	int fd, got;

	fd = mmkit__registry_memfd(&p->reg, &st);
	if (fd < 0 || (p->target_fd >= 0 && st.st_dev == p->dev && st.st_ino == p->ino &&
		       fd_is_file(p->tgid, p->target_fd, p->dev, p->ino)))
		return;
	add.srcfd = (uint32_t)fd;
	/* Over a file installed here (or inherited from one) only, else at a new number. */
	if (p->target_fd >= 0 && fd_is_file(p->tgid, p->target_fd, p->dev, p->ino)) {
		add.flags = SECCOMP_ADDFD_FLAG_SETFD;
		add.newfd = (uint32_t)p->target_fd;
	}
	got = ioctl(sv.listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
	/* Before Linux 5.14 (no SETFD): a number of its own, the inherited one staying. */
	if (got < 0 && errno == EINVAL && add.flags) {
		add.flags = 0;
		add.newfd = 0;
		got = ioctl(sv.listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
	}
	if (got < 0)
		return;
	p->target_fd = got;
	p->dev = st.st_dev;
	p->ino = st.st_ino;
}

struct proc *cli_names_proc_named(pid_t tid)
{
	pid_t ppid, tgid = tgid_of(tid, &ppid);
	struct proc *p = tgid > 0 ? proc_find(tgid) : NULL;

	return p && p->reg.t.n && fd_is_file(tgid, p->target_fd, p->dev, p->ino) ? p : NULL;
}

/* Handles one notification: a naming call of the program, or an mremap(). */
void cli_names_answer(struct seccomp_notif *req, struct seccomp_notif_resp *resp)
{
	char name[MMKIT_NAME_MAX];
	uint64_t start, end, uname = req->data.args[4];
	struct proc *p;
	int ret = 0;

	memset(resp, 0, sizeof(*resp));
	resp->id = req->id;
	/*
	 * The thread's own mremap() first: stopped here, it is past that
	 * call, and its names are where the call left them.
	 */
	cli_names_followups(req->pid);
	if (req->data.nr == __NR_mremap) {
		cli_names_mremap(req, resp, sv.listener);
		return;
	}
	if (uname)
		ret = name_read(req->pid, uname, name);
	/* The thread may have died and its number be reused while we read: check after. */
	if (ioctl(sv.listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id))
		return;
	if (!ret)
		ret = mmkit__name_check(req->data.args[2], req->data.args[3], uname ? name : NULL,
					&start, &end);
	if (!ret && start != end) {
		p = proc_get(req->pid);
		/*
		 * The kernel splits a VMA to name part of it, and fails with
		 * ENOMEM past vm.max_map_count VMAs: so many names are refused
		 * here too, which bounds the registry of a hostile program.
		 */
		if (!p || p->reg.t.n + 2 > sv.max_entries)
			ret = -ENOMEM;
		else
			ret = mmkit__registry_name_of(&p->reg, req->pid, start, end,
						      uname ? name : NULL);
		/* What else can fail is reading /proc or memory: the kernel's ENOMEM. */
		if (ret && ret != -EBADF)
			ret = -ENOMEM;
		if (p)
			cli_names_proc_install(p, req->id);
	}
	resp->error = ret;
	ioctl(sv.listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
}

/* vm.max_map_count, if it can be read: the bound on a process's names. */
static void max_entries_read(void)
{
	unsigned long v;
	FILE *f = fopen("/proc/sys/vm/max_map_count", "re");

	if (f && fscanf(f, "%lu", &v) == 1 && v)
		sv.max_entries = v;
	if (f)
		fclose(f);
}

/* The device every memfd is on, from one of ours: what registries' files must be on. */
static int memfd_device(void)
{
	struct stat st;
	int fd = memfd_create("mmkit-probe", MFD_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = fstat(fd, &st) ? -errno : 0;
	close(fd);
	sv.memfd_dev = st.st_dev;
	return ret;
}

int cli_names_supervisor(int listener)
{
	sv.listener = listener;
	max_entries_read();
	return memfd_device();
}
