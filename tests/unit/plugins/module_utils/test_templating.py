# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""rendering/templating.py on its own: the helpers templates call (to_mpi_args, to_env, lib), the library's errors, the
fingerprint of the sources, and the caches of renders and of the names a template reads (in the process and in the
per-user directory), each rule on both sides. Written for what the mutation run of the module (issue 47, fourth
round) found untested: the other tests render through a cache directory that earlier runs had already filled."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json
import os

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ParseError, RenderError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import templating


@pytest.fixture
def sources(tmp_path):
    """(templates dir, _lib dir, cache dir), empty; the process-wide render cache emptied for the test."""
    for name in ("templates", "_lib", "cache"):
        (tmp_path / name).mkdir()
    return tmp_path / "templates", tmp_path / "_lib", tmp_path / "cache"


@pytest.fixture(autouse=True)
def fresh_renders(monkeypatch):
    monkeypatch.setattr(templating, "_RENDERED", {})


def library_of(sources, cache=True):
    templates, lib, cache_dir = sources
    library = templating.TemplateLibrary(str(templates), str(lib))
    library._cache_dir = str(cache_dir) if cache else None  # pylint: disable=protected-access
    return library


def cached(cache_dir, prefix):
    return sorted(name for name in os.listdir(str(cache_dir)) if name.startswith(prefix))


# --- the helpers ----------------------------------------------------------------------------------------------------


def test_to_mpi_args_gives_a_flag_and_a_pair_per_variable():
    env = [{"name": "A", "value": "1"}, {"name": "B", "value": 'say "hi"'}, {"name": "C", "value": "3"}]
    assert templating.to_mpi_args_yaml(env) == '- -x\n- "A=1"\n- -x\n- "B=say \\"hi\\""\n- -x\n- "C=3"'
    assert templating.to_mpi_args_yaml("- {name: A, value: '1'}\n- {name: B, value: '2'}\n") == '- -x\n- "A=1"\n- -x\n- "B=2"'
    assert templating.to_mpi_args_yaml([]) == ""


def test_to_env_gives_a_name_and_a_quoted_value_per_variable():
    text = templating.to_env_yaml({"A": "1", "B": True, "C": False, "D": 3, "E": 'x "y"'})
    assert text == '- name: A\n  value: "1"\n- name: B\n  value: "true"\n- name: C\n  value: "false"\n- name: D\n  value: "3"\n- name: E\n  value: "x \\"y\\""'
    assert templating.to_env_yaml([("A", "1"), ("A", "2")]) == '- name: A\n  value: "1"\n- name: A\n  value: "2"'
    assert templating.to_env_yaml({}) == ""


def test_a_template_keeps_its_trailing_newline_and_lib_drops_exactly_one(sources):
    templates, lib, dummy = sources
    (templates / "t.txt").write_text("[{{ lib('f.txt') }}]\n")
    (lib / "f.txt").write_text("a\n\n")
    assert library_of(sources).render("t.txt", {}) == "[a\n]\n"


@pytest.mark.parametrize("exception", [OSError("no temp dir"), RuntimeError("no temp dir")])
def test_without_a_usable_temp_dir_templates_are_compiled_every_time(sources, monkeypatch, exception):
    def refuse():
        raise exception

    monkeypatch.setattr(templating.jinja2, "FileSystemBytecodeCache", refuse)
    assert templating._bytecode_cache() is None  # pylint: disable=protected-access
    templates = sources[0]
    (templates / "t.yaml").write_text("a: {{ x }}\n")
    library = templating.TemplateLibrary(str(templates), str(sources[1]))
    assert library._cache_dir is None  # pylint: disable=protected-access
    assert library.render_yaml("t.yaml", {"x": 1}) == {"a": 1}


# --- errors ---------------------------------------------------------------------------------------------------------


