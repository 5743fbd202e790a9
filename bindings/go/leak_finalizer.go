// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

//go:build !go1.24

package mmkit

import "runtime"

// watch runs reportLeaks(b) once none of the Secrets of sl is reachable
// (runtime.AddCleanup, which costs less, came with Go 1.24).
func watch(sl *slab, b *batch) { runtime.SetFinalizer(sl, func(*slab) { reportLeaks(b) }) }
