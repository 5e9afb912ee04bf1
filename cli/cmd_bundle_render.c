/* olmv1 bundle render: a registry+v1 bundle directory to the Kubernetes objects
 * operator-controller would apply, offline (controller/render/render.h).
 *
 * Objects come out sorted by (kind, namespace, name), the order of upstream's
 * regression corpus.  YAML output sorts mapping keys (as sigs.k8s.io/yaml does),
 * quotes strings that YAML would read as another type, and writes multi-line
 * strings as literal blocks. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "bundle.h"
#include "commands.h"
#include "fbc_stream.h"
#include "gocompat.h"
#include "render.h"

static void bundle_render_usage(FILE *out)
{
    fprintf(out,
            "Usage: olmv1 bundle render DIR --install-namespace NS [--watch-namespace NS]\n"
            "                           [--config FILE] [--cert-provider PROVIDER] [-o yaml|json]\n"
            "\n"
            "Renders the registry+v1 bundle in DIR (metadata/annotations.yaml, manifests/)\n"
            "into the objects operator-controller applies: ServiceAccounts, hashed Roles and\n"
            "ClusterRoles with their bindings, CRDs, the bundle's other manifests, Deployments,\n"
            "webhook configurations and Services.\n"
            "\n"
            "  --install-namespace NS  spec.namespace of the ClusterExtension (required)\n"
            "  --watch-namespace NS    spec.config.inline.watchNamespace (overrides --config)\n"
            "  --config FILE           spec.config.inline as a JSON or YAML file:\n"
            "                          {watchNamespace: ..., deploymentConfig: {...}}\n"
            "  --cert-provider P       openshift-service-ca (default), cert-manager or none\n"
            "  -o yaml|json            YAML documents (default) or one JSON v1 List\n"
            "\n"
            "Objects are sorted by kind, namespace and name.  Exit status: 0 rendered; 1 the\n"
            "bundle or config is rejected (the controller's message on stderr; a config error\n"
            "starts with \"invalid ClusterExtension configuration\"); 2 usage error.\n");
}

/* ---- YAML output ---- */

static int emit(yaml_emitter_t *em, yaml_event_t *ev)
{
    return yaml_emitter_emit(em, ev) ? 0 : -1;
}

static int emit_scalar(yaml_emitter_t *em, const char *s, size_t n, yaml_scalar_style_t style, int is_string)
{
    yaml_event_t ev;
    /* plain_implicit 0 for strings that would resolve as something else keeps
     * libyaml from emitting them plain. */
    if (!yaml_scalar_event_initialize(&ev, NULL, (yaml_char_t *)"tag:yaml.org,2002:str", (yaml_char_t *)s, (int)n,
                                      style == YAML_PLAIN_SCALAR_STYLE || !is_string, 1, style))
        return -1;
    return emit(em, &ev);
}

static int emit_string(yaml_emitter_t *em, const char *s, size_t n)
{
    gocompat_yaml_scalar sc;
    if (memchr(s, '\n', n))
        return emit_scalar(em, s, n, YAML_LITERAL_SCALAR_STYLE, 1);
    if (n == 0 || gocompat_yaml_resolve_plain(s, n, &sc) < 0 || sc.kind != GOCOMPAT_YAML_STRING)
        return emit_scalar(em, s, n, YAML_DOUBLE_QUOTED_SCALAR_STYLE, 1);
    return emit_scalar(em, s, n, YAML_PLAIN_SCALAR_STYLE, 1);
}

static int cmp_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int emit_value(yaml_emitter_t *em, const json_t *v)
{
    yaml_event_t ev;
    char num[GOCOMPAT_FLOAT_BUF];
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        size_t n = json_object_size(v), k = 0;
        const char **keys = calloc(n ? n : 1, sizeof *keys);
        const char *key;
        json_t *val;
        if (!keys)
            return -1;
        json_object_foreach((json_t *)v, key, val) keys[k++] = key;
        qsort(keys, n, sizeof *keys, cmp_keys);
        int rc = yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, n ? YAML_BLOCK_MAPPING_STYLE : YAML_FLOW_MAPPING_STYLE)
                     ? emit(em, &ev)
                     : -1;
        for (size_t i = 0; rc == 0 && i < n; i++)
            rc = emit_string(em, keys[i], strlen(keys[i])) < 0 || emit_value(em, json_object_get(v, keys[i])) < 0 ? -1 : 0;
        free(keys);
        if (rc < 0 || !yaml_mapping_end_event_initialize(&ev))
            return -1;
        return emit(em, &ev);
    }
    case JSON_ARRAY: {
        size_t n = json_array_size(v);
        if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, n ? YAML_BLOCK_SEQUENCE_STYLE : YAML_FLOW_SEQUENCE_STYLE) ||
            emit(em, &ev) < 0)
            return -1;
        for (size_t i = 0; i < n; i++)
            if (emit_value(em, json_array_get(v, i)) < 0)
                return -1;
        if (!yaml_sequence_end_event_initialize(&ev))
            return -1;
        return emit(em, &ev);
    }
    case JSON_STRING: return emit_string(em, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return emit_scalar(em, num, strlen(num), YAML_PLAIN_SCALAR_STYLE, 0);
    case JSON_REAL:
        gocompat_json_float(json_real_value(v), num);
        return emit_scalar(em, num, strlen(num), YAML_PLAIN_SCALAR_STYLE, 0);
    case JSON_TRUE: return emit_scalar(em, "true", 4, YAML_PLAIN_SCALAR_STYLE, 0);
    case JSON_FALSE: return emit_scalar(em, "false", 5, YAML_PLAIN_SCALAR_STYLE, 0);
    default: return emit_scalar(em, "null", 4, YAML_PLAIN_SCALAR_STYLE, 0);
    }
}