def test_errors_name_the_file(sources):
    templates, lib, dummy = sources
    library = library_of(sources)
    with pytest.raises(RenderError) as caught:
        library.render("missing.yaml", {})
    assert str(caught.value) == "template templates/missing.yaml does not exist (looked in %s)" % templates
    (lib / "bad.yaml").write_text("a: [\n")
    with pytest.raises(RenderError) as caught:
        library.lib_yaml("bad.yaml")
    assert str(caught.value).startswith("_lib/bad.yaml is not valid YAML: ")


def test_without_pyyaml_reading_and_rendering_name_the_file(monkeypatch, tmp_path):
    monkeypatch.setattr(templating, "HAS_YAML", False)
    with pytest.raises(ParseError) as caught:
        templating.read_yaml_file(str(tmp_path / "x.yaml"), "thresholds")
    assert str(caught.value) == "PyYAML is required to read %s; install it on the controller" % (tmp_path / "x.yaml")
    with pytest.raises(RenderError) as caught:
        templating.load_yaml("a: 1", "rendered templates/t.yaml")
    assert str(caught.value) == "PyYAML is required to render rendered templates/t.yaml; install it on the controller"


def test_a_data_file_that_is_missing_or_no_yaml_is_named(tmp_path):
    (tmp_path / "bad.yaml").write_text("a: [\n")
    with pytest.raises(ParseError) as caught:
        templating.read_yaml_file(str(tmp_path / "bad.yaml"), "thresholds")
    assert str(caught.value).startswith("thresholds %s is not valid YAML: " % (tmp_path / "bad.yaml"))
    with pytest.raises(ParseError) as caught:
        templating.read_yaml_file(str(tmp_path / "none.yaml"), "thresholds")
    assert str(caught.value).startswith("cannot read thresholds %s: " % (tmp_path / "none.yaml"))
    (tmp_path / "good.yaml").write_text("a: [1]\n")
    assert templating.read_yaml_file(str(tmp_path / "good.yaml"), "thresholds") == {"a": [1]}


def test_render_errors_name_the_file_at_fault(sources):
    templates, lib, dummy = sources
    library = library_of(sources)
    with pytest.raises(RenderError) as caught:
        library.lib_yaml("none.yaml")
    assert str(caught.value) == "data file _lib/none.yaml does not exist (looked in %s)" % lib
    (templates / "u.yaml").write_text("a: {{ nothing }}\n")
    with pytest.raises(RenderError) as caught:
        library.render("u.yaml", {})
    assert str(caught.value) == "templates/u.yaml: undefined variable: 'nothing' is undefined"
    (templates / "i.yaml").write_text('{% import "_lib/none.j2" as m %}a: 1\n')
    with pytest.raises(RenderError) as caught:
        library.render("i.yaml", {})
    assert str(caught.value) == "templates/i.yaml does not exist: _lib/none.j2"
    # a syntax error in an imported macro file names that file, not the template importing it
    (lib / "m.j2").write_text("{% macro x() %}{% if %}{% endmacro %}\n")
    (templates / "m.yaml").write_text('{% import "_lib/m.j2" as m %}a: 1\n')
    with pytest.raises(RenderError) as caught:
        library.render("m.yaml", {})
    assert str(caught.value).startswith("%s line 1: template syntax error: " % (lib / "m.j2"))
    with pytest.raises(RenderError) as caught:
        library.variables_read("templates/none.yaml")
    assert str(caught.value) == "templates/none.yaml does not exist: templates/none.yaml"
    (templates / "s.yaml").write_text("a: {% if %}\n")
    with pytest.raises(RenderError) as caught:
        library.variables_read("templates/s.yaml")
    assert str(caught.value).startswith("templates/s.yaml line 1: template syntax error: ")


def test_list_templates_lists_the_yaml_files_of_a_directory_by_name(sources):
    templates = sources[0]
    (templates / "d").mkdir()
    for name in ("b.yaml", "a.yaml", "notes.txt"):
        (templates / "d" / name).write_text("[]\n")
    (templates / "d" / "c.yaml").mkdir()
    assert library_of(sources).list_templates("d") == ["d/a.yaml", "d/b.yaml"]
    assert library_of(sources).list_templates("none") == []


