// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit run --names: running the program under the filter that sends its
 * prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, ...) calls to this process,
 * which answers them (names-supervise.c) until the program ends.
 *
 * The program runs as a child of this process: the child sets
 * no_new_privs (no privilege needed) and installs the seccomp filter
 * (filter_install()), sends its listener back over a socketpair, waits
 * for the go and executes the program.  The filter is inherited by every
 * thread and process the program makes, across exec.  This process passes
 * SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 on, ignores the SIGINT and SIGQUIT a
 * terminal sends the program too, and exits with the program's status (or
 * dies of its signal), leaving a supervisor to the processes the program
 * left running (survivors_supervise()).  If it is killed, the kernel
 * answers the calls that would have come here with ENOSYS, and the
 * program goes on.
 *
 * Where the kernel names VMAs, none of this happens: the program is run
 * as without --names and the kernel names.  Nor under a supervisor
 * already (a nested mmkit run --names): the outer one names.
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
#include <stdint.h>
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
#include <unistd.h>

#include "cli.h"
#include "mmkit.h"
#include "names.h"

#if defined(__x86_64__) && !defined(__ILP32__)
#define NATIVE_ARCH	AUDIT_ARCH_X86_64
#elif defined(__aarch64__) && !defined(__ILP32__)
#define NATIVE_ARCH	AUDIT_ARCH_AARCH64
#endif

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define FLAG_WAIT_KILLABLE_RECV	(1UL << 5)
#else
#define FLAG_WAIT_KILLABLE_RECV	SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#endif

/* Like env(1): the program could not be found, or not be run. */
#define EXIT_NOT_FOUND		127
#define EXIT_CANNOT_RUN		126

#ifdef NATIVE_ARCH
/* Where a jump of the filter goes, resolved by filter_install(). */
enum target { NEXT, ALLOW, NOTIFY, PRCTL };

struct insn {
	struct sock_filter f;
	enum target jt, jf;
	int label;		/* PRCTL, NOTIFY or ALLOW: this instruction is that target */
};

#define LD(off)			{ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off)), NEXT, NEXT, NEXT }
#define JEQ(k, t, f)		{ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), 0, 0), t, f, NEXT }
#define ARG_LO(i)		(offsetof(struct seccomp_data, args[i]))
/* Little endian (x86-64, arm64): the low half of an argument comes first. */
#define ARG_HI(i)		(offsetof(struct seccomp_data, args[i]) + 4)

/*
 * Installs the filter, returning its listener or -errno.  To user
 * notification: prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, ...) and mremap()
 * (names follow it) of this architecture only: nothing else, so that
 * processes that outlive this one (whose notified calls then fail with
 * ENOSYS) can still fork and execute.  Everything else is allowed by the
 * filter itself: arch and call number are checked before any argument is
 * loaded, so the verdict for every other call depends on the call number
 * alone, which Linux 5.11+ caches (the BPF program does not run for
 * them).  prctl's option is an int (the kernel reads the low 32 bits
 * only), PR_SET_VMA_ANON_NAME an unsigned long (all 64).  Calls of another ABI (32-bit programs) are allowed: the kernel
 * answers them itself.
 */
