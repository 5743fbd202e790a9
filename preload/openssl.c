// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * libmmkit-openssl.so: OpenSSL 3's secure heap on mmkit's secret memory.
 *
 * Preloaded, it defines the CRYPTO_secure_* functions before libcrypto.so.3
 * does.  Debian's libcrypto calls them through its PLT (and hands them to
 * its providers as function pointers), so OpenSSL's own calls -- every
 * BN_secure_new(), private key, DRBG state and secure buffer -- land here
 * too, not only the program's.
 *
 * OpenSSL's heap is one fixed-size arena, made only when the program calls
 * CRYPTO_secure_malloc_init() (the openssl command and Python never do),
 * and still handed out when mlock() failed.  Here every secure allocation
 * is a secret of mmkit's, whether or not the program asked for a heap,
 * with no size limit but RLIMIT_MEMLOCK; an allocation mmkit cannot serve
 * returns NULL, as a full arena does.
 *
 * A pointer that is not a live secret (OpenSSL's own heap falls back to
 * CRYPTO_malloc() before CRYPTO_secure_malloc_init(), and callers mix the
 * two) is handed to libcrypto's CRYPTO_free() or CRYPTO_clear_free(), as
 * OpenSSL does with pointers outside its arena.
 *
 * A child made by fork() gets its parent's secrets, as it gets a copy of
 * OpenSSL's arena: see the fork section below.
 *
 * When mmkit cannot serve a secure allocation (RLIMIT_MEMLOCK, mostly),
 * the shim says so once on stderr, naming the limit to raise, and returns
 * NULL; with MMKIT_OPENSSL_FALLBACK=malloc (mmkit run
 * --secret-heap=openssl-or-malloc) it hands out libcrypto's plain heap
 * instead, as OpenSSL does without a secure heap, and counts it.
 *
 * MMKIT_STATS=1 prints one line on stderr at exit: see stats_report().
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "shim.h"

/*
 * The prototypes of OpenSSL 3's crypto.h.  With the header at hand the
 * compiler checks them against it; the shim builds without it too.
 */
#if __has_include(<openssl/crypto.h>)
#include <openssl/crypto.h>
#endif

SHIM_EXPORT int CRYPTO_secure_malloc_init(size_t size, size_t minsize);
SHIM_EXPORT int CRYPTO_secure_malloc_done(void);
SHIM_EXPORT int CRYPTO_secure_malloc_initialized(void);
SHIM_EXPORT void *CRYPTO_secure_malloc(size_t num, const char *file, int line);
SHIM_EXPORT void *CRYPTO_secure_zalloc(size_t num, const char *file, int line);
SHIM_EXPORT void CRYPTO_secure_free(void *ptr, const char *file, int line);
SHIM_EXPORT void CRYPTO_secure_clear_free(void *ptr, size_t num, const char *file, int line);
SHIM_EXPORT int CRYPTO_secure_allocated(const void *ptr);
SHIM_EXPORT size_t CRYPTO_secure_actual_size(void *ptr);
SHIM_EXPORT size_t CRYPTO_secure_used(void);

/*
 * used and live also answer CRYPTO_secure_used() and
 * CRYPTO_secure_malloc_done().
 */
static struct shim_stats stats;
static unsigned long long used;		/* bytes of the live secrets */
static unsigned long long foreign;	/* frees passed on to libcrypto */
static unsigned long long plain;	/* secure allocations served by CRYPTO_zalloc() */
static int plain_fallback;		/* MMKIT_OPENSSL_FALLBACK=malloc */
static int failure_said;		/* the secure heap's failure was reported */

__attribute__((constructor)) static void stats_setup(void)
{
	const char *v = secure_getenv("MMKIT_OPENSSL_FALLBACK");

	shim_stats_setup(&stats);
	plain_fallback = v && !strcmp(v, "malloc");
	if (v && *v && !plain_fallback)
		shim_say("mmkit-openssl: MMKIT_OPENSSL_FALLBACK=%.64s is not understood (only "
			 "\"malloc\"): ignored\n", v);
}

