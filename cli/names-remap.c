// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit run --names: names follow the program's mremap() calls
 * (names-supervise.c answers the rest).  The call is the kernel's to
 * make; the supervisor follows it, never waiting for it, and moves the
 * names once it sees where the VMA went.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "names.h"
#include "names-supervise.h"

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
 * FAST_FOR_NS, then every LOOK_SLOW_NS, and when the thread makes its next
 * call that comes here (one look), until the thread is seen past the
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
 * 1 if thread @tid of process @tgid is past its system call @d: its
 * syscall file shows it stopped in another call, or in none, or it is
 * gone; 0 while it runs ("running": maybe still in that call) or is
 * stopped in a call like it, or if it cannot be read.  Looked for under
 * the process: a number reused by another process is not the thread.
 */
static int thread_past(pid_t tgid, pid_t tid, const struct seccomp_data *d)
{
	unsigned long long a[6];
	char path[64], buf[256];
	ssize_t got;
	long nr;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)tgid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT;
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

/*
 * Whether the VMA of @a holding @at reaches into [@start, @end): a range
 * mapped beside what is left of the old one after a failed call, merged
 * with it, rather than the VMA moved (which left the old range unmapped).
 */
static int spans_touch(const struct mmkit__span *a, size_t na, uint64_t at, uint64_t start,
		       uint64_t end)
{
	size_t i;

	for (i = 0; i < na; i++)
		if (a[i].start <= at && at < a[i].end)
			return a[i].start < end && start < a[i].end;
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
	uint64_t at;

	/* Grown in place: the part after it is new, and the rest is still there. */
	if ((f->how == GROW_IN_PLACE || f->how == MAY_MOVE) && new_len > old_len &&
	    spans_new(after, na, f->before, f->nb, new_len - old_len) == old + old_len &&
	    spans_cover(after, na, old, old + new_len))
		return old;
	if (f->how == MAY_MOVE && moved) {
		at = spans_new(after, na, f->before, f->nb, new_len);
		return at && !spans_touch(after, na, at, old, old + old_len) ? at : 0;
	}
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
	struct proc *p = cli_names_proc_named(f->tgid);
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
	int past = thread_past(f->tgid, f->tid, &f->d);
	struct mmkit__span *after;
	int64_t now = now_ns();
	uint64_t at;
	ssize_t got = mmkit__vma_spans(f->tgid, &after);

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

int cli_names_followups(pid_t tid)
{
	int64_t now = now_ns(), wait = -1;
	size_t i;

	for (i = 0; i < fu.n;)
		if ((tid ? fu.f[i].tid != tid : fu.f[i].next > now) || !followup_look(i))
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
void cli_names_mremap(struct seccomp_notif *req, struct seccomp_notif_resp *resp, int listener)
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
	p = cli_names_proc_named(req->pid);
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
		cli_names_proc_install(p, req->id);
	}
	/* Not sent (ENOENT: a signal ended the wait, the call is made again): nothing changed. */
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, resp) || nb < 0) {
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
