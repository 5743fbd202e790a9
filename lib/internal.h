/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/* What every feature file of libmmkit includes; not installed. */
#ifndef MMKIT_INTERNAL_H
#define MMKIT_INTERNAL_H

#include "mmkit.h"
#include "compat.h"
#include "error.h"
#include "feature.h"
#include "sys.h"
#include "util.h"

/* Marks a definition as part of the public ABI (see libmmkit.map). */
#define MMKIT_EXPORT	__attribute__((visibility("default")))

#endif /* MMKIT_INTERNAL_H */
