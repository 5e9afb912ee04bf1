/* catalogd_http_api: what catalogd's HTTP answers carry beyond upstream's API, for our own
 * clients (operator-controller, the CLI).  Upstream's clients ignore it. */
#ifndef OLM_CATALOGD_HTTP_API_H
#define OLM_CATALOGD_HTTP_API_H

/* On /api/v1/all and /api/v1/metas answers: the digest ref of the image the served content
 * came from (status.resolvedSource.image.ref when it was pulled).  Every catalogd replica
 * serves, and a follower serves the leader's new digest only once it has pulled it too: a
 * client that read the new ref in the ClusterCatalog's status may be answered by a replica
 * still serving the old content for a moment, and must not take (or cache) that answer as the
 * new content.  Absent when the replica does not know the ref (content from before it was
 * recorded) and from upstream's catalogd: the client then takes the answer as it is. */
#define CATALOGD_RESOLVED_REF_HEADER "Catalog-Resolved-Ref"

#endif