static int filter_install(void)
{
	struct insn p[] = {
		LD(offsetof(struct seccomp_data, arch)),
		JEQ(NATIVE_ARCH, NEXT, ALLOW),
		LD(offsetof(struct seccomp_data, nr)),
		JEQ(__NR_prctl, PRCTL, NEXT),
		JEQ(__NR_mremap, NOTIFY, ALLOW),
		{ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)), NEXT, NEXT, PRCTL },
		JEQ(PR_SET_VMA, NEXT, ALLOW),
		LD(ARG_LO(1)),
		JEQ(PR_SET_VMA_ANON_NAME, NEXT, ALLOW),
		LD(ARG_HI(1)),
		JEQ(0, NEXT, ALLOW),
		{ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF), NEXT, NEXT, NOTIFY },
		{ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW), NEXT, NEXT, ALLOW },
	};
	enum { N = sizeof(p) / sizeof(p[0]) };
	struct sock_filter f[N];
	struct sock_fprog prog = { N, f };
	int at[PRCTL + 1] = { 0 }, listener, i;

	for (i = 0; i < N; i++)
		at[p[i].label] = i;
	for (i = 0; i < N; i++) {
		f[i] = p[i].f;
		if (p[i].jt != NEXT)
			f[i].jt = (unsigned char)(at[p[i].jt] - i - 1);
		if (p[i].jf != NEXT)
			f[i].jf = (unsigned char)(at[p[i].jf] - i - 1);
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	/*
	 * SPEC_ALLOW (4.17): a filter that is no sandbox must not turn on the
	 * speculation mitigations seccomp otherwise forces on the program
	 * where the kernel is booted with spec_store_bypass_disable=seccomp
	 * (the x86 default before 5.16), which slow its own code too.
	 */
	listener = (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER,
				SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_SPEC_ALLOW |
				FLAG_WAIT_KILLABLE_RECV, &prog);
	/*
	 * WAIT_KILLABLE_RECV (5.19): once the supervisor has a call, only a
	 * fatal signal ends the caller's wait, else each signal (a program's
	 * timer) makes it call again, and the supervisor's answer is lost.
	 * Before 5.19, EINVAL: without it.
	 */
	if (listener < 0 && errno == EINVAL)
		listener = (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER,
					SECCOMP_FILTER_FLAG_NEW_LISTENER |
					SECCOMP_FILTER_FLAG_SPEC_ALLOW, &prog);
	return listener < 0 ? -errno : listener;
}
#else
static int filter_install(void)
{
	return -EOPNOTSUPP;
}
#endif