# --- the fingerprint of the sources ----------------------------------------------------------------------------------


def test_the_fingerprint_skips_a_file_it_cannot_read_and_still_sees_the_others(tmp_path):
    # A dangling link sorting first (os.stat fails on it), then a source that changes: the fingerprint changes.
    os.symlink(str(tmp_path / "nowhere"), str(tmp_path / "a-dangling"))
    (tmp_path / "b.yaml").write_text("x\n")
    before = templating._fingerprint(str(tmp_path))  # pylint: disable=protected-access
    (tmp_path / "b.yaml").write_text("xy\n")
    assert templating._fingerprint(str(tmp_path)) != before  # pylint: disable=protected-access


# --- the names a template reads ---------------------------------------------------------------------------------------


def test_a_fragment_read_by_lib_adds_its_names_but_those_the_including_file_sets(sources):
    templates, lib, cache_dir = sources
    (templates / "t.yaml").write_text("{% set x = 1 %}{% set w = 2 %}{{ lib('f.yaml') }} {{ a }}\n")
    (lib / "f.yaml").write_text("{{ x }} {{ y }} {{ lib('g.yaml') }}\n")
    (lib / "g.yaml").write_text("{{ z }}\n")
    assert library_of(sources).variables_read("templates/t.yaml") == {"a", "y", "z"}
    assert library_of(sources, cache=False).variables_read("templates/t.yaml") == {"a", "y", "z"}


def test_the_names_read_are_kept_in_the_cache_directory_and_read_back_from_it(sources):
    templates, dummy, cache_dir = sources
    (templates / "t.yaml").write_text("{{ a }}\n")
    assert library_of(sources).variables_read("templates/t.yaml") == {"a"}
    (name,) = cached(cache_dir, "gpufleet-burnin-reads-")
    assert json.loads((cache_dir / name).read_text()) == ["a"]
    # another process (a new library over the same sources) takes the kept names without analysing the template
    (cache_dir / name).write_text('["kept"]')
    assert library_of(sources).variables_read("templates/t.yaml") == {"kept"}
    # a kept file that is no JSON, or no list of names, is made again
    for text in ("[not json", '{"a": 1}', '["a", 1]'):
        (cache_dir / name).write_text(text)
        assert library_of(sources).variables_read("templates/t.yaml") == {"a"}


def test_a_cache_directory_that_cannot_be_written_is_no_error(sources, tmp_path):
    templates = sources[0]
    (templates / "t.yaml").write_text("a: {{ a }}\n")
    (tmp_path / "file").write_text("")
    library = library_of(sources)
    library._cache_dir = str(tmp_path / "file" / "cache")  # pylint: disable=protected-access
    assert library.variables_read("templates/t.yaml") == {"a"}
    assert library.render_yaml("t.yaml", {"a": 1}) == {"a": 1}


# --- the renders' cache -----------------------------------------------------------------------------------------------


def test_a_render_is_kept_in_the_cache_directory_and_read_back_from_it(sources):
    templates, dummy, cache_dir = sources
    (templates / "t.yaml").write_text("a: {{ a }}\n")
    assert library_of(sources).render_yaml("t.yaml", {"a": 1}) == {"a": 1}
    (name,) = cached(cache_dir, "gpufleet-burnin-render-")
    assert json.loads((cache_dir / name).read_text()) == {"a": 1}
    # another process: the render is read from the directory, not made again
    templating._RENDERED.clear()  # pylint: disable=protected-access
    (cache_dir / name).write_text('{"a": "kept"}')
    assert library_of(sources).render_yaml("t.yaml", {"a": 1}) == {"a": "kept"}
    # a kept file that is no JSON is made again and replaced
    templating._RENDERED.clear()  # pylint: disable=protected-access
    (cache_dir / name).write_text("{not json")
    assert library_of(sources).render_yaml("t.yaml", {"a": 1}) == {"a": 1}
    assert json.loads((cache_dir / name).read_text()) == {"a": 1}


