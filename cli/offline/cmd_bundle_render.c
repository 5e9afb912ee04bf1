/* olmv1 bundle render: a registry+v1 bundle directory to the Kubernetes objects
 * operator-controller would apply, offline (domain/render/render.h).
 *
 * Objects come out sorted by (kind, namespace, name), the order of upstream's
 * regression corpus; YAML as cli_output.h writes it. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "cli_output.h"
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
            "  --cert-provider P       openshift-service-ca (default), cert-manager, or none:\n"
            "                          webhooks without CA injection (upstream's corpus)\n"
            "  -o yaml|json            YAML documents (default) or one JSON v1 List\n"
            "\n"
            "Objects are sorted by kind, namespace and name.  Exit status: 0 rendered; 1 the\n"
            "bundle or config is rejected (the controller's message on stderr; a config error\n"
            "starts with \"invalid ClusterExtension configuration\"); 2 usage error.\n");
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
    if ((strcmp(format, "json") == 0 ? write_json(objects, stdout) : cli_write_yaml_docs(objects, stdout)) < 0 ||
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