/* Sends @fd (or, if negative, the error -@fd) over the socket @s. */
static void fd_send(int s, int fd)
{
	char buf[CMSG_SPACE(sizeof(int))] = { 0 };
	int err = fd < 0 ? -fd : 0;
	struct iovec iov = { &err, sizeof(err) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	if (fd >= 0) {
		m.msg_control = buf;
		m.msg_controllen = sizeof(buf);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	while (sendmsg(s, &m, MSG_NOSIGNAL) < 0 && errno == EINTR)
		;
}

/* The descriptor fd_send() sent, or -errno (the child's error, or the socket's). */
static int fd_recv(int s)
{
	char buf[CMSG_SPACE(sizeof(int))];
	int err = 0, fd = -1;
	struct iovec iov = { &err, sizeof(err) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = buf,
			    .msg_controllen = sizeof(buf) };
	struct cmsghdr *c;
	ssize_t got;

	do
		got = recvmsg(s, &m, MSG_CMSG_CLOEXEC);
	while (got < 0 && errno == EINTR);
	if (got != (ssize_t)sizeof(err))
		return got < 0 ? -errno : -EPIPE;
	c = CMSG_FIRSTHDR(&m);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	if (err)
		return -err;
	return fd >= 0 ? fd : -EPROTO;
}

/* Signals passed on to the program; a terminal sends SIGINT and SIGQUIT to it itself. */
static const int forwarded[] = { SIGTERM, SIGHUP, SIGUSR1, SIGUSR2 };

/*
 * Answers the program's naming calls on @listener until @child ends; its
 * wait status.  With no @child (0): until no task uses the filter any
 * more (the listener reports POLLHUP), for the processes left running.
 */
static int supervise(int listener, pid_t child, int sigfd)
{
	struct seccomp_notif_sizes sizes = { 0 };
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	struct signalfd_siginfo si;
	struct pollfd pfd[2] = { { listener, POLLIN, 0 }, { sigfd, POLLIN, 0 } };
	int status = 0;
	size_t i;

	/* The kernel's structures may be larger than these headers' (seccomp_unotify(2)). */
	syscall(__NR_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes);
	req = calloc(1, sizes.seccomp_notif > sizeof(*req) ? sizes.seccomp_notif : sizeof(*req));
	resp = calloc(1, sizes.seccomp_notif_resp > sizeof(*resp) ? sizes.seccomp_notif_resp :
			 sizeof(*resp));
	for (;;) {
		/* mremap() follow-ups are looked at between the calls answered, never waited for. */
		if (poll(pfd, child ? 2 : 1, cli_names_followups(0)) < 0 && errno != EINTR)
			break;
		if (child && pfd[1].revents && read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
				if ((int)si.ssi_signo == forwarded[i])
					kill(child, forwarded[i]);
			if (waitpid(child, &status, WNOHANG) == child)
				break;
		}
		/* No task uses the filter: no call can come any more. */
		if ((pfd[0].revents & (POLLIN | POLLHUP)) == POLLHUP) {
			if (!child)
				break;
			pfd[0].fd = -1;
		}
		/* Without memory for a request, the program's calls wait for it: none is lost. */
		if (!(pfd[0].revents & POLLIN) || !req || !resp)
			continue;
		memset(req, 0, sizes.seccomp_notif > sizeof(*req) ? sizes.seccomp_notif :
			       sizeof(*req));
		/* ENOENT: the caller died before we took its call. */
		if (!ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, req))
			cli_names_answer(req, resp);
	}
	free(req);
	free(resp);
	return status;
}

/*
 * The program's direct child has ended, processes it made may still run
 * (daemons): their naming calls and mremap() still come to @listener, and
 * would get ENOSYS without a supervisor.  A supervisor of their own,
 * detached (a session of its own, standard streams on /dev/null, in /, the
 * signal mask of mmkit's caller), keeps the listener and the registries
 * until no task uses the filter, while mmkit exits with the program's
 * status at once.  If it cannot be made, they get ENOSYS, as before.
 */
static void survivors_supervise(int listener, int sigfd, const sigset_t *old)
{
	struct pollfd pfd = { listener, POLLIN, 0 };
	int fd;

	if (poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLIN | POLLHUP)) == POLLHUP)
		return;
	if (fork())
		return;
	close(sigfd);
	sigprocmask(SIG_SETMASK, old, NULL);
	setsid();
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
	}
	if (chdir("/"))
		_exit(CLI_EXIT_FAIL);
	supervise(listener, 0, -1);
	_exit(0);
}

/* In the child: the filter, its listener to the parent, then the program. */
static void child_run(int s, char **argv, const sigset_t *mask)
{
	int listener, err;
	char go;

	sigprocmask(SIG_SETMASK, mask, NULL);
	listener = filter_install();
	if (listener < 0) {
		fd_send(s, listener);
		_exit(EXIT_CANNOT_RUN);
	}
	fd_send(s, listener);
	close(listener);
	/* Run only once the supervisor has the listener: else its calls would wait. */
	if (read(s, &go, 1) != 1)
		_exit(EXIT_CANNOT_RUN);
	close(s);
	execvp(argv[0], argv);
	err = errno;
	cli_error("run: %s: %s", argv[0], strerror(err));
	_exit(err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN);
}

/* mmkit's exit for the program's wait status @status: its code, or its signal. */
static int exit_as(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status)) {
		signal(WTERMSIG(status), SIG_DFL);
		raise(WTERMSIG(status));
		return 128 + WTERMSIG(status);
	}
	return CLI_EXIT_FAIL;
}

#define PROBE_NAME	"mmkit-nested-probe"

struct probe {
	unsigned long addr;
	int found;
};

static int probe_fn(const struct mmkit_region *r, void *arg)
{
	struct probe *q = arg;

	if (q->addr >= r->start && q->addr < r->end && r->kind == MMKIT_REGION_REGISTRY &&
	    !strcmp(r->name, PROBE_NAME))
		q->found = 1;
	return 0;
}

