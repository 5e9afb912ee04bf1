/* upgradeable_internal: what the upgradeable library's files share, and its unit tests. */
#ifndef OLM_UPGRADEABLE_INTERNAL_H
#define OLM_UPGRADEABLE_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "upgradeable_reconciler.h"

/* A pass lists every ClusterExtension and install record, so during a burst of events
 * (a thousand extensions applied at once) back-to-back passes would spend more CPU in
 * operator-controller and the apiserver than the installs themselves.  The next pass
 * starts no sooner than this long after the last one ended: at least
 * UPGRADEABLE_PASS_GAP_MIN_MS, and UPGRADEABLE_PASS_GAP_FACTOR times as long as the
 * last pass took, which keeps the check's share of the time to a few per cent. */
#define UPGRADEABLE_PASS_GAP_MIN_MS 1000u
#define UPGRADEABLE_PASS_GAP_FACTOR 10u

/* Pure: how long a pass asked for at `now_ms` waits, given when the last one started
 * and ended (monotonic ms; both 0 before the first) and whether one is running (then
 * the next one follows it by the gap, counted from now).  0: start it now. */
uint64_t upgradeable_pass_delay_ms(uint64_t now_ms, uint64_t last_start_ms, uint64_t last_end_ms, bool running);

/* What the check keeps of a ClusterExtension (metadata.name) and of an install record
 * Secret (metadata.labels, data["record.json"]): all upgradeable_inputs_match reads.  A
 * new object, NULL when out of memory. */
json_t *upgradeable_slim_extension(const json_t *ce);
json_t *upgradeable_slim_record(const json_t *secret);

/* Pure: whether an object's new slim copy `kept` changes nothing a pass reads, given the
 * copy held before (`held`, NULL for none) and whether passes read the copies at all
 * (`listed`: its informer has listed and lost no event; else they list through REST, and
 * every event may matter).  During a burst of installs most events are ClusterExtension
 * status writes, which change no slim copy. */
bool upgradeable_copy_unchanged(bool listed, const json_t *held, const json_t *kept);

/* upgradeable_revisions.c: extension name -> its installed revision's slim copy (the newest
 * with "i" true), from the slim copies in `revisions`.  A new object, NULL when out of memory. */
json_t *upgradeable_installed_revisions(const json_t *revisions);

/* upgradeable_inputs_read, with the ClusterExtensions and record Secrets given (the
 * informers' slim copies, in list order) instead of listed; the cluster version is still read. */
int upgradeable_inputs_from_lists(kube_client *c, const upgradeable_reconcile_opts *o, const json_t *ces,
                                  const json_t *secrets, const json_t *revisions, upgradeable_inputs *out,
                                  olm_error *err);

/* upgradeable_reconcile_once over upgradeable_inputs_from_lists. */
int upgradeable_reconcile_lists(kube_client *admin, const upgradeable_reconcile_opts *opts, const json_t *ces,
                                const json_t *secrets, const json_t *revisions, olm_error *err);

#endif
