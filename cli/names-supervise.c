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
 *  - mremap: sent here too; the names follow the VMA (mremap_answer()).
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

/* One process named for: its registry and where it is installed in the process. */
struct proc {
	pid_t tgid;
	int target_fd;		/* the registry's number in the process, -1: not installed */
	dev_t dev;		/* the file installed there */
	ino_t ino;
	struct mmkit__registry reg;
};

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

/* Puts @p's registry into its process, if not there: after it was made or moved (grown). */
static void proc_install(struct proc *p, uint64_t id)
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

/* The registry of the process of thread @tid if it has one (still installed), else NULL. */
static struct proc *proc_named(pid_t tid)
{
	pid_t ppid, tgid = tgid_of(tid, &ppid);
	struct proc *p = tgid > 0 ? proc_find(tgid) : NULL;

	return p && p->reg.t.n && fd_is_file(tgid, p->target_fd, p->dev, p->ino) ? p : NULL;
}

/* Whether [@start, @end) is mapped, all of it, in the @n sorted VMAs @v. */
static int spans_cover(const struct mmkit__span *v, size_t n, uint64_t start, uint64_t end)
{
	size_t i;

	for (i = 0; i < n && start < end; i++)
		if (v[i].start <= start && v[i].end > start)
			start = v[i].end;
	return start >= end;
}

#define CLIP(x, lo, hi)	((x) < (lo) ? (lo) : (x) > (hi) ? (hi) : (x))

/*
 * Whether @a and @b (sorted) have the same VMAs over [@start, @end), cut
 * to it: the call did not change it (a VMA merged with a neighbour mapped
 * since, out of the range, is the same).
 */
static int spans_same(const struct mmkit__span *a, size_t na, const struct mmkit__span *b,
		      size_t nb, uint64_t start, uint64_t end)
{
	size_t i = 0, j = 0;

	while (i < na && a[i].end <= start)
		i++;
	while (j < nb && b[j].end <= start)
		j++;
	for (; i < na && j < nb && a[i].start < end && b[j].start < end; i++, j++)
		if (CLIP(a[i].start, start, end) != CLIP(b[j].start, start, end) ||
		    CLIP(a[i].end, start, end) != CLIP(b[j].end, start, end))
			return 0;
	return (i == na || a[i].start >= end) && (j == nb || b[j].start >= end);
}

/*
 * The one range of @len bytes mapped in @a (@na VMAs, sorted) whose every
 * byte was unmapped in @b (@nb, sorted), and that is not part of a larger
 * such range: where a moved VMA went.  0 if there is none, or more than
 * one (other threads mapping meanwhile: the name is dropped).  One pass
 * over both.
 */
static uint64_t spans_new(const struct mmkit__span *a, size_t na, const struct mmkit__span *b,
			  size_t nb, uint64_t len)
{
	uint64_t found = 0, s, e, run_start = 0, run_end = 0;
	size_t i, j = 0, hits = 0;

	for (i = 0; i < na; i++) {
		for (s = a[i].start; s < a[i].end; s = e) {
			while (j < nb && b[j].end <= s)
				j++;
			if (j < nb && b[j].start <= s) {
				e = b[j].end;
				continue;
			}
			e = j < nb && b[j].start < a[i].end ? b[j].start : a[i].end;
			if (run_end && run_end == s) {
				run_end = e;
				continue;
			}
			if (run_end && run_end - run_start == len && ++hits)
				found = run_start;
			run_start = s;
			run_end = e;
		}
	}
	if (run_end && run_end - run_start == len && ++hits)
		found = run_start;
	return hits == 1 ? found : 0;
}

/*
 * An mremap() of named memory is the kernel's to make
 * (SECCOMP_USER_NOTIF_FLAG_CONTINUE); its names follow once it is seen
 * done.  The supervisor never waits for that: the call is a follow-up,
 * looked at from the poll loop (cli_names_followups()) between the
 * notifications it answers, every LOOK_FAST_NS for the first
 * FAST_FOR_NS, then every LOOK_SLOW_NS, until the thread is seen past the
 * call or GIVE_UP_NS have passed (a thread that computes right after a
 * failed call is "running" for /proc/TID/syscall: maybe still in it).
 * PENDING_MAX follow-ups per process at most: past that, the names of
 * what a call may change are dropped at once.  Given up, names are
 * dropped, never put on memory the call may not have made.
 */
