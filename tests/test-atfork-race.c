// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * A fork while the library registers its fork handlers must not leave the
 * child a lock held for good.  The library once took the lock its handlers
 * take, then called pthread_atfork(): a fork in between copied it held,
 * and the child's first secret (or name in the registry) waited forever.
 *
 * This program's own __register_atfork() (what pthread_atfork() calls,
 * interposed) holds the library's registration until the main thread has
 * forked, so the fork falls in that window every run.  The child makes its
 * first secret and names a page (the registry on a kernel without
 * CONFIG_ANON_VMA_NAME), under alarm(): a hang is SIGALRM.  Not under
 * ThreadSanitizer, whose start-up calls __register_atfork() before it can
 * run this program's code, nor linked statically (MMKIT_STATIC: the cross
 * build), where libc's own __register_atfork() is linked in beside it.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "harness.h"
#include "mmkit.h"

#define CHILD_SECONDS	10

#if !defined(__SANITIZE_THREAD__) && !defined(MMKIT_STATIC)
typedef int register_fn(void (*)(void), void (*)(void), void (*)(void), void *);

/* 1 while the next registration must wait for the fork; the pipes that say when. */
static int armed;
static int registering[2], forked[2];
static size_t page_size;

struct first {
	void *(*fn)(void *);
	void *arg;
};

/* @fn, then says so if it registered no handler: nothing to race with. */
static void *first_call(void *arg)
{
	struct first *f = arg;
	char c = 'n';

	f->fn(f->arg);
	if (__atomic_exchange_n(&armed, 0, __ATOMIC_ACQ_REL) && write(registering[1], &c, 1) != 1)
		abort();
	return NULL;
}

int __register_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void),
		      void *dso);

int __register_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void),
		      void *dso)
{
	static register_fn *real;
	char c = 0;

	if (!real)
		real = (register_fn *)dlsym(RTLD_NEXT, "__register_atfork");
	if (__atomic_exchange_n(&armed, 0, __ATOMIC_ACQ_REL)) {
		if (write(registering[1], &c, 1) != 1 || read(forked[0], &c, 1) != 1)
			abort();
	}
	return real(prepare, parent, child, dso);
}

static void *first_secret(void *arg)
{
	void *p;

	(void)arg;
	if (mmkit_secret_alloc(&p, 64, 0))
		T_FAIL("the parent's first secret: %s", mmkit_last_error());
	return NULL;
}

static void *first_name(void *arg)
{
	if (mmkit_name(arg, page_size, "atfork-race"))
		T_FAIL("the parent's first name: %s", mmkit_last_error());
	return NULL;
}

/*
 * @fn registers the library's handlers in a thread; the fork falls in
 * that registration.  0, or 1 if @fn registered none (with @optional).
 */
static int race(const char *what, void *(*fn)(void *), void *page, int optional)
{
	struct first f = { fn, page };
	pthread_t t;
	pid_t pid;
	char c = 0;
	int status, ret;
	void *p;

	if (pipe(registering) || pipe(forked))
		T_FAIL("pipe: %s", strerror(errno));
	armed = 1;
	if (pthread_create(&t, NULL, first_call, &f))
		T_FAIL("pthread_create");
	if (read(registering[0], &c, 1) != 1)
		T_FAIL("read: %s", strerror(errno));
	if (c == 'n') {
		pthread_join(t, NULL);
		if (!optional)
			T_FAIL("the library registered no fork handler at its first %s", what);
		return 1;
	}
	pid = fork();
	if (pid < 0)
		T_FAIL("fork: %s", strerror(errno));
	if (!pid) {
		alarm(CHILD_SECONDS);
		ret = !strcmp(what, "secret") ? mmkit_secret_alloc(&p, 64, 0) :
						mmkit_name(page, page_size, "child");
		_exit(ret ? 2 : 0);
	}
	if (write(forked[1], &c, 1) != 1)
		T_FAIL("write: %s", strerror(errno));
	pthread_join(t, NULL);
	if (waitpid(pid, &status, 0) != pid)
		T_FAIL("waitpid: %s", strerror(errno));
	if (WIFSIGNALED(status))
		T_FAIL("forked during the library's first registration: the child's first %s was killed by signal %d (%s): it waited for a lock copied held",
		       what, WTERMSIG(status), strsignal(WTERMSIG(status)));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		T_FAIL("forked during the library's first registration: the child's first %s failed (status %#x)",
		       what, status);
	close(registering[0]);
	close(registering[1]);
	close(forked[0]);
	close(forked[1]);
	return 0;
}

#endif

int main(void)
{
#if defined(__SANITIZE_THREAD__)
	T_SKIP("ThreadSanitizer's start-up calls __register_atfork(), which this test interposes, before it can run the test's code");
#elif defined(MMKIT_STATIC)
	T_SKIP("a static build links libc's __register_atfork(), which this test interposes: the dynamic builds run it");
#else
	void *page;

	page_size = (size_t)sysconf(_SC_PAGESIZE);
	page = mmap(NULL, page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (page == MAP_FAILED)
		T_FAIL("mmap: %s", strerror(errno));
	T_CASE("fork during the secret allocator's registration");
	race("secret", first_secret, NULL, 0);
	T_CASE("fork during the names registry's registration");
	if (race("name", first_name, page, 1))
		printf("  the kernel names memory itself: no registry, nothing to race with\n");
	return T_EXIT_PASS;
#endif
}
