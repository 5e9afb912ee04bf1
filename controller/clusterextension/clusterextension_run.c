/* clusterextension_run: the small helpers on one reconcile's state (clusterextension_run) that the
 * reconciler, its steps and the drift hand-off all use; kept apart so that calls between
 * those files run one way. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "clusterextension_internal.h"
#include "olm_log.h"
#include "olm_time.h"
#include "strbuf.h"

const char *clusterextension_str(const json_t *ce, const char *path)
{
    return bundle_json_str(ce, path);
}

void clusterextension_target_free(clusterextension_target *t)
{
    free(t->name);
    free(t->version);
    free(t->image);
    free(t->package);
    memset(t, 0, sizeof *t);
}

void clusterextension_debug_step(const clusterextension_run *run, const char *step, double t0_ms, const char *fmt, ...)
{
    if (!olm_log_enabled(OLM_LOG_DEBUG))
        return;
    char detail[1024] = "";
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof detail, fmt, ap);
        va_end(ap);
    }
    olm_log(OLM_LOG_DEBUG, "clusterExtension", run->name, "%s took %.1f ms%s%s", step, olm_time_mono_ms() - t0_ms,
            *detail ? ": " : "", detail);
}

/* ------------------------------------------------------------ failure helpers */

__attribute__((format(printf, 4, 0))) static int fail_v(clusterextension_run *run, clusterextension_progress progress,
                                                          bool bundle_prefix, const char *fmt, va_list ap)
{
    free(run->message);
    run->message = NULL;
    run->progress = progress;
    if (!fmt)
        return -1;
    strbuf sb = STRBUF_INIT;
    if (bundle_prefix && run->have_target)
        strbuf_printf(&sb, "error for resolved bundle \"%s\" with version \"%s\": ", run->target.name,
                      run->target.version);
    char *body = NULL;
    if (vasprintf(&body, fmt, ap) >= 0) {
        strbuf_puts(&sb, body);
        free(body);
    }
    run->message = strbuf_detach(&sb); /* "" when memory ran out: still a message */
    return -1;
}

int clusterextension_fail(clusterextension_run *run, clusterextension_progress progress, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_v(run, progress, false, fmt, ap);
    va_end(ap);
    return -1;
}

int clusterextension_fail_bundle(clusterextension_run *run, clusterextension_progress progress, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_v(run, progress, true, fmt, ap);
    va_end(ap);
    return -1;
}
