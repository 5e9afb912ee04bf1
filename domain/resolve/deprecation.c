#include "resolve.h"

#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

static const char *const condition_types[DEPRECATION_NCONDITIONS] = {
    "Deprecated", "PackageDeprecated", "ChannelDeprecated", "BundleDeprecated"};
static const char *const not_deprecated_messages[DEPRECATION_NCONDITIONS] = {
    "not deprecated", "package not deprecated", "channel not deprecated", "bundle not deprecated"};

static int channel_listed(const deprecation_input *in, const char *name)
{
    if (in->nchannels == 0)
        return 1; /* no channels requested: every channel entry counts */
    for (size_t i = 0; i < in->nchannels; i++)
        if (strcmp(in->channels[i], name) == 0)
            return 1;
    return 0;
}

/* Which condition (if any) a deprecation entry feeds. */
static int entry_condition(const deprecation_input *in, const fbc_deprecation_entry *e)
{
    if (strcmp(e->schema, "olm.package") == 0)
        return DEPRECATION_PACKAGE;
    if (strcmp(e->schema, "olm.channel") == 0)
        return channel_listed(in, e->name) ? DEPRECATION_CHANNEL : -1;
    if (strcmp(e->schema, "olm.bundle") == 0 && in->installed_bundle && in->installed_bundle[0] &&
        strcmp(e->name, in->installed_bundle) == 0)
        return DEPRECATION_BUNDLE;
    return -1;
}

static int set(deprecation_condition *c, int which, const char *status, const char *reason, const char *message)
{
    c->type = condition_types[which];
    c->status = status;
    c->reason = reason;
    c->message = strdup(message);
    return c->message ? 0 : -1;
}

int deprecation_conditions(const deprecation_input *in, deprecation_condition out[DEPRECATION_NCONDITIONS],
                           olm_error *err)
{
    memset(out, 0, sizeof(deprecation_condition) * DEPRECATION_NCONDITIONS);
    int installed = in->installed_bundle && in->installed_bundle[0];
    int rc = 0;

    if (!in->has_catalog_data) {
        for (int i = 0; i < DEPRECATION_NCONDITIONS; i++)
            rc |= set(&out[i], i, "Unknown", "DeprecationStatusUnknown",
                      "deprecation status unknown: catalog data unavailable");
    } else {
        strbuf msgs[DEPRECATION_NCONDITIONS] = {STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT};
        const fbc_deprecation *dep = in->deprecation;
        for (size_t i = 0; dep && i < dep->nentries; i++) {
            const fbc_deprecation_entry *e = &dep->entries[i];
            int which = entry_condition(in, e);
            /* Entries with empty messages do not count (upstream). */
            if (which < 0 || !e->message || !e->message[0])
                continue;
            strbuf *sb = &msgs[which];
            rc |= (sb->len ? strbuf_putc(sb, '\n') : 0) | strbuf_puts(sb, e->message);
        }
        for (int i = DEPRECATION_PACKAGE; i < DEPRECATION_NCONDITIONS; i++) {
            if (msgs[i].len == 0)
                continue;
            strbuf *all = &msgs[DEPRECATION_ROLLUP];
            rc |= (all->len ? strbuf_putc(all, '\n') : 0) | strbuf_puts(all, strbuf_str(&msgs[i]));
        }
        for (int i = 0; i < DEPRECATION_NCONDITIONS; i++) {
            if (msgs[i].len)
                rc |= set(&out[i], i, "True", "Deprecated", strbuf_str(&msgs[i]));
            else
                rc |= set(&out[i], i, "False", "NotDeprecated", not_deprecated_messages[i]);
            strbuf_free(&msgs[i]);
        }
    }
    if (!installed) {
        free(out[DEPRECATION_BUNDLE].message);
        rc |= set(&out[DEPRECATION_BUNDLE], DEPRECATION_BUNDLE, "Unknown", "Absent", "no bundle installed yet");
    }
    if (rc) {
        deprecation_conditions_free(out);
        return olm_error_set(err, "out of memory");
    }
    return 0;
}

void deprecation_conditions_free(deprecation_condition out[DEPRECATION_NCONDITIONS])
{
    for (int i = 0; i < DEPRECATION_NCONDITIONS; i++) {
        free(out[i].message);
        out[i].message = NULL;
    }
}