/*
 * Runs after the program's atexit handlers, OpenSSL's cleanup among them:
 * live_at_exit counts what OpenSSL itself did not free.
 */
__attribute__((destructor)) static void stats_report(void)
{
	char extra[160];

	snprintf(extra, sizeof(extra),
		 " live_bytes_at_exit=%llu malloc_fallbacks=%llu non_secure_frees=%llu",
		 shim_counted(&used), shim_counted(&plain), shim_counted(&foreign));
	shim_stats_report(&stats, "mmkit-openssl", extra);
}

static void __attribute__((noreturn)) die(const char *fn, const void *p, const char *what)
{
	shim_die("mmkit-openssl", fn, p, what);
}

/*
 * libcrypto's own definition of @name.  RTLD_NEXT finds it when libcrypto
 * was loaded with the program; a libcrypto that dlopen() loaded with
 * RTLD_LOCAL (Python's _ssl and _hashlib modules) is outside the scope
 * RTLD_NEXT searches, and is found by name among the loaded objects.
 */
static void *libcrypto_symbol(const char *name)
{
	void *sym = dlsym(RTLD_NEXT, name);
	void *handle;

	if (sym)
		return sym;
	handle = dlopen("libcrypto.so.3", RTLD_LAZY | RTLD_NOLOAD);
	if (!handle)
		return NULL;
	sym = dlsym(handle, name);
	/* Only drops the reference RTLD_NOLOAD took: the library stays loaded. */
	dlclose(handle);
	return sym;
}

/* libcrypto's @name, looked up once into @cache; NULL if libcrypto is not loaded. */
static void *libcrypto_function(void **cache, const char *name)
{
	void *fn = __atomic_load_n(cache, __ATOMIC_RELAXED);

	if (!fn) {
		fn = libcrypto_symbol(name);
		__atomic_store_n(cache, fn, __ATOMIC_RELAXED);
	}
	return fn;
}

typedef void *crypto_zalloc_fn(size_t num, const char *file, int line);
typedef void crypto_free_fn(void *ptr, const char *file, int line);
typedef void crypto_clear_free_fn(void *ptr, size_t num, const char *file, int line);

/* The size of @ptr if it is a live secret of this shim's, else 0. */
static size_t secret_size(const void *ptr)
{
	size_t n;

	return ptr && !mmkit_secret_size(ptr, &n) ? n : 0;
}

/*
 * Fork.  mmkit hands no secret down to a child: there the parent's are
 * PROT_NONE (memfd_secret pages cannot be copied, and mmkit will not
 * copy them).  A child of a program using OpenSSL's heap has a copy of
 * the arena, and OpenSSL relies on it: its random generators' state and
 * the keys a pre-forking server loaded are there, and a child touching
 * them would die of SIGSEGV.  So the shim keeps a table of its live
 * secrets; before fork() it copies them into a private staging mapping,
 * and in the child it maps private pages over the parent's (mmkit keeps
 * those addresses for them until they are freed) and copies them back.
 * The child then has its parent's secrets at the same addresses, in
 * ordinary memory, locked if RLIMIT_MEMLOCK allows and never dumped: what
 * OpenSSL's heap gives a child.  The parent wipes and unmaps the staging
 * copy as soon as fork() returns; so does the child once it is done.
 */
struct held {
	uintptr_t p;		/* 0: an empty slot */
	size_t size;
	int inherited;		/* a parent's, copied into ordinary pages: wiped here */
};

static struct {
	pthread_mutex_t lock;
	struct held *slots;	/* open addressing, linear probing; a power of two */
	size_t cap, count;
	unsigned char *staging;	/* the copies, from the prepare handler to the others */
	size_t staging_len;
} held = { .lock = PTHREAD_MUTEX_INITIALIZER };