#define LOOK_FAST_NS	1000000ll
#define LOOK_SLOW_NS	20000000ll
#define FAST_FOR_NS	20000000ll
#define GIVE_UP_NS	5000000000ll
#define PENDING_MAX	8

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000ll + t.tv_nsec;
}

/*
 * 1 if thread @tid is past its system call @d: /proc/TID/syscall shows it
 * stopped in another call, or in none; 0 while it runs ("running": maybe
 * still in that call) or is stopped in a call like it, or if it cannot be
 * read.
 */
static int thread_past(pid_t tid, const struct seccomp_data *d)
{
	unsigned long long a[6];
	char path[64], buf[256];
	ssize_t got;
	long nr;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got <= 0)
		return 0;
	buf[got] = '\0';
	if (sscanf(buf, "%ld", &nr) != 1)
		return 0;
	if (nr != d->nr)
		return 1;
	if (sscanf(buf, "%*d %llx %llx %llx %llx %llx %llx", &a[0], &a[1], &a[2], &a[3], &a[4],
		   &a[5]) != 6)
		return 0;
	for (i = 0; i < 6; i++)
		if (a[i] != d->args[i])
			return 1;
	return 0;
}

/* Whether a VMA of @a over [@start, @end) is one of @b, unchanged: not all of the range moved. */
static int spans_kept(const struct mmkit__span *a, size_t na, const struct mmkit__span *b,
		      size_t nb, uint64_t start, uint64_t end)
{
	size_t i, j = 0;

	for (i = 0; i < na && a[i].start < end; i++) {
		if (a[i].end <= start)
			continue;
		while (j < nb && b[j].start < a[i].start)
			j++;
		if (j < nb && b[j].start == a[i].start && b[j].end == a[i].end)
			return 1;
	}
	return 0;
}

/* What an mremap() may do with the VMA. */
enum remap { GROW_IN_PLACE, SHRINK, MAY_MOVE, FIXED, FIXED_KEEP_OLD, MOVE_KEEP_OLD, REFUSED,
	     UNKNOWN };

/* An mremap() of named memory, until its names are where the VMA is. */
struct followup {
	pid_t tid, tgid;
	struct seccomp_data d;
	enum remap how;
	uint64_t old, old_len, new_len, to;
	struct mmkit__span *before;	/* the VMAs before the call */
	size_t nb;
	int64_t since, next;		/* when the call went on, when to look next */
};

static struct {
	struct followup *f;
	size_t n, cap;
} fu;

/*
 * Where the VMA of follow-up @f is in @after (@na VMAs), if that tells the
 * call is done: 0 if not (yet), or if other threads mapped alike meanwhile.
 * A moved VMA leaves none of the VMAs over its old range as they were.
 */
static uint64_t remap_where(const struct followup *f, const struct mmkit__span *after, size_t na)
{
	uint64_t old = f->old, old_len = f->old_len, new_len = f->new_len;
	int moved = !spans_kept(after, na, f->before, f->nb, old, old + old_len);

	/* Grown in place: the part after it is new, and the rest is still there. */
	if ((f->how == GROW_IN_PLACE || f->how == MAY_MOVE) && new_len > old_len &&
	    spans_new(after, na, f->before, f->nb, new_len - old_len) == old + old_len &&
	    spans_cover(after, na, old, old + new_len))
		return old;
	if (f->how == MAY_MOVE && moved)
		return spans_new(after, na, f->before, f->nb, new_len);
	if (f->how == FIXED && moved)
		return spans_cover(after, na, f->to, f->to + new_len) ? f->to : 0;
	/* The old range stays: only a destination unmapped before tells the call is done. */
	if (f->how == MOVE_KEEP_OLD)
		return spans_new(after, na, f->before, f->nb, new_len);
	if (f->how == FIXED_KEEP_OLD)
		return spans_new(after, na, f->before, f->nb, new_len) == f->to ? f->to : 0;
	return 0;
}

/*
 * The names of follow-up @f's process once the call is over: @at where
 * the VMA is (0: not found); @failed: the old range is as it was and the
 * thread past the call, which failed (its names stay, as the kernel's).
 * Else what the call may have changed loses its names: never put on
 * memory it may not have made.
 */
