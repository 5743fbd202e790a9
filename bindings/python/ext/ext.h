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

/* A map of RefPage.map() (refpage.c); its file position is refmap-io.c's. */
typedef struct {
	PyObject_HEAD
	struct RefPageObject *owner;	/* NULL once closed */
	void *addr;
	Py_ssize_t size;
	Py_ssize_t exports;		/* views alive */
	Py_ssize_t pos;			/* read(), write(), seek(): 0 to size */
} RefMapObject;

/* 0 if @self is open, else -1 with ValueError set. */
int mmkit_py_map_check_open(RefMapObject *self);

/* mmap.mmap's file-like methods of a RefMap (refmap-io.c), for its method table. */
PyObject *mmkit_py_map_find(RefMapObject *self, PyObject *args);
PyObject *mmkit_py_map_rfind(RefMapObject *self, PyObject *args);
PyObject *mmkit_py_map_read(RefMapObject *self, PyObject *args);
PyObject *mmkit_py_map_read_byte(RefMapObject *self, PyObject *unused);
PyObject *mmkit_py_map_readline(RefMapObject *self, PyObject *unused);
PyObject *mmkit_py_map_write(RefMapObject *self, PyObject *args);
PyObject *mmkit_py_map_write_byte(RefMapObject *self, PyObject *args);
PyObject *mmkit_py_map_seek(RefMapObject *self, PyObject *args);
PyObject *mmkit_py_map_tell(RefMapObject *self, PyObject *unused);
PyObject *mmkit_py_map_flush(RefMapObject *self, PyObject *args);
PyObject *mmkit_py_map_move(RefMapObject *self, PyObject *args);

#define MMKIT_PY_MAP_IO_METHODS \
	{ "find", (PyCFunction)mmkit_py_map_find, METH_VARARGS, \
	  "find(sub[, start[, end]])\n--\n\nLowest index of sub in [start, end) (start: the " \
	  "position), or -1, as mmap.find." }, \
	{ "rfind", (PyCFunction)mmkit_py_map_rfind, METH_VARARGS, \
	  "rfind(sub[, start[, end]])\n--\n\nHighest index of sub, or -1, as mmap.rfind." }, \
	{ "read", (PyCFunction)mmkit_py_map_read, METH_VARARGS, \
	  "read([n])\n--\n\nUp to n bytes from the position (all the rest for None or " \
	  "a negative n), as mmap.read." }, \
	{ "read_byte", (PyCFunction)mmkit_py_map_read_byte, METH_NOARGS, \
	  "read_byte()\n--\n\nThe byte at the position, as an int; ValueError at the end." }, \
	{ "readline", (PyCFunction)mmkit_py_map_readline, METH_NOARGS, \
	  "readline()\n--\n\nBytes from the position up to and with the next newline." }, \
	{ "write", (PyCFunction)mmkit_py_map_write, METH_VARARGS, \
	  "write(bytes)\n--\n\nWrite at the position and return the count; ValueError if " \
	  "it does not fit, as mmap.write." }, \
	{ "write_byte", (PyCFunction)mmkit_py_map_write_byte, METH_VARARGS, \
	  "write_byte(byte)\n--\n\nWrite one byte (an int) at the position." }, \
	{ "seek", (PyCFunction)mmkit_py_map_seek, METH_VARARGS, \
	  "seek(pos[, whence])\n--\n\nMove the position (whence: os.SEEK_SET, _CUR, _END); " \
	  "ValueError outside [0, len]." }, \
	{ "tell", (PyCFunction)mmkit_py_map_tell, METH_NOARGS, \
	  "tell()\n--\n\nThe position." }, \
	{ "flush", (PyCFunction)mmkit_py_map_flush, METH_VARARGS, \
	  "flush([offset[, size]])\n--\n\nNothing to write back (the memory is private and " \
	  "anonymous); checks its range as mmap.flush does." }, \
	{ "move", (PyCFunction)mmkit_py_map_move, METH_VARARGS, \
	  "move(dest, src, count)\n--\n\nCopy count bytes from src to dest (they may " \
	  "overlap), as mmap.move." }

/* Adds Secret and its constants to @module; -1 with an exception set on failure. */
int mmkit_py_secret_init(PyObject *module);
/* Adds RefPage and the type of its maps to @module. */
int mmkit_py_refpage_init(PyObject *module);

#endif
