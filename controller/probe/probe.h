/* probe: the built-in availability probes over installed objects, so that a ClusterExtension
 * reports Available in the default (Helm-record) mode too, where upstream reports nothing
 * without its BoxcutterRuntime gate.
 *
 * The set and the messages are upstream's: operator-controller df2c201 gives every
 * ClusterObjectSet the progression probes of applier/boxcutter.go (defaultProgressionProbes),
 * run by boxcutter v0.14.0's probing package (ConditionProbe, FieldsEqualProbe,
 * FieldValueProbe, each wrapped in an ObservedGenerationProbe, joined by And).  For each object:
 *
 *   every kind      status.observedGeneration, when it is there, equals metadata.generation
 *                   (else Unknown ".status outdated"; nothing else is looked at then)
 *   apiextensions.k8s.io CustomResourceDefinition   condition Established True
 *   cert-manager.io Certificate, Issuer             condition Ready True
 *   Namespace                                       status.phase "Active"
 *   PersistentVolumeClaim                           status.phase "Bound"
 *   apps Deployment    status.updatedReplicas == status.replicas, condition Available True
 *   apps StatefulSet   status.updatedReplicas == status.replicas,
 *                      status.readyReplicas == spec.replicas
 *   anything else      passes
 *
 * A condition that carries an observedGeneration other than metadata.generation is Unknown
 * (".status.condition[\"T\"] outdated"), as boxcutter's ConditionProbe says.
 *
 * Where we differ from upstream, and why:
 *  - StatefulSets: upstream asks them for an Available condition, which the StatefulSet
 *    controller never writes (kubernetes v1.36 pkg/controller/statefulset sets none), so no
 *    StatefulSet ever passes there; here all its replicas must be ready (readyReplicas ==
 *    spec.replicas, 1 when unset, as the apiserver defaults it) besides updated.
 *  - Replica counts the apiserver leaves out are 0 (they are omitempty): upstream reads a
 *    missing status.updatedReplicas as a failure ("... missing"), so a Deployment scaled to
 *    zero never passes there.
 *  - Upstream runs the generation check once per probe of its list (seven), so an outdated
 *    status reads ".status outdated and .status outdated and ..." there; here once.
 *
 * Messages: a failing probe's messages are those of its deciding status (Unknown before
 * False, as boxcutter's And), joined by " and "; the line of a failing object is upstream's
 * "Object <Kind>.<apiVersion> <namespace>/<name>: <messages>".
 *
 * Pure functions over a JSON object: no I/O, any thread. */
#ifndef OLM_PROBE_H
#define OLM_PROBE_H

#include <jansson.h>
#include <stdint.h>

#include "strbuf.h"

typedef enum probe_status {
    PROBE_TRUE = 0, /* available */
    PROBE_FALSE,    /* not available */
    PROBE_UNKNOWN,  /* cannot tell yet (status missing or outdated) */
} probe_status;

typedef struct probe_result {
    probe_status status;
    char *messages; /* owned; the failure messages joined by " and "; NULL when status is PROBE_TRUE */
} probe_result;

/* Runs the built-in probes on `obj` (a live object, borrowed).  0, or -1 when memory ran out
 * (*out zeroed then). */
int probe_object(const json_t *obj, probe_result *out);
void probe_result_free(probe_result *r);

/* Appends upstream's line for a failing object: "Object <Kind>.<apiVersion> <ns>/<name>: <messages>"
 * (<ns> empty for a cluster-scoped object).  -1 on out of memory. */
int probe_describe(strbuf *out, const json_t *obj, const char *messages);

/* What the probes say of `obj`, as a number: PROBE_DIGEST_PASS when it passes, else a hash of
 * the status and the messages (never PROBE_DIGEST_PASS; 0 only when memory ran out, which
 * callers read as "unknown").  Two states of an object
 * have the same digest exactly when its line in the Available condition is the same, which is
 * what the drift watcher compares to know whether a status write of an object can change the
 * condition (drift.h). */
#define PROBE_DIGEST_PASS 1u
uint64_t probe_digest(const json_t *obj);
/* The same of a result already in hand. */
uint64_t probe_result_digest(const probe_result *r);

/* Both of the above at once, as the Available condition and the drift watches keep them: the
 * digest, and the line when `obj` fails (*line, caller frees; NULL when it passes).  0, or -1
 * when memory ran out (*digest 0 and *line NULL then). */
int probe_verdict(const json_t *obj, uint64_t *digest, char **line);

/* A ClusterObjectSet's spec.progressionProbes (`probes`, an array, borrowed; NULL: none) on
 * `obj` (probe_user.c says how they combine).  0, or -1 with err on an unknown assertion or
 * selector type or a bad label selector (in upstream's words), or out of memory. */
#include "olm_error.h"
int probe_user(const json_t *probes, const json_t *obj, probe_result *out, olm_error *err);
/* The same checks of `probes` alone, before any object is probed.  0, or -1 with err. */
int probe_user_check(const json_t *probes, olm_error *err);

#endif