static void followup_end(struct followup *f, uint64_t at, int failed)
{
	struct proc *p = proc_named(f->tgid);
	uint64_t keep = f->old_len < f->new_len ? f->old_len : f->new_len;
	int keep_old = f->how == MOVE_KEEP_OLD || f->how == FIXED_KEEP_OLD;
	struct mmkit__name_range *moved = NULL, grown;
	ssize_t n;

	if (p && f->how == SHRINK && !failed)
		mmkit__registry_take(&p->reg, f->old + f->new_len, f->old_len - f->new_len, 0,
				     &moved);
	else if (p && !failed && !(at == f->old && f->how != SHRINK)) {
		n = mmkit__registry_take(&p->reg, f->old, keep_old ? 0 : f->old_len, keep, &moved);
		/* What MREMAP_FIXED replaces loses its names, whatever moves there. */
		if (at || f->how == FIXED || f->how == FIXED_KEEP_OLD)
			mmkit__registry_put(&p->reg, at ? at : f->to, f->new_len, at ? moved : NULL,
					    at && n > 0 ? (size_t)n : 0);
	}
	/* Grown (in place or moved): one VMA, one name, that of its end, over the new part. */
	if (p && at && f->new_len > f->old_len) {
		free(moved);
		n = mmkit__registry_take(&p->reg, at, 0, f->old_len, &moved);
		if (n > 0 && moved[n - 1].end == f->old_len) {
			grown = moved[n - 1];
			grown.start = f->old_len;
			grown.end = f->new_len;
			mmkit__registry_put(&p->reg, at, 0, &grown, 1);
		}
	}
	free(moved);
	free(f->before);
	*f = fu.f[--fu.n];
}

/*
 * One look at follow-up @i: ends it if the call is seen done, or given up.
 * A place found in the first maps read after the thread is seen past the
 * call, or before, is the VMA's; later reads could show what the program
 * mapped since.  1 if it ended.
 */
static int followup_look(size_t i)
{
	struct followup *f = &fu.f[i];
	int past = thread_past(f->tid, &f->d);
	struct mmkit__span *after;
	int64_t now = now_ns();
	uint64_t at;
	ssize_t got = mmkit__vma_spans(f->tid, &after);

	if (got < 0) {
		followup_end(f, 0, 0);
		return 1;
	}
	at = remap_where(f, after, (size_t)got);
	if (!at && f->how == SHRINK)
		at = !spans_same(after, (size_t)got, f->before, f->nb, f->old, f->old + f->old_len);
	if (at || past || now - f->since > GIVE_UP_NS) {
		if (f->how == SHRINK)
			followup_end(f, 0, !at && past);
		else
			followup_end(f, at, !at && past && f->how != MOVE_KEEP_OLD &&
					    f->how != FIXED_KEEP_OLD &&
					    spans_same(after, (size_t)got, f->before, f->nb, f->old,
						       f->old + f->old_len));
		free(after);
		return 1;
	}
	free(after);
	f->next = now + (now - f->since < FAST_FOR_NS ? LOOK_FAST_NS : LOOK_SLOW_NS);
	return 0;
}

int cli_names_followups(pid_t tgid)
{
	int64_t now = now_ns(), wait = -1;
	size_t i;

	for (i = 0; i < fu.n;)
		if ((tgid ? fu.f[i].tgid != tgid : fu.f[i].next > now) || !followup_look(i))
			i++;
	now = now_ns();
	for (i = 0; i < fu.n; i++)
		if (wait < 0 || fu.f[i].next - now < wait)
			wait = fu.f[i].next - now > 0 ? fu.f[i].next - now : 0;
	return wait < 0 ? -1 : (int)((wait + 999999) / 1000000);
}

/*
 * An mremap() of the program: its names follow the VMA as the kernel's do
 * (mm/mremap.c: a moved VMA is a copy, name included, of the old one; a
 * grown one keeps its name over the new part).  They stay where they are
 * until the call is seen done (followup_look()): in place, at
 * MREMAP_FIXED's address, or at the one range of its size newly mapped.
 * MREMAP_DONTUNMAP leaves the old VMA as it was, name included.
 */
