// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The reference-page contract on the kmod backend (refpage.ko): the suite
 * of test-refpage.c, skipped with the reason where /dev/refpage is absent
 * (the kernel tier loads the module and runs it).
 */
#define REFPAGE_TEST_KMOD
#include "test-refpage.c"
