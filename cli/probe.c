// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit probe [--json]: per feature, whether it works here, the backend
 * and the reason.  JSON keys (stable): {"features": {"<feature>":
 * {"status": "native|fallback|unsupported|not_implemented",
 *  "backend": "...", "reason": "..."}}}.
 */
#include <string.h>

#include "mmkit.h"
#include "cli.h"

int cmd_probe(const struct cli_args *a)
{
	struct mmkit_features f;
	int i, ret;

	ret = mmkit_probe(&f);
	if (ret) {
		cli_error("probe failed: %s", strerror(-ret));
		return CLI_EXIT_FAIL;
	}
	if (a->json)
		printf("{\"features\": {");
	else
		printf("%-13s %-15s %-13s %s\n", "FEATURE", "STATUS", "BACKEND", "REASON");
	for (i = 0; i < MMKIT_FEATURE_COUNT; i++) {
		const struct mmkit_feature *ft = &f.feature[i];

		if (!a->json) {
			printf("%-13s %-15s %-13s %s\n", mmkit_feature_name(i),
			       mmkit_status_name(ft->status), ft->backend, ft->reason);
			continue;
		}
		printf("%s\n  \"%s\": {\"status\": \"%s\", \"backend\": ", i ? "," : "",
		       mmkit_feature_name(i), mmkit_status_name(ft->status));
		cli_json_string(stdout, ft->backend);
		printf(", \"reason\": ");
		cli_json_string(stdout, ft->reason);
		printf("}");
	}
	if (a->json)
		printf("\n}}\n");
	return CLI_EXIT_OK;
}
