// The closed words of an experiment record (experiment-v1's enums): what a win may claim, what the
// candidate is compared against, what a failure closes, how a screen reads and how subjects pair.
// The enumerator name is the JSON word.
#pragma once

#include "cko/util/closed_enum.hpp"

namespace cko::store {

// Ordered from the narrowest claim to the widest: an experiment claims at most its Target's layer.
#define CKO_CLAIM_LAYERS(X) X(kernel) X(workload) X(serving)
CKO_CLOSED_ENUM(ClaimLayer, CKO_CLAIM_LAYERS, claim_layer_name, claim_layer_from_name)

#define CKO_BASE_KINDS(X) X(original) X(champion)
CKO_CLOSED_ENUM(BaseKind, CKO_BASE_KINDS, base_kind_name, base_kind_from_name)

#define CKO_FAILURE_CLOSES(X) X(implementation) X(integration) X(mechanism)
CKO_CLOSED_ENUM(FailureCloses, CKO_FAILURE_CLOSES, failure_closes_name, failure_closes_from_name)

#define CKO_SCREEN_DESIGNS(X) X(conservative_bound) X(diagnostic_proxy)
CKO_CLOSED_ENUM(ScreenDesign, CKO_SCREEN_DESIGNS, screen_design_name, screen_design_from_name)

#define CKO_RELATIONSHIPS(X) X(implementation_equivalence) X(artifact_fidelity) X(deployment_effect)
CKO_CLOSED_ENUM(Relationship, CKO_RELATIONSHIPS, relationship_name, relationship_from_name)

#define CKO_LIFECYCLES(X) X(isolated_process) X(same_process)
CKO_CLOSED_ENUM(Lifecycle, CKO_LIFECYCLES, lifecycle_name, lifecycle_from_name)

}  // namespace cko::store
