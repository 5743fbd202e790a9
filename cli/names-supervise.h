/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * Between the two halves of mmkit run --names' supervisor:
 * names-supervise.c (the processes, their registries, naming calls) and
 * names-remap.c (mremap() follow-ups).
 */
#ifndef MMKIT_CLI_NAMES_SUPERVISE_H
#define MMKIT_CLI_NAMES_SUPERVISE_H

#include <sys/types.h>
#include <linux/seccomp.h>

#include "names.h"

/* One process named for: its registry and where it is installed in the process. */
struct proc {
	pid_t tgid;
	int target_fd;		/* the registry's number in the process, -1: not installed */
	dev_t dev;		/* the file installed there */
	ino_t ino;
	struct mmkit__registry reg;
};

/* The registry of the process of thread @tid if it has one (still installed), else NULL. */
struct proc *cli_names_proc_named(pid_t tid);
/* Puts @p's registry into its process (notification @id), if not there: made or moved (grown). */
void cli_names_proc_install(struct proc *p, uint64_t id);

/* Answers the mremap() @req in @resp on @listener (CONTINUE), following it if it moves names. */
void cli_names_mremap(struct seccomp_notif *req, struct seccomp_notif_resp *resp, int listener);

#endif