def test_a_library_renders_from_its_first_look_at_the_sources_in_the_process(sources):
    # render_yaml: "an instance takes the fingerprint once, at its first call: create a new one to see edited sources".
    templates = sources[0]
    (templates / "t.yaml").write_text("a: {{ a }}\n")
    library = library_of(sources, cache=False)
    assert library.render_yaml("t.yaml", {"a": 1}) == {"a": 1}
    (templates / "t.yaml").write_text("b: {{ a }}\n")
    assert library.render_yaml("t.yaml", {"a": 1}) == {"a": 1}
    assert library_of(sources, cache=False).render_yaml("t.yaml", {"a": 1}) == {"b": 1}


def test_each_render_is_a_fresh_copy(sources):
    (sources[0] / "t.yaml").write_text("a: [1]\n")
    library = library_of(sources)
    first = library.render_yaml("t.yaml", {})
    first["a"].append(2)
    assert library.render_yaml("t.yaml", {}) == {"a": [1]}


@pytest.mark.parametrize(
    "text, expected",
    [
        ("d: 2020-01-02\n", {"d": datetime.date(2020, 1, 2)}),  # a date: no JSON (TypeError)
        ("{1: a, 2: b}\n", {1: "a", 2: "b"}),  # JSON would make the keys strings
    ],
)
def test_a_render_json_cannot_hold_is_returned_as_parsed_and_not_kept(sources, text, expected):
    templates, dummy, cache_dir = sources
    (templates / "t.yaml").write_text(text)
    library = library_of(sources)
    assert library.render_yaml("t.yaml", {}) == expected
    assert library.render_yaml("t.yaml", {}) == expected
    assert cached(cache_dir, "gpufleet-burnin-render-") == []


def test_a_render_json_cannot_write_is_returned_as_parsed(sources):
    # a YAML anchor that holds itself: JSON refuses the circular reference (ValueError)
    (sources[0] / "t.yaml").write_text("&a [*a]\n")
    result = library_of(sources).render_yaml("t.yaml", {})
    assert isinstance(result, list) and result[0] is result
    assert cached(sources[2], "gpufleet-burnin-render-") == []


def test_data_json_cannot_hold_renders_without_a_cache(sources):
    templates, dummy, cache_dir = sources
    (templates / "t.yaml").write_text("a: {{ a | length }}\n")
    library = library_of(sources)
    assert library.render_yaml("t.yaml", {"a": {1, 2}}) == {"a": 2}  # a set: no JSON (TypeError)
    circular = []
    circular.append(circular)
    assert library.render_yaml("t.yaml", {"a": circular}) == {"a": 1}  # a circular list (ValueError)
    assert cached(cache_dir, "gpufleet-burnin-render-") == [] and templating._RENDERED == {}  # pylint: disable=protected-access


def test_a_new_library_reads_the_names_of_edited_sources_not_the_kept_ones(sources):
    templates = sources[0]
    (templates / "t.yaml").write_text("{{ a }}\n")
    assert library_of(sources).variables_read("templates/t.yaml") == {"a"}
    (templates / "t.yaml").write_text("{{ bb }} {{ c }}\n")
    assert library_of(sources).variables_read("templates/t.yaml") == {"bb", "c"}
    assert len(cached(sources[2], "gpufleet-burnin-reads-")) == 2


def test_equal_data_in_another_order_is_one_render(sources):
    (sources[0] / "t.yaml").write_text("a: {{ a }}\nb: {{ b }}\n")
    library = library_of(sources)
    assert library.render_yaml("t.yaml", {"a": 1, "b": 2}) == library.render_yaml("t.yaml", {"b": 2, "a": 1}) == {"a": 1, "b": 2}
    assert len(cached(sources[2], "gpufleet-burnin-render-")) == 1


def test_a_render_that_is_no_yaml_names_the_template(sources):
    (sources[0] / "t.yaml").write_text("a: [{{ a }}\n")
    with pytest.raises(RenderError) as caught:
        library_of(sources).render_yaml("t.yaml", {"a": 1})
    assert str(caught.value).startswith("rendered templates/t.yaml is not valid YAML: ")
