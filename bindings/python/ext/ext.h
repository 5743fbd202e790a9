/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * The _mmkit extension: what its three files share.  Built against the
 * limited API of Python 3.11 (one abi3 wheel for 3.11 and later), the first
 * in which a C type may export a buffer.
 *
 * Every function here runs with the GIL held unless it says otherwise: the
 * GIL is what makes a Secret's pointer and its count of views agree between
 * threads, so the calls that change them never release it.
 */
#ifndef MMKIT_PY_EXT_H
#define MMKIT_PY_EXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "mmkit.h"

/*
 * Raises OSError(-ret, the library's text) for a call that returned @ret
 * < 0 in this thread just now (the text is the thread's, so read it before
 * any other mmkit call); OSError picks PermissionError and the like from
 * the errno.  Returns NULL.
 */
PyObject *mmkit_py_error(int ret);
/* Raises OSError(EINVAL, text) for a bad argument the binding itself checks. */
PyObject *mmkit_py_einval(const char *fmt, ...);

/* Adds Secret and its constants to @module; -1 with an exception set on failure. */
int mmkit_py_secret_init(PyObject *module);
/* Adds RefPage and the type of its maps to @module. */
int mmkit_py_refpage_init(PyObject *module);

#endif