/*
 * Whether this process runs under a supervisor already (mmkit run --names
 * in mmkit run --names), asked with a raw prctl(PR_SET_VMA_ANON_NAME) (a
 * preload may fake libc's prctl()): 1 if it answers 0 and the registry the
 * outer supervisor installed here holds the name; 0 if it fails (no
 * supervisor: this one is to be); -EPROTO if it answers 0 and names
 * nothing (a seccomp filter answering 0 for it: names would be lost).
 */
static int outer_supervisor(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct probe q = { 0 };
	char *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int ret;

	if (p == MAP_FAILED)
		return 0;
	q.addr = (unsigned long)(uintptr_t)p;
	ret = syscall(SYS_prctl, PR_SET_VMA, PR_SET_VMA_ANON_NAME, p, page, PROBE_NAME) ? 0 : 1;
	if (ret && (mmkit_regions(getpid(), probe_fn, &q) || !q.found))
		ret = -EPROTO;
	if (ret > 0)
		syscall(SYS_prctl, PR_SET_VMA, PR_SET_VMA_ANON_NAME, p, page, NULL);
	munmap(p, page);
	return ret;
}

int cli_names_run(char **argv)
{
	sigset_t mask, old;
	struct rlimit rl;
	int sp[2], sigfd, status, listener;
	pid_t child;
	size_t i;

	/*
	 * The kernel names VMAs: it does the work, the program runs as it
	 * would.  Already under a supervisor (mmkit run --names in mmkit run
	 * --names): that one gets the program's calls too, through the filter
	 * the program inherits, and keeps its names in the same registries; a
	 * second filter could not have a listener anyway (EBUSY).
	 */
	if (!mmkit__kernel_names())
		return -1;
	status = outer_supervisor();
	if (status > 0)
		return -1;
	if (status < 0) {
		cli_error("run: --names: prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME) answers 0 here but "
			  "names nothing, not even in a supervisor's registry (a seccomp filter or "
			  "other tool answering for the kernel?): the program's names would be lost");
		return CLI_EXIT_FAIL;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp)) {
		cli_error("run: --names: %s", strerror(errno));
		return CLI_EXIT_FAIL;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(&mask, forwarded[i]);
	sigprocmask(SIG_BLOCK, &mask, &old);
	sigfd = signalfd(-1, &mask, SFD_CLOEXEC);
	child = sigfd < 0 ? -1 : fork();
	if (child == 0)
		child_run(sp[1], argv, &old);
	close(sp[1]);
	if (child < 0) {
		cli_error("run: --names: %s", strerror(errno));
		return CLI_EXIT_FAIL;
	}
	/* A terminal's ^C and ^\ are the program's (it gets them too): mmkit lives on to answer it. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	listener = fd_recv(sp[0]);
	if (listener < 0) {
		cli_error("run: --names: cannot install the seccomp filter that sends prctl(PR_SET_VMA) "
			  "here (seccomp user notification, Linux 5.9+): %s", strerror(-listener));
		waitpid(child, &status, 0);
		return CLI_EXIT_FAIL;
	}
	status = cli_names_supervisor(listener);
	if (status) {
		cli_error("run: --names: cannot make a memfd for the registries: %s",
			  strerror(-status));
		kill(child, SIGKILL);
		waitpid(child, &status, 0);
		return CLI_EXIT_FAIL;
	}
	/* Registries for many processes: one descriptor each. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (send(sp[0], "", 1, MSG_NOSIGNAL) != 1) {
		cli_error("run: --names: the program did not wait for its supervisor: %s",
			  strerror(errno));
		return CLI_EXIT_FAIL;
	}
	close(sp[0]);
	status = supervise(listener, child, sigfd);
	survivors_supervise(listener, sigfd, &old);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return exit_as(status);
}