static int write_yaml(const json_t *objects, FILE *out)
{
    yaml_emitter_t em;
    yaml_event_t ev;
    if (!yaml_emitter_initialize(&em))
        return -1;
    yaml_emitter_set_output_file(&em, out);
    yaml_emitter_set_unicode(&em, 1);
    yaml_emitter_set_width(&em, -1);
    int rc = yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) ? emit(&em, &ev) : -1;
    for (size_t i = 0; rc == 0 && i < json_array_size(objects); i++) {
        /* "---" before every document after the first. */
        rc = yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, i == 0) && emit(&em, &ev) == 0 &&
                     emit_value(&em, json_array_get(objects, i)) == 0 && yaml_document_end_event_initialize(&ev, 1) &&
                     emit(&em, &ev) == 0
                 ? 0
                 : -1;
    }
    if (rc == 0)
        rc = yaml_stream_end_event_initialize(&ev) ? emit(&em, &ev) : -1;
    yaml_emitter_delete(&em);
    return rc;
}

static int write_json(json_t *objects, FILE *out)
{
    json_t *list = json_pack("{s:s,s:s,s:O}", "apiVersion", "v1", "kind", "List", "items", objects);
    strbuf sb = STRBUF_INIT;
    int rc = list && gocompat_json_encode(&sb, list, GOCOMPAT_JSON_SORT_KEYS) == 0 ? 0 : -1;
    if (rc == 0)
        fprintf(out, "%s\n", strbuf_str(&sb));
    strbuf_free(&sb);
    json_decref(list);
    return rc;
}

/* ---- command ---- */

static int take_first(void *ud, json_t *obj, int lineno, olm_error *err)
{
    (void)lineno, (void)err;
    json_t **slot = ud;
    if (!*slot)
        *slot = obj;
    else
        json_decref(obj);
    return 0;
}

static json_t *read_config(const char *path, olm_error *err)
{
    char *data = NULL;
    size_t len = 0;
    json_t *cfg = NULL;
    if (fbc_read_file(path, &data, &len, err) < 0)
        return NULL;
    if (fbc_decode_stream(data, len, path, take_first, &cfg, err) < 0) {
        json_decref(cfg);
        cfg = NULL;
    } else if (!cfg && !(cfg = json_object())) {
        olm_error_set(err, "out of memory");
    }
    free(data);
    return cfg;
}

int cmd_bundle_render(int argc, char **argv)
{
    static const struct option opts[] = {
        {"install-namespace", required_argument, NULL, 'n'}, {"watch-namespace", required_argument, NULL, 'w'},
        {"config", required_argument, NULL, 'c'},            {"cert-provider", required_argument, NULL, 'p'},
        {"output", required_argument, NULL, 'o'},            {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *ns = NULL, *watch = NULL, *config_path = NULL, *format = "yaml";
    render_cert_provider provider = RENDER_CERT_OPENSHIFT_SERVICE_CA;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'n': ns = optarg; break;
        case 'w': watch = optarg; break;
        case 'c': config_path = optarg; break;
        case 'o': format = optarg; break;
        case 'p':
            if (strcmp(optarg, "openshift-service-ca") == 0)
                provider = RENDER_CERT_OPENSHIFT_SERVICE_CA;
            else if (strcmp(optarg, "cert-manager") == 0)
                provider = RENDER_CERT_MANAGER;
            else if (strcmp(optarg, "none") == 0)
                provider = RENDER_CERT_NONE;
            else {
                fprintf(stderr, "olmv1 bundle render: unknown --cert-provider \"%s\"\n", optarg);
                return 2;
            }
            break;
        case 'h': bundle_render_usage(stdout); return 0;
        default: bundle_render_usage(stderr); return 2;
        }
    }
    if (optind != argc - 1 || !ns || !*ns || (strcmp(format, "yaml") != 0 && strcmp(format, "json") != 0)) {
        bundle_render_usage(stderr);
        return 2;
    }
    olm_error err;
    bundle b;
    json_t *cfg = NULL, *objects = NULL;
    bundle_config bc = {0};
    int rc = 1;
    if (bundle_load_dir(argv[optind], &b, &err) < 0) {
        fprintf(stderr, "olmv1 bundle render: %s\n", err.msg);
        return 1;
    }
    if (config_path && !(cfg = read_config(config_path, &err))) {
        fprintf(stderr, "olmv1 bundle render: %s\n", err.msg);
        goto done;
    }
    if (watch) {
        if (!cfg && !(cfg = json_object())) {
            fprintf(stderr, "olmv1 bundle render: out of memory\n");
            goto done;
        }
        if (json_is_object(cfg) && json_object_set_new(cfg, "watchNamespace", json_string(watch)) < 0) {
            fprintf(stderr, "olmv1 bundle render: out of memory\n");
            goto done;
        }
    }
    if (bundle_config_validate(bundle_install_modes(b.csv), ns, cfg, &bc, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        goto done;
    }
    render_options ro = {ns, bc.watch_namespace, bc.deployment_config, provider};
    if (render_bundle(&b, &ro, &objects, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        goto done;
    }
    if (render_sort_objects(objects) < 0) {
        fprintf(stderr, "olmv1 bundle render: out of memory sorting the objects\n");
        goto done;
    }
    if ((strcmp(format, "json") == 0 ? write_json(objects, stdout) : write_yaml(objects, stdout)) < 0 ||
        fflush(stdout) != 0) {
        rc = cli_stdout_failed("bundle render");
        goto done;
    }
    rc = 0;
done:
    json_decref(objects);
    json_decref(cfg);
    bundle_config_free(&bc);
    bundle_free(&b);
    return rc;
}
