/* kube_object: the idioms of a Kubernetes object held as JSON, written once for both
 * reconcilers, the OpenShift reconciler and the CLI.
 *
 *  - dotted paths ("status.install.bundle.name") into nested objects;
 *  - status conditions with apimachinery's meta.FindStatusCondition / SetStatusCondition
 *    semantics: one condition per type; setting one changes status, reason, message and
 *    observedGeneration, and moves lastTransitionTime only when the status flips;
 *  - finalizers: asked for, added, removed (as new arrays: a reconciler sends them in a
 *    patch or an update of its choice). */
#ifndef OLMV1_KUBE_OBJECT_H
#define OLMV1_KUBE_OBJECT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "kube_client.h"

/* The value at `dotted` ("spec.source.catalog"), or NULL when a step is missing or not an
 * object.  Borrowed. */
json_t *kube_object_path(const json_t *obj, const char *dotted);
/* The string at `dotted`, or NULL when absent or not a string. */
const char *kube_object_string(const json_t *obj, const char *dotted);

/* The condition of `type` in a conditions array, or NULL.  Borrowed. */
json_t *kube_conditions_find(const json_t *conditions, const char *type);
/* The same in obj.status.conditions. */
json_t *kube_object_condition(const json_t *obj, const char *type);
/* Whether obj has condition `type` with status `status` ("True", "False", "Unknown"). */
bool kube_object_condition_is(const json_t *obj, const char *type, const char *status);

typedef struct kube_condition {
    const char *type, *status, *reason;
    const char *message;          /* NULL: "" */
    int64_t observed_generation;
} kube_condition;

/* SetStatusCondition on `conditions` (an array, changed in place): `now` (RFC 3339) becomes
 * lastTransitionTime of a new condition, or of one whose status changed (or that had none).
 * 0, or -1 when out of memory. */
int kube_conditions_set(json_t *conditions, const kube_condition *c, const char *now);
/* The same on obj.status.conditions, creating status and the array when missing. */
int kube_object_set_condition(json_t *obj_status, const kube_condition *c, const char *now);

/* Whether metadata.finalizers holds `name`. */
bool kube_object_has_finalizer(const json_t *obj, const char *name);
/* A new array: obj's finalizers with `name` present once (where it was, else at the end) or
 * absent (every copy removed), the others in their order.  NULL when out of memory. */
json_t *kube_object_finalizers_with(const json_t *obj, const char *name, bool present);

/* Puts `name` on the finalizers of obj (of api_version and kind: listed objects lack them) or takes it off (taking off also every name of the
 * NULL-terminated `also_remove`, may be NULL), by one JSON merge PATCH of metadata.finalizers
 * that carries obj's resourceVersion: a change since obj was read answers 409 (KUBE_CONFLICT)
 * as an update would, so no other writer's finalizer is lost.  When nothing would change,
 * nothing is sent (*out NULL).  *out: the object as the server answered.  0, or the kube
 * error code with err set. */
int kube_object_set_finalizer(kube_client *c, const char *api_version, const char *kind, const json_t *obj,
                              const char *name, bool present, const char *const *also_remove, json_t **out,
                              olm_error *err);

/* Cuts `obj` down to its apiVersion and kind plus `metadata` and `spec` (new references, taken
 * over; NULL: left out): what an informer's cache keeps of an object it reads little of. */
void kube_object_reduce(json_t *obj, json_t *metadata, json_t *spec);

/* A hash of what an object's owner may have changed: the object without kind and apiVersion
 * (a LIST's items have none), status, metadata.resourceVersion, metadata.managedFields, metadata.generation and the Deployment
 * controller's deployment.kubernetes.io/revision annotation (FNV-1a of its compact JSON with
 * sorted keys: the same in every process, so it may be stored).  Two states of an object with
 * the same hash hold the same labels, annotations, spec and data. */
uint64_t kube_object_content_hash(const json_t *obj);

#endif
