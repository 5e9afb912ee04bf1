"""`olmv1 catalog template basic|semver`, `catalog render IMAGE`, `catalog list ... IMAGE` with the
test registry (issue 14, part 6).  Bundles are pushed with `olmv1 bundle push`; templates name them
by digest; the rendered catalogs must validate, and survive a push and a render from the image.
Only the registry is used (no daemons)."""

import json
import os

import pytest

import olmv1_bundles
import olmv1_cli as cli
from conftest import unique

VERSIONS = ("1.0.0", "1.0.1", "1.1.0", "2.0.0")


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    registry = os.environ.get("OLMV1_REGISTRY")
    if not registry:
        pytest.fail("OLMV1_REGISTRY is not set; run through e2e/run-tests.sh")
    work = tmp_path_factory.mktemp("cli-catalog")
    pkg = unique("tmpl")
    images = {}
    for v in VERSIONS:
        d = olmv1_bundles.write_bundle(work / pkg, pkg, v)
        images[v] = cli.ok("bundle", "push", "-q", d, f"{registry}/e2e/{pkg}-bundle:v{v}").strip()
    return {"work": work, "pkg": pkg, "images": images, "registry": registry}


def blobs(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def write(path, doc):
    path.write_text(json.dumps(doc))
    return path


def test_basic_template(bundles):
    p, img = bundles["pkg"], bundles["images"]
    t = write(bundles["work"] / "basic.json", {"schema": "olm.template.basic", "entries": [
        {"schema": "olm.package", "name": p, "defaultChannel": "stable"},
        {"schema": "olm.channel", "name": "stable", "package": p,
         "entries": [{"name": f"{p}.v1.0.0"}, {"name": f"{p}.v1.0.1", "replaces": f"{p}.v1.0.0"}]},
        {"schema": "olm.bundle", "image": img["1.0.0"]},
        {"schema": "olm.bundle", "image": img["1.0.1"]}]})
    out = cli.ok("catalog", "template", "basic", t)
    b = blobs(out)
    assert [x["schema"] for x in b] == ["olm.package", "olm.channel", "olm.bundle", "olm.bundle"]
    first = b[2]
    assert (first["name"], first["package"], first["image"]) == (f"{p}.v1.0.0", p, img["1.0.0"])
    props = {x["type"]: x["value"] for x in first["properties"]}
    assert props["olm.package"] == {"packageName": p, "version": "1.0.0"}
    assert "olm.csv.metadata" in props
    assert first["relatedImages"][0] == {"name": "", "image": img["1.0.0"]}
    d = bundles["work"] / "basic-out"
    d.mkdir()
    (d / "catalog.json").write_text(out)
    assert "valid" in cli.ok("catalog", "validate", d)
    # YAML and JSON outputs hold the same blobs.
    import yaml
    assert [x for x in yaml.safe_load_all(cli.ok("catalog", "template", "basic", t, "-o", "yaml")) if x] == b


def test_semver_template_push_render_list(bundles):
    p, img = bundles["pkg"], bundles["images"]
    t = write(bundles["work"] / "semver.json", {
        "schema": "olm.semver", "generateMajorChannels": True, "generateMinorChannels": True,
        "stable": {"bundles": [{"image": img[v]} for v in ("1.0.0", "1.0.1", "1.1.0")]},
        "candidate": {"bundles": [{"image": img["2.0.0"]}]}})
    out = cli.ok("catalog", "template", "semver", t)
    b = blobs(out)
    (pkg,) = [x for x in b if x["schema"] == "olm.package"]
    assert pkg == {"schema": "olm.package", "name": p, "defaultChannel": "stable-v1.1"}
    chans = {x["name"]: x["entries"] for x in b if x["schema"] == "olm.channel"}
    assert sorted(chans) == ["candidate-v1", "candidate-v1.0", "candidate-v1.1", "candidate-v2", "candidate-v2.0",
                             "stable-v1", "stable-v1.0", "stable-v1.1"]
    # The highest patch of each minor skips that minor's other patches and replaces the previous minor's head.
    assert chans["stable-v1"] == [{"name": f"{p}.v1.0.0"},
                                  {"name": f"{p}.v1.0.1", "skips": [f"{p}.v1.0.0"]},
                                  {"name": f"{p}.v1.1.0", "replaces": f"{p}.v1.0.1"}]
    assert [e["name"] for e in chans["candidate-v1"]] == [f"{p}.v{v}" for v in ("1.0.0", "1.0.1", "1.1.0")]
    assert chans["candidate-v2"] == [{"name": f"{p}.v2.0.0"}]
    # Push it as a catalog image; render and list it from the registry.
    d = bundles["work"] / "semver-out"
    d.mkdir()
    (d / "catalog.json").write_text(out)
    ref = cli.ok("catalog", "push", "-q", d, f"{bundles['registry']}/e2e/{p}-catalog:semver").strip()
    assert cli.ok("catalog", "render", ref) == out
    rows = cli.table(cli.ok("catalog", "list", "channels", ref))
    heads = {r["CHANNEL"]: (r["HEAD VERSION"], r["ENTRIES"]) for r in rows}
    assert heads["stable-v1"] == ("1.1.0", "3") and heads["candidate-v2"] == ("2.0.0", "1")
    (row,) = cli.table(cli.ok("catalog", "list", "packages", ref))
    assert row["DEFAULT CHANNEL"] == "stable-v1.1"
    vers = [r["VERSION"] for r in cli.table(cli.ok("catalog", "list", "bundles", ref, "--package", p))]
    assert vers == ["2.0.0", "1.1.0", "1.0.1", "1.0.0"]
    assert cli.fails(3, "catalog", "list", "bundles", ref, "--package", "nope") == \
        'olmv1 catalog list: no package "nope" in the catalog'


def test_template_errors(bundles, tmp_path):
    t = write(tmp_path / "odd.json", {"schema": "olm.template.fancy", "entries": []})
    line = cli.fails(cli.EXIT_INVALID, "catalog", "template", "basic", t)
    assert line == f'olmv1 catalog template: {t}: unknown template schema "olm.template.fancy" ' \
                   '(olm.template.basic or olm.semver)'
    s = write(tmp_path / "semver.json", {"schema": "olm.semver", "stable": {"bundles": []}})
    assert "is not a basic template" in cli.fails(cli.EXIT_INVALID, "catalog", "template", "basic", s)
    assert "lists no bundles" in cli.fails(cli.EXIT_INVALID, "catalog", "template", "semver", s)
    gone = write(tmp_path / "gone.json", {"schema": "olm.semver", "stable": {"bundles": [
        {"image": "127.0.0.1:1/e2e/nothing:v1"}]}})
    assert "pulling bundle image 127.0.0.1:1/e2e/nothing:v1" in cli.fails(cli.EXIT_UNREACHABLE, "catalog",
                                                                           "template", "semver", gone)
    cli.fails(1, "catalog", "template", "basic", tmp_path / "missing.yaml")
    cli.fails(cli.EXIT_USAGE, "catalog", "template", "fancy", t)
    # A render that cannot pull, and a path that is no directory.
    cli.fails(5, "catalog", "render", "127.0.0.1:1/e2e/nothing:v1")
    cli.fails(1, "catalog", "list", "packages", tmp_path / "nodir")