static void mremap_answer(struct seccomp_notif *req, struct seccomp_notif_resp *resp)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), old = req->data.args[0];
	uint64_t old_len = (req->data.args[1] + page - 1) & ~(page - 1);
	uint64_t new_len = (req->data.args[2] + page - 1) & ~(page - 1);
	uint64_t flags = req->data.args[3], to = req->data.args[4];
	int keep_old = !!(flags & MREMAP_DONTUNMAP), fixed = !!(flags & MREMAP_FIXED);
	struct mmkit__name_range *names;
	struct followup f = { 0 }, *bigger;
	ssize_t n = 0, nb = -1;
	size_t i, mine = 0;
	enum remap how;
	struct proc *p;

	/*
	 * What the kernel refuses (EINVAL) changes nothing: FIXED or
	 * DONTUNMAP without MAYMOVE, DONTUNMAP resizing, FIXED overlapping
	 * the old range.  Flags unknown here: the names of the old range go.
	 */
	if (((flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) && !(flags & MREMAP_MAYMOVE)) ||
	    (keep_old && old_len != new_len) ||
	    (fixed && to < old + old_len && old < to + new_len))
		how = REFUSED;
	else if (flags & ~(uint64_t)(MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP))
		how = UNKNOWN;
	else if (fixed)
		how = keep_old ? FIXED_KEEP_OLD : FIXED;
	else if (keep_old)
		how = MOVE_KEEP_OLD;
	else if (new_len > old_len)
		how = flags & MREMAP_MAYMOVE ? MAY_MOVE : GROW_IN_PLACE;
	else
		how = new_len < old_len ? SHRINK : REFUSED;	/* the same size: nothing changes */
	resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	p = proc_named(req->pid);
	/* Nor do bad addresses and lengths, nor a copy of shared memory (old_len 0). */
	if (p && (how == REFUSED || (old & (page - 1)) || !old_len || !new_len ||
		  old + old_len <= old || (fixed && (to & (page - 1)))))
		p = NULL;
	if (p) {
		/* Only what has names is followed: what the call changes, or replaces. */
		n = mmkit__registry_take(&p->reg, old, 0, old_len, &names);
		free(names);
		if (n <= 0 && fixed) {
			n = mmkit__registry_take(&p->reg, to, 0, new_len, &names);
			free(names);
		}
		for (i = 0; i < fu.n; i++)
			mine += fu.f[i].tgid == p->tgid;
		if (n > 0 && how != UNKNOWN && mine < PENDING_MAX)
			nb = mmkit__vma_spans(req->pid, &f.before);
		else if (n > 0) {
			mmkit__registry_take(&p->reg, old, old_len, 0, &names);
			free(names);
			if (fixed) {
				mmkit__registry_take(&p->reg, to, new_len, 0, &names);
				free(names);
			}
		}
		proc_install(p, req->id);
	}
	/* Not sent (ENOENT: a signal ended the wait, the call is made again): nothing changed. */
	if (ioctl(sv.listener, SECCOMP_IOCTL_NOTIF_SEND, resp) || nb < 0) {
		free(f.before);
		return;
	}
	if (fu.n == fu.cap) {
		bigger = reallocarray(fu.f, fu.cap ? 2 * fu.cap : 8, sizeof(*bigger));
		if (!bigger) {
			free(f.before);
			return;
		}
		fu.f = bigger;
		fu.cap = fu.cap ? 2 * fu.cap : 8;
	}
	f.tid = req->pid;
	f.tgid = p->tgid;
	f.d = req->data;
	f.how = how;
	f.old = old;
	f.old_len = old_len;
	f.new_len = new_len;
	f.to = fixed ? to : 0;
	f.nb = (size_t)nb;
	f.since = now_ns();
	fu.f[fu.n++] = f;
	/* A first look at once: the call is often done already. */
	followup_look(fu.n - 1);
}

/* Handles one notification: a naming call of the program, or an mremap(). */
void cli_names_answer(struct seccomp_notif *req, struct seccomp_notif_resp *resp)
{
	char name[MMKIT_NAME_MAX];
	uint64_t start, end, uname = req->data.args[4];
	struct proc *p;
	pid_t ppid, tgid;
	int ret = 0;

	memset(resp, 0, sizeof(*resp));
	resp->id = req->id;
	/* The process's mremap() calls first: their names are where the calls left them. */
	if (fu.n && (tgid = tgid_of(req->pid, &ppid)) > 0)
		cli_names_followups(tgid);
	if (req->data.nr == __NR_mremap) {
		mremap_answer(req, resp);
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
			proc_install(p, req->id);
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
