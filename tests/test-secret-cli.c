// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * `mmkit secrets`: finds a child holding secret memory both as a mapping
 * (the allocator's pool) and as an open memfd_secret descriptor, in the
 * table and in --json; run as nobody, it counts the processes it cannot
 * read instead of skipping them.
 */
#include <limits.h>
#include <stdint.h>
#include <sys/syscall.h>

#include "harness.h"
#include "mmkit.h"

static char mmkit_path[PATH_MAX];
static char output[1 << 20];

/* Runs `mmkit secrets ARGS` and keeps its standard output. */
static void run_secrets(const char *args)
{
	char cmd[PATH_MAX + 64];
	size_t n;
	FILE *f;
	int status;

	snprintf(cmd, sizeof(cmd), "%s secrets %s", mmkit_path, args);
	f = popen(cmd, "r");
	T_ASSERT(f);
	n = fread(output, 1, sizeof(output) - 1, f);
	output[n] = '\0';
	status = pclose(f);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		T_FAIL("%s: status %d: %s", cmd, status, output);
}

static void as_nobody(void *arg)
{
	char *u;

	(void)arg;
	t_become_nobody();
	run_secrets("--json");
	u = strstr(output, "\"unreadable\": ");
	T_ASSERT(u);
	printf("    as nobody: %.40s...\n", u);
	T_ASSERT(atoi(u + strlen("\"unreadable\": ")) > 0);
	run_secrets("");
	T_ASSERT(strstr(output, "could not be read"));
	fflush(NULL);
}

int main(int argc, char **argv)
{
	int to_parent[2], to_child[2], fd;
	char want[128];
	pid_t pid;
	char c;

	(void)argc;
	fd = (int)syscall(SYS_memfd_secret, 0);
	if (fd < 0)
		T_SKIP("memfd_secret: %s (boot with secretmem.enable=1)", strerror(errno));
	close(fd);
	t_mmkit_path(mmkit_path, sizeof(mmkit_path), argv[0]);

	T_ASSERT(!pipe(to_parent) && !pipe(to_child));
	fflush(NULL);
	pid = fork();
	T_ASSERT(pid >= 0);
	if (pid == 0) {
		void *p;
		int sfd = (int)syscall(SYS_memfd_secret, 0);

		/* Read sees end-of-file if the parent dies: no child left behind. */
		close(to_child[1]);
		if (sfd < 0 || ftruncate(sfd, 3 * 4096) ||
		    mmkit_secret_alloc(&p, 32, MMKIT_SECRET_QUIET))
			_exit(3);
		if (write(to_parent[1], "r", 1) != 1 || read(to_child[0], &c, 1) != 1)
			_exit(4);
		_exit(0);
	}
	close(to_child[0]);
	T_EQ(read(to_parent[0], &c, 1), 1);

	T_CASE("the table lists the child with its descriptor and its mapping");
	run_secrets("");
	snprintf(want, sizeof(want), "\n%7d ", (int)pid);
	T_ASSERT(strstr(output, want));
	printf("%s", output);

	T_CASE("--json: the child with fds 1, fd_bytes 12288 and its mapped bytes");
	run_secrets("--json");
	snprintf(want, sizeof(want), "{\"pid\": %d, \"command\": \"test-secret-cli\", \"fds\": 1, "
		 "\"fd_bytes\": 12288, \"mappings\": 1, \"mapped_bytes\": ", (int)pid);
	if (!strstr(output, want))
		T_FAIL("no \"%s\" in %s", want, output);
	/* Even root may be refused some (a more privileged init): they are listed, never hidden. */
	T_ASSERT(strstr(output, "\"unreadable\": ") && strstr(output, "\"unreadable_pids\": ["));

	T_CASE("as nobody: unreadable processes are counted, not skipped");
	T_CHILD_OK(t_in_child(as_nobody, NULL));

	T_EQ(write(to_child[1], "x", 1), 1);
	T_CHILD_OK(({ int st; T_EQ(waitpid(pid, &st, 0), pid); st; }));
	return T_EXIT_PASS;
}