static size_t held_home(uintptr_t p, size_t cap)
{
	return (size_t)(((p >> 4) * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

static struct held *held_find(uintptr_t p)
{
	size_t i;

	if (!held.cap)
		return NULL;
	for (i = held_home(p, held.cap); held.slots[i].p; i = (i + 1) & (held.cap - 1))
		if (held.slots[i].p == p)
			return &held.slots[i];
	return NULL;
}

static void held_put(struct held *slots, size_t cap, struct held h)
{
	size_t i = held_home(h.p, cap);

	while (slots[i].p)
		i = (i + 1) & (cap - 1);
	slots[i] = h;
}

/* Keeps the table at most half full; -ENOMEM if it cannot grow. */
static int held_add(uintptr_t p, size_t size)
{
	struct held *slots;
	size_t cap, i;

	pthread_mutex_lock(&held.lock);
	if (2 * (held.count + 1) > held.cap) {
		cap = held.cap ? 2 * held.cap : 64;
		slots = calloc(cap, sizeof(*slots));
		if (!slots) {
			pthread_mutex_unlock(&held.lock);
			return -ENOMEM;
		}
		for (i = 0; i < held.cap; i++)
			if (held.slots[i].p)
				held_put(slots, cap, held.slots[i]);
		free(held.slots);
		held.slots = slots;
		held.cap = cap;
	}
	held_put(held.slots, held.cap, (struct held){ .p = p, .size = size });
	held.count++;
	pthread_mutex_unlock(&held.lock);
	return 0;
}

/* Takes @p out of the table, wiping it if it is an inherited copy. */
static void held_remove(uintptr_t p)
{
	struct held *h;
	size_t i, j, home;

	pthread_mutex_lock(&held.lock);
	h = held_find(p);
	if (h) {
		if (h->inherited)
			explicit_bzero((void *)h->p, h->size);
		/* Backward-shift deletion: the probe chains stay unbroken without tombstones. */
		i = (size_t)(h - held.slots);
		for (j = (i + 1) & (held.cap - 1); held.slots[j].p; j = (j + 1) & (held.cap - 1)) {
			home = held_home(held.slots[j].p, held.cap);
			if (((j - home) & (held.cap - 1)) >= ((j - i) & (held.cap - 1))) {
				held.slots[i] = held.slots[j];
				i = j;
			}
		}
		held.slots[i].p = 0;
		held.count--;
	}
	pthread_mutex_unlock(&held.lock);
}

static void staging_drop(void)
{
	if (!held.staging)
		return;
	explicit_bzero(held.staging, held.staging_len);
	munmap(held.staging, held.staging_len);
	held.staging = NULL;
}

/* In the parent, before fork(): every live secret copied, the table locked. */
static void fork_prepare(void)
{
	size_t i, len = 0, off = 0;
	void *m;

	pthread_mutex_lock(&held.lock);
	for (i = 0; i < held.cap; i++)
		if (held.slots[i].p)
			len += held.slots[i].size;
	if (!len)
		return;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return;
	madvise(m, len, MADV_DONTDUMP);
	held.staging = m;
	held.staging_len = len;
	for (i = 0; i < held.cap; i++)
		if (held.slots[i].p) {
			memcpy(held.staging + off, (void *)held.slots[i].p, held.slots[i].size);
			off += held.slots[i].size;
		}
}

static void fork_parent(void)
{
	staging_drop();
	pthread_mutex_unlock(&held.lock);
}

/*
 * In the child, after mmkit's own handler made the parent's secrets
 * PROT_NONE: every page holding one is mapped afresh first (two secrets
 * may share a page), then every secret is copied back.
 */
static void fork_child(void)
{
	const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	size_t i, off = 0;
	uintptr_t start, end;

	if (!held.staging) {
		pthread_mutex_unlock(&held.lock);
		return;
	}
	for (i = 0; i < held.cap; i++) {
		if (!held.slots[i].p)
			continue;
		start = held.slots[i].p & ~(page - 1);
		end = (held.slots[i].p + held.slots[i].size + page - 1) & ~(page - 1);
		if (mmap((void *)start, end - start, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
			die("fork", (void *)held.slots[i].p,
			    "cannot map the parent's secret into the child");
		madvise((void *)start, end - start, MADV_DONTDUMP);
		/* Best effort, as OpenSSL's own arena: a child inherits no locks. */
		mlock((void *)start, end - start);
	}
	for (i = 0; i < held.cap; i++)
		if (held.slots[i].p) {
			memcpy((void *)held.slots[i].p, held.staging + off, held.slots[i].size);
			off += held.slots[i].size;
			held.slots[i].inherited = 1;
		}
	staging_drop();
	pthread_mutex_unlock(&held.lock);
}

/* After mmkit's: its child handler must run first (handlers run in registration order). */
static void fork_handlers_register(void)
{
	if (pthread_atfork(fork_prepare, fork_parent, fork_child))
		die("pthread_atfork", NULL, "cannot hand secrets down to fork() children");
}

/* Frees the live secret @ptr of @n bytes; mmkit wipes it (the shim, a copy inherited). */
static void secret_free(void *ptr, size_t n)
{
	held_remove((uintptr_t)ptr);
	shim_uncount(&used, n);
	shim_uncount(&stats.live, 1);
	mmkit_secret_free(ptr);
}

/*
 * mmkit's secret memory is there to be used: memfd_secret, or its mlock
 * fallback (not when the fallback is forbidden and memfd_secret is
 * missing).  The answer cannot turn back to no, so a yes is kept.
 */
int CRYPTO_secure_malloc_initialized(void)
{
	static int usable;
	struct mmkit_secret_stats st;

	if (__atomic_load_n(&usable, __ATOMIC_RELAXED))
		return 1;
	if (mmkit_secret_stats(&st) || !strcmp(st.backend, "none"))
		return 0;
	__atomic_store_n(&usable, 1, __ATOMIC_RELAXED);
	return 1;
}

/*
 * There is no arena to make: @size and @minsize are only checked as
 * OpenSSL requires them (it aborts on a @size that is not a power of two).
 * Returns 1 when secret memory can be had, like an arena that is locked.
 */
int CRYPTO_secure_malloc_init(size_t size, size_t minsize)
{
	if (!size || (size & (size - 1)) || (minsize & (minsize - 1)))
		return 0;
	return CRYPTO_secure_malloc_initialized();
}

/*
 * OpenSSL releases its arena when nothing in it is live and says so; here
 * there is nothing to release, and later allocations are secrets still.
 */
int CRYPTO_secure_malloc_done(void)
{
	return shim_counted(&stats.live) == 0;
}

/*
 * Says once why the secure heap failed (@err from mmkit) and what to do:
 * a program sees only NULL, which OpenSSL reports as a malloc failure far
 * from its cause.
 */
static void failure_say(int err)
{
	struct mmkit_secret_stats st;
	const char *raise = "";

	if (__atomic_exchange_n(&failure_said, 1, __ATOMIC_RELAXED) || mmkit_secret_stats(&st))
		return;
	if (err == -ENOMEM && !st.memlock_exempt && st.memlock_limit != MMKIT_MEMLOCK_UNLIMITED)
		raise = plain_fallback ? "; raise RLIMIT_MEMLOCK (ulimit -l) to keep them secret" :
			"raise RLIMIT_MEMLOCK (ulimit -l), or ";
	if (plain_fallback)
		shim_say("mmkit-openssl: the secure heap could not get memory: %s. Secure allocations "
			 "it cannot serve come from OpenSSL's plain heap (MMKIT_OPENSSL_FALLBACK=malloc), "
			 "counted as malloc_fallbacks%s\n",
			 st.last_error[0] ? st.last_error : strerror(-err), raise);
	else
		shim_say("mmkit-openssl: the secure heap could not get memory: %s. To go on, %slet "
			 "OpenSSL's plain heap serve what it cannot: mmkit run "
			 "--secret-heap=openssl-or-malloc (MMKIT_OPENSSL_FALLBACK=malloc)\n",
			 st.last_error[0] ? st.last_error : strerror(-err), raise);
}

/* A secure allocation mmkit could not serve (@err): NULL, or libcrypto's plain heap. */
static void *secret_failed(int err, size_t num, const char *file, int line)
{
	static void *cache;
	crypto_zalloc_fn *crypto_zalloc;
	void *p;

	failure_say(err);
	if (!plain_fallback)
		return NULL;
	crypto_zalloc = (crypto_zalloc_fn *)libcrypto_function(&cache, "CRYPTO_zalloc");
	p = crypto_zalloc ? crypto_zalloc(num, file, line) : NULL;
	if (p) {
		/* shim_secret_alloc() counted it failed: it was served after all. */
		shim_uncount(&stats.failed, 1);
		shim_count(&plain, 1);
	}
	return p;
}

void *CRYPTO_secure_malloc(size_t num, const char *file, int line)
{
	static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
	/* OpenSSL's arena hands out its smallest block for 0 bytes; mmkit has no empty secrets. */
	size_t size = num ? num : 1;
	void *p;
	int ret;

	ret = shim_secret_alloc(&stats, &p, size, 0);
	if (ret)
		return secret_failed(ret, size, file, line);
	shim_count(&used, size);
	pthread_once(&fork_once, fork_handlers_register);
	if (held_add((uintptr_t)p, size)) {
		/* Counted as allocated by shim_secret_alloc(): counted as failed, too. */
		secret_free(p, size);
		shim_count(&stats.failed, 1);
		return NULL;
	}
	return p;
}

/* mmkit's secrets come zeroed, and so does the plain heap's fallback. */
void *CRYPTO_secure_zalloc(size_t num, const char *file, int line)
{
	return CRYPTO_secure_malloc(num, file, line);
}

/*
 * Frees @ptr if it is a secret (NULL: nothing) and says so; 0 leaves a
 * foreign pointer to libcrypto.  A pointer into mmkit's secret memory that
 * is not a live secret (freed already, or inside one) is a mistake of the
 * program's: mmkit_secret_free() names it and aborts, as OpenSSL's heap
 * asserts; handed to CRYPTO_free() it would crash in free() without a word.
 */
static int secret_freed(void *ptr)
{
	size_t n;
	int ret;

	if (!ptr)
		return 1;
	ret = mmkit_secret_size(ptr, &n);
	if (ret == -EINVAL)
		mmkit_secret_free(ptr);
	else if (ret)
		return 0;
	else
		secret_free(ptr, n);
	return 1;
}

void CRYPTO_secure_free(void *ptr, const char *file, int line)
{
	static void *cache;
	crypto_free_fn *crypto_free;

	if (secret_freed(ptr))
		return;
	crypto_free = (crypto_free_fn *)libcrypto_function(&cache, "CRYPTO_free");
	if (!crypto_free)
		die("CRYPTO_secure_free", ptr, "not a secure allocation, and no libcrypto.so.3 "
		    "is loaded to free it");
	shim_count(&foreign, 1);
	crypto_free(ptr, file, line);
}

/* A secret is wiped whole by mmkit; another pointer's @num bytes by libcrypto. */
void CRYPTO_secure_clear_free(void *ptr, size_t num, const char *file, int line)
{
	static void *cache;
	crypto_clear_free_fn *crypto_clear_free;

	if (secret_freed(ptr))
		return;
	crypto_clear_free = (crypto_clear_free_fn *)libcrypto_function(&cache,
									 "CRYPTO_clear_free");
	if (!crypto_clear_free)
		die("CRYPTO_secure_clear_free", ptr, "not a secure allocation, and no "
		    "libcrypto.so.3 is loaded to free it");
	shim_count(&foreign, 1);
	crypto_clear_free(ptr, num, file, line);
}

int CRYPTO_secure_allocated(const void *ptr)
{
	return secret_size(ptr) != 0;
}

/* The bytes usable at @ptr; 0 for a pointer that is not a secret (OpenSSL aborts). */
size_t CRYPTO_secure_actual_size(void *ptr)
{
	return secret_size(ptr);
}

size_t CRYPTO_secure_used(void)
{
	return shim_counted(&used);
}
